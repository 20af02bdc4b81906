import { afterEach, describe, expect, it } from 'vitest';
import { EmbedderSlot, type SlotRuntime } from '../../../src/services/models/embedder-slot';
import { buildOptions } from '../../../src/services/models/model-env';
import type { EmbedderSnapshot } from '../../../src/services/models/model-snapshot';
import { SettingsService } from '../../../src/services/settings';
import type { Embedder } from '../../../src/ports';
import { InMemoryRepository } from '../../support/in-memory-repository';

/** A runtime whose start the test finishes (or fails) by hand; after a failure the next start is fresh, as EmbedderRuntime's. */
class FakeRuntime implements SlotRuntime {
  readonly dimension = 4;
  disposed = false;
  private settle?: { ok: () => void; fail: (e: Error) => void };
  private started?: Promise<void>;
  constructor(readonly modelId: string) {}
  ready(): Promise<void> {
    this.started ??= new Promise<void>((ok, fail) => (this.settle = { ok, fail }));
    return this.started;
  }
  finish(): void {
    this.settle?.ok();
  }
  fail(message: string): void {
    this.settle?.fail(new Error(message));
    this.started = undefined;
  }
  dispose(): void {
    this.disposed = true;
    this.fail('disposed');
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map(() => new Float32Array(4));
  }
}

async function setup(repo = new InMemoryRepository()) {
  const settings = new SettingsService(repo);
  await settings.load();
  const states: EmbedderSnapshot['state'][] = [];
  const changes: Array<Embedder | undefined> = [];
  const runtimes: FakeRuntime[] = [];
  const slot = new EmbedderSlot(
    settings,
    { onState: (s) => states.push(s.state), onChange: (e) => changes.push(e), onSettled: () => undefined },
    (o) => {
      const r = new FakeRuntime(o.model!.id);
      runtimes.push(r);
      return r;
    },
  );
  return { repo, settings, slot, states, changes, runtimes };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

afterEach(() => {
  buildOptions.searchModelWithChat = true;
});

describe('EmbedderSlot: the memory search model comes with the first chat model', () => {
  it('loads with the first chat model, once, and loads again at the next start', async () => {
    const { repo, settings, slot, states, changes, runtimes } = await setup();
    expect(slot.initial().state).toBe('none');
    slot.withChatModel();
    slot.withChatModel();
    expect(runtimes).toHaveLength(1);
    expect(states.at(-1)).toBe('loading');
    runtimes[0].finish();
    await tick();
    expect(states.at(-1)).toBe('ready');
    expect(changes).toEqual([runtimes[0]]);
    expect(slot.embedder).toBe(runtimes[0]);
    expect(settings.value.embeddingModelId).toBe(runtimes[0].modelId);
    // Another chat model later: nothing more to load.
    slot.withChatModel();
    expect(runtimes).toHaveLength(1);

    // The next start: it loads by itself (it was loaded before, models load at start).
    const next = await setup(repo);
    expect(next.slot.initial().state).toBe('none');
    next.slot.resume();
    expect(next.runtimes).toHaveLength(1);
    next.runtimes[0].finish();
    await tick();
    expect(next.states.at(-1)).toBe('ready');
  });

  it('does not load at start before it was ever loaded, nor when models do not load by themselves', async () => {
    const fresh = await setup();
    fresh.slot.resume();
    expect(fresh.runtimes).toHaveLength(0);
    const { repo, settings } = fresh;
    await settings.update({ embeddingModelId: 'Xenova/bge-small-en-v1.5', autoLoadModel: false });
    const next = await setup(repo);
    next.slot.resume();
    expect(next.runtimes).toHaveLength(0);
  });

  it('a cancel stops the download, says off, and it does not come back by itself (also after a reload) until turned on', async () => {
    const { repo, settings, slot, states, changes, runtimes } = await setup();
    slot.withChatModel();
    await slot.turnOff();
    expect(runtimes[0].disposed).toBe(true);
    await tick();
    expect(states.at(-1)).toBe('off');
    expect(slot.embedder).toBeUndefined();
    expect(changes).toEqual([]);
    expect(settings.value.memorySearchModel).toBe(false);
    slot.withChatModel();
    expect(runtimes).toHaveLength(1);

    const next = await setup(repo);
    expect(next.slot.initial().state).toBe('off');
    next.slot.withChatModel();
    next.slot.resume();
    expect(next.runtimes).toHaveLength(0);
    const on = next.slot.turnOn();
    await tick();
    expect(next.runtimes).toHaveLength(1);
    next.runtimes[0].finish();
    await on;
    expect(next.states.at(-1)).toBe('ready');
    expect(next.settings.value.memorySearchModel).toBe(true);
  });

  it('a failed download says so, is not retried by the next chat model, and Retry loads it', async () => {
    const { slot, states, changes, runtimes } = await setup();
    slot.withChatModel();
    runtimes[0].fail('The download stopped because the network is unreachable.');
    await tick();
    expect(states.at(-1)).toBe('error');
    expect(changes).toEqual([]);
    slot.withChatModel();
    await tick();
    expect(states.at(-1)).toBe('error');
    const retry = slot.turnOn();
    await tick();
    expect(states.at(-1)).toBe('loading');
    runtimes.at(-1)!.finish();
    await retry;
    expect(states.at(-1)).toBe('ready');
    expect(changes).toEqual([runtimes.at(-1)]);
  });

  it('turned off while ready: no longer used (the runtime may be embedding for a job: not killed)', async () => {
    const { slot, states, changes, runtimes } = await setup();
    slot.withChatModel();
    runtimes[0].finish();
    await tick();
    await slot.turnOff();
    expect(states.at(-1)).toBe('off');
    expect(changes).toEqual([runtimes[0], undefined]);
    expect(slot.embedder).toBeUndefined();
    expect(runtimes[0].disposed).toBe(false);
    await slot.turnOn();
    expect(slot.embedder).toBe(runtimes[0]);
    expect(changes.at(-1)).toBe(runtimes[0]);
  });

  it('a build may keep it from coming along (the e2e build, unless a test asks)', async () => {
    buildOptions.searchModelWithChat = false;
    const { slot, runtimes } = await setup();
    slot.withChatModel();
    expect(runtimes).toHaveLength(0);
  });
});
