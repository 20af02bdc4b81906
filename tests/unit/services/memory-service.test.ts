// MemoryService wires the method to the store: jobs run in the background, the live index and
// graph follow every change, and the user's corrections are what retrieval sees next.
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { createMemoriseJob } from '../../../src/memory/ingest/memorise';
import { checkGraphInvariants } from '../../support/invariants';
import { until } from '../../support/until';
import { ScriptedModel } from '../memory/helpers';
import type { Session, Turn } from '../../../src/memory/types';
import type { LanguageModel } from '../../../src/ports';

const T = Date.UTC(2025, 0, 10);

/** Every user turn becomes an event; every pair of candidates is on the same topic. */
const model = () =>
  new ScriptedModel(({ kind, schemaTitle, messages }) => {
    const text = messages.map((m) => m.content).join('\n');
    if (kind === 'chat') return 'ok';
    if (schemaTitle === 'session_memories') {
      const events = [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)].map((m) => ({
        text: `The user said: ${m[2]}`,
        about: 'user',
        turns: [m[1]],
      }));
      return JSON.stringify({ events, userTraits: [], assistantTraits: [], notes: [], topics: [] });
    }
    if (schemaTitle === 'relation_labels') {
      const n = (text.match(/^Candidate \d+/gm) ?? []).length;
      return JSON.stringify({ labels: Array.from({ length: n }, (_, i) => ({ candidate: i + 1, relation: 'SameTopic' })) });
    }
    return '{}';
  });

async function seedSession(repo: InMemoryRepository, id: string, day: number, lines: string[]) {
  const start = T + day * 86_400_000;
  const session: Session = {
    id,
    title: id,
    startedAt: start,
    lastActivityAt: start + lines.length,
    status: 'ended',
    endedAt: start + lines.length,
  };
  const turns: Turn[] = lines.map((text, i) => ({
    id: `${id}:t${i}`,
    sessionId: id,
    index: i,
    role: i % 2 ? 'assistant' : 'user',
    text,
    time: start + i,
    status: 'complete',
  }));
  await repo.apply({ sessions: [session], turns, jobs: [createMemoriseJob(id, start + 100)] });
}

async function settle(service: MemoryService, repo: InMemoryRepository) {
  service.kick();
  await until('every job done', async () => (await repo.listJobs()).every((j) => j.status === 'done'));
}

/** Resolves when the memorise run in progress, if any, has ended. */
const runEnded = (service: MemoryService) => service['runner'].settled();

describe('MemoryService', () => {
  it('waits for a model, then memorises pending sessions and keeps index and graph live', async () => {
    const repo = new InMemoryRepository();
    // Two sessions: Phase I links a memory to memories of earlier sessions (the paper's G^t).
    await seedSession(repo, 's1', 0, ['I adopted a puppy named Biscuit', 'Lovely!']);
    await seedSession(repo, 's2', 1, ['Biscuit chews my shoes', 'Oh no']);
    let llm: ScriptedModel | undefined = undefined; // no model until the test loads one
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => llm,
      () => undefined,
    );
    await service.load();
    service.kick();
    await runEnded(service);
    expect((await repo.listJobs())[0].status).toBe('pending'); // no model yet: the job waits
    llm = model();
    await settle(service, repo);
    expect(service.memories.size).toBe(2);
    expect((await repo.getSession('s1'))?.status).toBe('memorised');
    expect((await repo.getSession('s2'))?.status).toBe('memorised');
    expect(service.graph.edgeCount).toBe(1);
    expect(checkGraphInvariants(await repo.listMemories(), await repo.listEdges())).toEqual([]);
    // Retrieval sees the new memories and the session's segments.
    const hits = service.index.search('Biscuit shoes', undefined, 5);
    expect(hits.some((h) => h.unit.kind === 'memory')).toBe(true);
    expect(hits.some((h) => h.unit.kind === 'segment')).toBe(true);
  });

  it('corrections are stored and respected by the next retrieval; undo restores', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['I love kayaking on the lake', 'Nice']);
    await seedSession(repo, 's2', 1, ['The kayak is red', 'Cool']);
    const llm = model();
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => llm,
      () => undefined,
    );
    await service.load();
    await settle(service, repo);
    const [a, b] = [...service.memories.values()].sort((x, y) => x.time - y.time);

    await service.editMemory(a.id, 'The user paddles a canoe on weekends');
    expect((await repo.getMemory(a.id))?.edited).toBe(true);
    const found = (q: string) =>
      service.index
        .search(q, undefined, 5)
        .filter((h) => h.unit.kind === 'memory')
        .map((h) => h.unit.id);
    expect(found('canoe weekends')).toContain(a.id);
    expect(found('kayaking lake')).not.toContain(a.id);

    const edge = [...service.graph.edges()][0];
    await service.changeEdge(edge.id, 'Cause');
    expect((await repo.listEdges())[0]).toMatchObject({ relation: 'Cause', origin: 'user' });

    const undo = await service.deleteMemory(b.id);
    expect(service.memories.has(b.id)).toBe(false);
    expect(await repo.listEdges()).toEqual([]);
    expect(found('kayak red')).not.toContain(b.id);
    await service.applyLive(undo!);
    expect(service.memories.has(b.id)).toBe(true);
    expect(service.graph.edgeCount).toBe(1);
    expect(found('kayak red')).toContain(b.id);
  });

  it('a failed job gets a fresh round of attempts at the next start', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['hello there', 'hi']);
    const [job] = await repo.listJobs();
    await repo.apply({ jobs: [{ ...job, status: 'failed', attempts: 3, lastError: 'boom' }] });
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => model(),
      () => undefined,
    );
    await service.retryFailedJobs();
    expect((await repo.listJobs())[0]).toMatchObject({ status: 'pending', attempts: 0 });
  });
});

describe('MemoryService.deleteSession', () => {
  it('deleting a chat while its memorise job waits on the model leaves nothing of it, and no error', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['I adopted a puppy named Biscuit', 'Lovely!']);
    await seedSession(repo, 's2', 1, ['My sister moved to Lyon', 'Nice']);
    const inner = model();
    let started!: () => void;
    const summarising = new Promise<void>((r) => (started = r));
    // The first summarising call hangs until aborted (as the real worker does).
    let first = true;
    const llm = {
      modelId: inner.modelId,
      chat: inner.chat.bind(inner),
      json: (messages: Parameters<typeof inner.json>[0], schema: Parameters<typeof inner.json>[1], o?: { signal?: AbortSignal }) => {
        if (!first) return inner.json(messages, schema);
        first = false;
        started();
        return new Promise<string>((_, reject) => o?.signal?.addEventListener('abort', () => reject(o.signal!.reason), { once: true }));
      },
    };
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => llm,
      () => undefined,
    );
    const errors: string[] = [];
    service.on('error', ({ message }) => errors.push(message));
    await service.load();
    service.kick();
    await summarising;
    const applied = await service.deleteSession('s1', { deleteMemories: false });
    expect(applied.deleteSessions).toEqual(['s1']);
    await settle(service, repo);
    expect(await repo.getSession('s1')).toBeUndefined();
    expect(await repo.listTurns('s1')).toEqual([]);
    expect(await repo.listSegmentsBySession('s1')).toEqual([]);
    expect((await repo.listJobs()).map((j) => j.sessionId)).toEqual(['s2']);
    expect((await repo.listMemories()).every((m) => m.sessionId === 's2')).toBe(true);
    expect(service.memories.size).toBe(1); // s2 was memorised after the delete
    expect(errors).toEqual([]);
    expect(checkGraphInvariants(await repo.listMemories(), await repo.listEdges())).toEqual([]);
  });

  it('a model call that ignores the abort: the step it finishes is deleted with the chat', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['I adopted a puppy named Biscuit', 'Lovely!']);
    const inner = model();
    let started!: () => void;
    const summarising = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const llm = {
      modelId: inner.modelId,
      chat: inner.chat.bind(inner),
      json: async (messages: Parameters<typeof inner.json>[0], schema: Parameters<typeof inner.json>[1]) => {
        started();
        await gate; // answers after the delete asked, whatever the signal says
        return inner.json(messages, schema);
      },
    };
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => llm,
      () => undefined,
    );
    await service.load();
    service.kick();
    await summarising;
    // deleteSession stops the job before it returns (exclusive() cancels first): the call answers after that.
    const deleting = service.deleteSession('s1', { deleteMemories: false });
    release();
    await deleting;
    expect(await repo.listMemories()).toEqual([]);
    expect(await repo.listJobs()).toEqual([]);
    expect(service.memories.size).toBe(0);
  });

  it('keeps the memories of a deleted chat when asked (their sources are gone), or deletes them', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['I adopted a puppy named Biscuit', 'Lovely!', 'Biscuit chews my shoes', 'Oh no']);
    await seedSession(repo, 's2', 1, ['Biscuit learned to sit', 'Good dog']);
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => model(),
      () => undefined,
    );
    await service.load();
    await settle(service, repo);
    const kept = [...service.memories.values()].filter((m) => m.sessionId === 's1');
    expect(kept.length).toBe(2);
    expect(service.memoriesOfSession('s1')).toBe(2);
    const segs = await repo.listSegmentsBySession('s1');
    expect(segs.length).toBeGreaterThan(0);

    await service.deleteSession('s1', { deleteMemories: false });
    expect((await repo.listMemories()).filter((m) => m.sessionId === 's1').map((m) => m.id)).toEqual(kept.map((m) => m.id));
    expect(await repo.getTurns(kept[0].sourceTurnIds)).toEqual([]); // "source deleted"
    expect(await repo.listSegmentsBySession('s1')).toEqual([]);
    for (const s of segs) expect(service.index.has(s.id)).toBe(false);

    await service.deleteSession('s2', { deleteMemories: true });
    const left = await repo.listMemories();
    expect(left.every((m) => m.sessionId === 's1')).toBe(true);
    expect(service.memories.size).toBe(left.length);
    expect(checkGraphInvariants(left, await repo.listEdges())).toEqual([]);
    expect(service.graph.size).toBe(left.length);
  });
});

describe('MemoryService in two tabs', () => {
  it("another tab's correction during a summarising call: the call is not thrown away, and the correction is seen", async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['I love kayaking on the lake', 'Nice']);
    const plain = model();
    let gate: (() => void) | undefined;
    let summaryCalls = 0;
    let released = false;
    // Tab A's model: the second session's summarising call waits until the test lets it answer.
    const gated = new ScriptedModel(async (call) => {
      if (call.schemaTitle === 'session_memories' && call.messages.some((m) => m.content.includes('rye bread'))) {
        summaryCalls++;
        if (!released) await new Promise<void>((resolve) => (gate = resolve));
      }
      return plain.json(call.messages, { title: call.schemaTitle });
    });
    const tabA = new MemoryService(
      repo,
      new SettingsService(repo),
      () => gated,
      () => undefined,
    );
    await tabA.load();
    await settle(tabA, repo);
    const [kayak] = [...tabA.memories.values()];

    await seedSession(repo, 's2', 1, ['I baked rye bread today', 'Yum']);
    tabA.kick();
    await until('the summarising call started', () => gate !== undefined);

    // Tab B corrects a memory while A's call is in flight; A hears of it over the BroadcastChannel.
    const tabB = new MemoryService(
      repo,
      new SettingsService(repo),
      () => undefined,
      () => undefined,
    );
    await tabB.load();
    await tabB.editMemory(kayak.id, 'The user paddles a canoe on weekends');
    // A has heard of it (it catches up once its run ends) before its call answers.
    await until('tab A hears of the edit', () => tabA['stale']);
    released = true;
    gate!();
    await settle(tabA, repo);
    await until('tab A catches up', () => tabA.memories.get(kayak.id)?.text === 'The user paddles a canoe on weekends');

    expect(summaryCalls).toBe(1);
    expect((await repo.getSession('s2'))?.status).toBe('memorised');
    expect(tabA.memories.get(kayak.id)?.text).toBe('The user paddles a canoe on weekends');
    expect([...tabA.memories.values()].some((m) => m.text.includes('rye bread'))).toBe(true);
    expect(checkGraphInvariants(await repo.listMemories(), await repo.listEdges())).toEqual([]);
  });
});

describe('MemoryService and the topic-nouns switch', () => {
  it('builds the index with topic nouns when the switch is on, and rebuilds it when the switch changes', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['My children love the zoo', 'Nice']);
    const settings = new SettingsService(repo);
    const llm = model();
    const service = new MemoryService(
      repo,
      settings,
      () => llm,
      () => undefined,
    );
    await service.load();
    await settle(service, repo);
    expect(service.topicsIndexed).toBe(false);
    const query = { dialogue: [{ role: 'user' as const, text: 'How is your child?', time: T + 5 * 86_400_000 }], now: T + 5 * 86_400_000 };
    const found = () =>
      service.index.search(query.dialogue[0].text, undefined, 5, { topics: settings.value.memory.topicNouns }).map((h) => h.unit.text);
    expect(found()).toEqual([]);

    await settings.update({ memory: { topicNouns: true } });
    await service.settingsChanged();
    expect(service.topicsIndexed).toBe(true);
    // "child" meets "children" through the nouns' lemmas, which the words alone do not.
    expect(found()).toContain('The user said: My children love the zoo');

    await settings.update({ memory: { topicNouns: false } });
    await service.settingsChanged();
    expect(service.topicsIndexed).toBe(false);
    expect(found()).toEqual([]);
  });
});

describe('MemoryService when the chat model changes', () => {
  it('a call that never ends is stopped; the job runs again with the new model and no failed attempt is counted', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['I adopted a puppy named Biscuit', 'Lovely!']);
    const stuckSignals: AbortSignal[] = [];
    // A small model stuck in JSON mode: its answer never ends (until the call is aborted).
    const stuck: LanguageModel = {
      modelId: 'stuck-model',
      chat: async () => '',
      json: (_messages, _schema, options) =>
        new Promise<string>((_, reject) => {
          stuckSignals.push(options!.signal!);
          options!.signal!.addEventListener('abort', () => reject(options!.signal!.reason));
        }),
    };
    let llm: LanguageModel = stuck;
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => llm,
      () => undefined,
    );
    await service.load();
    service.kick();
    await until('the stuck call', () => stuckSignals.length > 0);
    expect(stuckSignals).toHaveLength(1);
    // The user picks another model (what Tealeaf does on ModelService's 'llm' event).
    llm = model();
    service.modelChanged(llm);
    await until('the job done', async () => (await repo.listJobs()).every((j) => j.status === 'done'));
    const [job] = await repo.listJobs();
    expect(job.status).toBe('done');
    expect(job.attempts).toBe(0);
    expect(job.lastError).toBeUndefined();
    expect(stuckSignals[0].aborted).toBe(true);
    expect(stuckSignals).toHaveLength(1);
    expect([...service.memories.values()].map((m) => m.text)).toEqual(['The user said: I adopted a puppy named Biscuit']);
  });

  it('the same model again (a settings echo) does not stop the job', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', 0, ['I adopted a puppy named Biscuit', 'Lovely!']);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inner = model();
    let aborted = false;
    let calling!: () => void;
    const called = new Promise<void>((r) => (calling = r));
    const slow: LanguageModel = {
      modelId: 'slow',
      chat: (m, o) => inner.chat(m, o),
      json: async (m, s, o) => {
        o?.signal?.addEventListener('abort', () => (aborted = true));
        calling();
        await gate;
        return inner.json(m, s, o);
      },
    };
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => slow,
      () => undefined,
    );
    await service.load();
    service.kick();
    await called; // the job is calling the model
    service.modelChanged(slow);
    release();
    await settle(service, repo);
    expect(aborted).toBe(false);
    expect((await repo.listJobs())[0].attempts).toBe(0);
  });
});
