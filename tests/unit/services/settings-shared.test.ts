// The settings are one state shared by every tab and job. Two SettingsService
// instances on one store stand for two tabs; a write patches only its keys, in one transaction.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, SettingsService, patchSettingsRecord, sanitiseSettings, type AppSettings } from '../../../src/services/settings';
import { MemoryService } from '../../../src/services/memory/memory';
import { IdbRepository } from '../../../src/store/repository';
import { createMemoriseJob } from '../../../src/memory/ingest/memorise';
import { DEFAULT_MEMORY_SETTINGS, type MemorySettings } from '../../../src/memory/settings';
import type { Repository } from '../../../src/ports';
import type { Session, Turn } from '../../../src/memory/types';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { until as waitUntil } from '../../support/until';
import { ScriptedModel, type ScriptedCall } from '../memory/helpers';
import { freshFactory } from '../store/helpers';

const T = Date.UTC(2025, 0, 10);
const open: SettingsService[] = [];

afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

/** A tab's settings on `repo`; `db` undefined: a tab that hears nothing from the others. */
function tab(repo: Repository, db?: string): SettingsService {
  const s = new SettingsService(repo, db === undefined ? {} : { db });
  open.push(s);
  return s;
}

/** Waits on the condition, for as long as it takes (tests/support/until.ts). */
const until = (check: () => boolean | Promise<boolean>, what: string) => waitUntil(what, check);

/** Resolves when a listener opened now hears the settings message about `db` (the tabs' channel). */
function heard(db: string): Promise<void> {
  const probe = new BroadcastChannel('tealeaf-settings');
  return new Promise((resolve) => {
    probe.onmessage = (e: MessageEvent<{ db?: string }>) => {
      if (e.data?.db !== db) return;
      probe.close();
      resolve();
    };
  });
}

/** Two connections to one fake IndexedDB database: two tabs of the same origin. */
async function twoConnections(name = 'tealeaf'): Promise<[IdbRepository, IdbRepository]> {
  const factory = freshFactory();
  return [await IdbRepository.open({ factory, name }), await IdbRepository.open({ factory, name })];
}

/** Every setting with a valid value other than its default (a new key must be added here: a type error otherwise). */
const ELSEWHERE: Required<AppSettings> = {
  idleGapMinutes: 5,
  chatModelId: 'chat-model',
  embeddingModelId: 'embedding-model',
  memorySearchModel: false,
  pendingModelId: 'pending-model',
  autoLoadModel: false,
  modelMirror: 'https://mirror.example',
  serverUrl: 'http://localhost:1234',
  serverModel: 'server-model',
  systemPrompt: 'You are Mabel.',
  temperature: 1.5,
  memoryUse: false,
  memoryCreation: false,
  modelChecks: {
    'local-server:qwen2.5:0.5b': {
      version: 1,
      verdict: 'weak',
      checks: [{ id: 'summary-repeats', passed: false, reason: 'it repeated items' }],
      mode: 'words',
      canSwitch: true,
      switched: true,
      at: 1_700_000_000_000,
      label: 'qwen2.5:0.5b',
    },
  },
  memory: {
    relationAwareLinking: false,
    refinement: false,
    retrievalMode: 'plain-topk',
    k: 7,
    j: 5,
    sameSessionCandidates: !DEFAULT_MEMORY_SETTINGS.sameSessionCandidates,
    similarityThreshold: 0.8,
    lexicalSimilarityThreshold: 0.5,
    maxStepAttempts: 9,
    timelineMaxSteps: 4,
    timelineSamples: 2,
    timelineFromOldest: !DEFAULT_MEMORY_SETTINGS.timelineFromOldest,
    queryTurns: 5,
    contextBudgetWords: 900,
    timelineBudgetShare: 0.5,
    speakerAware: false,
    feedbackQuery: true,
    queryRouting: true,
    segmentExcerpts: true,
    personaBankShare: 0.3,
    timeDecayHalfLifeDays: 30,
    reflectiveRequery: true,
    refineWhenUnsure: !DEFAULT_MEMORY_SETTINGS.refineWhenUnsure,
    earlierInChat: !DEFAULT_MEMORY_SETTINGS.earlierInChat,
    topicNouns: true,
  } satisfies Required<MemorySettings>,
};

describe('settings shared by two tabs', () => {
  it('a write in one tab reaches the other, which emits changed', async () => {
    const [ra, rb] = await twoConnections();
    const a = tab(ra, 'tealeaf');
    const b = tab(rb, 'tealeaf');
    await a.load();
    await b.load();
    const seen: boolean[] = [];
    b.on('changed', (s) => seen.push(s.memoryCreation));
    await a.update({ memoryCreation: false });
    await until(() => b.value.memoryCreation === false, 'B hears the switch-off');
    expect(seen).toEqual([false]);
    await a.update({ memoryCreation: true, memoryUse: false });
    await until(() => b.value.memoryUse === false, 'B hears the second write');
    expect(b.value.memoryCreation).toBe(true);
  });

  it('after a backup import wrote the store, the other tabs re-read it', async () => {
    const [ra, rb] = await twoConnections();
    const a = tab(ra, 'tealeaf');
    const b = tab(rb, 'tealeaf');
    await Promise.all([a.load(), b.load()]);
    // What importBackup does: the worker writes the settings store, then this tab reloads.
    await ra.putSetting('app', { memoryUse: false, systemPrompt: 'From the backup.' });
    await a.load();
    a.announce();
    await until(() => b.value.systemPrompt === 'From the backup.', 'B re-reads');
    expect(b.value.memoryUse).toBe(false);
  });

  it('a stale tab writing another key does not turn the switches back on', async () => {
    const [ra, rb] = await twoConnections();
    const a = tab(ra, 'tealeaf');
    // B loaded before A's change and never heard of it (as every tab before the fix).
    const b = tab(rb);
    await a.load();
    await b.load();
    await a.update({ memoryCreation: false, memoryUse: false });
    expect(b.value.memoryCreation).toBe(true);
    await b.update({ chatModelId: 'llama' });
    const stored = await tab(ra).load();
    expect([stored.memoryCreation, stored.memoryUse, stored.chatModelId]).toEqual([false, false, 'llama']);
    // B's own view follows the store it just wrote to.
    expect([b.value.memoryCreation, b.value.memoryUse]).toEqual([false, false]);
  });

  it('two stale tabs writing different keys at once both keep their change', async () => {
    const [ra, rb] = await twoConnections();
    const a = tab(ra);
    const b = tab(rb);
    await a.load();
    await b.load();
    await Promise.all([a.update({ memoryUse: false }), b.update({ temperature: 1.5 }), a.update({ idleGapMinutes: 9 })]);
    const stored = await tab(ra).load();
    expect([stored.memoryUse, stored.temperature, stored.idleGapMinutes]).toEqual([false, 1.5, 9]);
  });

  it('patches the memory switches key by key', async () => {
    const [ra, rb] = await twoConnections();
    const a = tab(ra);
    const b = tab(rb);
    await a.load();
    await b.load();
    await a.update({ memory: { refinement: false, k: 5 } });
    await b.update({ memory: { topicNouns: true } });
    const stored = (await tab(rb).load()).memory;
    expect([stored.refinement, stored.k, stored.topicNouns]).toEqual([false, 5, true]);
    expect(stored.retrievalMode).toBe(DEFAULT_SETTINGS.memory.retrievalMode);
  });

  it('a tab on the demo database does not apply a message about the real one', async () => {
    const [own1, own2] = await twoConnections('tealeaf');
    const demoRepo = await IdbRepository.open({ factory: freshFactory(), name: 'tealeaf-demo' });
    let demoReads = 0;
    const read = demoRepo.getSetting.bind(demoRepo);
    demoRepo.getSetting = <T>(key: string) => (demoReads++, read<T>(key));
    const a = tab(own1, 'tealeaf');
    const b = tab(own2, 'tealeaf');
    const demo = tab(demoRepo, 'tealeaf-demo');
    await Promise.all([a.load(), b.load(), demo.load()]);
    const readsBefore = demoReads;
    // What nothing did is checked once the message has been delivered (a listener opened after the
    // tabs hears it after them) and whatever a tab started on it has finished (its queue).
    const delivered = heard('tealeaf');
    await a.update({ memoryCreation: false });
    await until(() => b.value.memoryCreation === false, 'the other real tab hears it');
    await delivered;
    await demo['queue'];
    expect(demoReads).toBe(readsBefore);
    expect(demo.value.memoryCreation).toBe(true);
    // And the other way round: the demo's write reaches neither real tab.
    const demoDelivered = heard('tealeaf-demo');
    await demo.update({ temperature: 0.1 });
    await demoDelivered;
    await Promise.all([a['queue'], b['queue']]);
    expect([a.value.temperature, b.value.temperature]).toEqual([DEFAULT_SETTINGS.temperature, DEFAULT_SETTINGS.temperature]);
  });
});

describe('every setting goes through one path', () => {
  it('every key round-trips through the stored record', () => {
    expect(sanitiseSettings(structuredClone(ELSEWHERE))).toEqual(ELSEWHERE);
    // And no key is missing from the defaults' reading either.
    expect(Object.keys(sanitiseSettings(undefined)).sort()).toEqual(Object.keys(ELSEWHERE).sort());
  });

  it('a patch of one key leaves every other key as another writer stored it', async () => {
    const keys = Object.keys(ELSEWHERE) as Array<keyof AppSettings>;
    for (const key of keys) {
      const repo = new InMemoryRepository();
      const stale = tab(repo);
      await stale.load();
      // Another tab (or a newer version of the app) wrote everything, plus a key this one does not know.
      await repo.putSetting('app', { ...structuredClone(ELSEWHERE), fromTheFuture: 42 });
      const patch = key === 'memory' ? { memory: { k: 1 } } : { [key]: DEFAULT_SETTINGS[key] ?? 'x' };
      await stale.update(patch);
      const stored = (await repo.getSetting<Record<string, unknown>>('app'))!;
      expect(stored.fromTheFuture, key).toBe(42);
      for (const other of keys.filter((k) => k !== key)) expect(stored[other], `${key} patched, ${other} kept`).toEqual(ELSEWHERE[other]);
      if (key === 'memory') expect(stored.memory).toEqual({ ...ELSEWHERE.memory, k: 1 });
    }
  });

  it('nothing but SettingsService writes the app settings (and the demo seeding, a fresh database)', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
    const writes: string[] = [];
    for (const file of files('src').filter((f) => /\.(ts|svelte)$/.test(f))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\b(putSetting|updateSetting)\s*(?:<[^>]*>)?\(\s*([^,)]+)/g)) {
        if (/^(['"`]app['"`]|KEY)$/.test(m[2].trim())) writes.push(`${file.replaceAll('\\', '/')} ${m[1]}`);
      }
    }
    expect(writes.sort()).toEqual(['src/services/settings.ts updateSetting', 'src/services/tealeaf.ts putSetting']);
  });

  it('a patch writes its own values cleaned, and unsets what it sets to undefined', () => {
    const stored = patchSettingsRecord(
      { chatModelId: 'a', pendingModelId: 'b', memory: { k: 4 } },
      { pendingModelId: undefined, temperature: 9, memory: { refinement: false } },
    );
    expect(stored).toEqual({
      chatModelId: 'a',
      pendingModelId: undefined,
      temperature: DEFAULT_SETTINGS.temperature,
      memory: { k: 4, refinement: false },
    });
  });
});

// --- jobs --------------------------------------------------------------------------------------

function answer({ kind, schemaTitle, messages }: ScriptedCall): string {
  const text = messages.map((m) => m.content).join('\n');
  if (kind === 'chat') return 'ok';
  if (schemaTitle === 'session_memories') {
    const events = [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)].map((m) => ({
      text: `You said: ${m[2]}`,
      about: 'user',
      turns: [m[1]],
    }));
    return JSON.stringify({ events, userTraits: [], assistantTraits: [], notes: [], topics: [] });
  }
  if (schemaTitle === 'relation_labels') return JSON.stringify({ labels: [] });
  return '{}';
}

async function seedSession(repo: Repository, id: string) {
  const lines = ['I adopted a puppy named Biscuit', 'Lovely!'];
  const session: Session = { id, title: id, startedAt: T, lastActivityAt: T + 2, status: 'ended', endedAt: T + 2 };
  const turns: Turn[] = lines.map((text, i) => ({
    id: `${id}:t${i}`,
    sessionId: id,
    index: i,
    role: i % 2 ? 'assistant' : 'user',
    text,
    time: T + i,
    status: 'complete',
  }));
  await repo.apply({ sessions: [session], turns, jobs: [createMemoriseJob(id, T + 100)] });
}

describe('a job in the tab that did not switch memory creation off', () => {
  for (const hears of [true, false]) {
    it(`starts no further step (${hears ? 'told by the other tab' : 'the message lost: read before each step'})`, async () => {
      const repo = new InMemoryRepository();
      await seedSession(repo, 's1');
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const llm = new ScriptedModel(answer);
      const json = llm.json.bind(llm);
      let summarising = false;
      llm.json = async (...args) => {
        summarising = true;
        await gate;
        return json(...args);
      };
      const a = tab(repo, 'tealeaf');
      const b = tab(repo, hears ? 'tealeaf' : undefined);
      const memory = new MemoryService(
        repo,
        b,
        () => llm,
        () => undefined,
      );
      // As in Tealeaf (src/services/tealeaf.ts).
      b.on('changed', (s) => (s.memoryCreation ? memory.kick() : memory.pauseJobs()));
      await Promise.all([a.load(), b.load()]);
      await memory.load();
      memory.kick();
      await until(() => summarising, 'the summarising call started');
      await a.update({ memoryCreation: false });
      if (hears) await until(() => b.value.memoryCreation === false, 'B hears it');
      release();
      await memory['runner'].settled();
      const [job] = await repo.listJobs();
      // Told at once, the step in flight is dropped; otherwise it may commit, but nothing after it starts.
      expect(job.step).toBe(hears ? 'summarise' : 'embed');
      expect(job.status).not.toBe('done');
      expect((await repo.getSession('s1'))?.status).toBe('ended');
      expect(await repo.listSegments()).toEqual([]);
      expect(llm.count()).toBe(1);
      expect(b.value.memoryCreation).toBe(false);
    });
  }
});
