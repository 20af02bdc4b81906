// Crash safety: the memorise job killed anywhere, resumed as a reload would (fresh
// index, graph and memory map rebuilt from the store), ends with exactly the graph of an
// uninterrupted run. tests/unit/memory/pipeline.test.ts already kills before each commit of a
// run without embedder or segmenter; this file goes further:
//   - the whole job (summarise, embed, link memory by memory, segment, done) with an embedder and
//     a model segmenter, so every write of every step is a kill point;
//   - kills *before* a write (the transaction never lands) and *after* it (it landed, but the tab
//     closed before the job learnt so and updated its in-memory state);
//   - kills in the middle of a model or embedder call (AbortSignal, as a closing tab aborts);
//   - several kills in a row at random points (property test).
// Compared: memories, edges, segments, vectors, session status, job state; and no duplicates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { killableRepo, Killed, type KillMode } from '../../support/killable-repo';
import { createMemoriseJob, memoryUnit, runMemoriseJob, type MemoriseOutcome } from '../../../src/memory/ingest/memorise';
import { withDefaults } from '../../../src/memory/settings';
import { checkGraphInvariants } from '../../support/invariants';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { segmentSession } from '../../../src/memory/ingest/segments';
import { wordOverlap } from '../../../src/memory/text';
import type { ChangeSet, ChatMessage, Embedder, GenerateOptions, JsonSchema, LanguageModel, ModelWindow } from '../../../src/ports';
import type { Session, Turn } from '../../../src/memory/types';

const T0 = Date.UTC(2024, 0, 1);
const DAY = 86_400_000;

const SESSIONS: string[][] = [
  ['I started learning the guitar this week', 'I love green tea in the morning', 'My dog Rex is sick', 'I am reading a book about Rome'],
  [
    'I bought a new guitar for my lessons',
    'I switched from green tea to coffee',
    'Rex is feeling better now',
    'I finished the book about Rome',
  ],
  ['I played guitar at a concert', 'Rex and I went hiking in the hills', 'I love green tea in the morning'],
];

/**
 * Deterministic model double: summary = one event per user turn plus tea/coffee traits; labels by
 * word overlap; segmentation = one segment per two turns. `onCall` lets a test die mid-call.
 */
/** The model's window: undefined (the fallback's 2,048 tokens: one part per session), or a small one (parts). */
let WINDOW: ModelWindow | undefined;

class Model implements LanguageModel {
  readonly modelId = 'crash-test';
  get window(): ModelWindow | undefined {
    return WINDOW;
  }
  calls = 0;
  onCall?: (n: number, signal?: AbortSignal) => void;

  async chat(_m: ChatMessage[], _o?: GenerateOptions): Promise<string> {
    throw new Error('the job never chats');
  }

  async json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    const n = ++this.calls;
    await Promise.resolve();
    this.onCall?.(n, options.signal);
    if (options.signal?.aborted) throw options.signal.reason;
    const text = messages.map((m) => m.content).join('\n');
    if (schema.title === 'session_memories') {
      const lines = [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)];
      const events = lines.map((m) => ({ text: `User said: ${m[2]}`, about: 'user', turns: [m[1]] }));
      const userTraits = lines
        .filter((m) => /tea|coffee/.test(m[2]))
        .map((m) => ({ text: /coffee/.test(m[2]) ? 'User prefers coffee' : 'User prefers green tea', turns: [m[1]] }));
      return JSON.stringify({ events, userTraits, assistantTraits: [], notes: [] });
    }
    if (schema.title === 'relation_labels') {
      const target = /^New memory \([^)]*\): (.*)$/m.exec(text)?.[1] ?? '';
      const labels = [...text.matchAll(/^Candidate (\d+) \([^)]*\): (.*)$/gm)].map((m) => ({
        candidate: Number(m[1]),
        relation: /prefers/.test(m[2]) && /prefers/.test(target) ? 'Changed' : wordOverlap(m[2], target) >= 0.2 ? 'SameTopic' : 'None',
      }));
      return JSON.stringify({ labels });
    }
    // Segmentation (its schema has no title): pairs of turns.
    const last = Number(/Turns 0 to (\d+)/.exec(text)?.[1] ?? 0);
    const segments = [];
    for (let s = 0; s <= last; s += 2) segments.push({ start: s, end: Math.min(last, s + 1) });
    return JSON.stringify({ segments });
  }
}

class ToyEmbedder implements Embedder {
  readonly modelId = 'toy-embed';
  readonly dimension = 8;
  calls = 0;
  onCall?: (n: number, signal?: AbortSignal) => void;
  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const n = ++this.calls;
    await Promise.resolve();
    this.onCall?.(n, signal);
    if (signal?.aborted) throw signal.reason;
    return texts.map((t) => {
      const v = new Float32Array(this.dimension);
      for (const w of t.toLowerCase().split(/\W+/)) if (w) v[[...w].reduce((a, c) => a + c.charCodeAt(0), 0) % this.dimension] += 1;
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
  }
}

async function seed(repo: InMemoryRepository): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, texts] of SESSIONS.entries()) {
    const id = `s${i}`;
    const time = T0 + i * 10 * DAY;
    const turns: Turn[] = texts.flatMap((text, k) => [
      { id: `${id}:u${k}`, sessionId: id, index: 2 * k, role: 'user' as const, text, time: time + k * 1000, status: 'complete' as const },
      {
        id: `${id}:a${k}`,
        sessionId: id,
        index: 2 * k + 1,
        role: 'assistant' as const,
        text: 'I see, tell me more.',
        time: time + k * 1000 + 500,
        status: 'complete' as const,
      },
    ]);
    const session: Session = { id, title: id, startedAt: time, lastActivityAt: time, status: 'ended' };
    const job = createMemoriseJob(id, time + 5000);
    await repo.apply({ sessions: [session], turns, jobs: [job] });
    ids.push(job.id);
  }
  return ids;
}

const settings = withDefaults({ maxStepAttempts: 3 });

/**
 * One "page life": state rebuilt from the store as MemoryService.load does (index from memories,
 * vectors attached), then every unfinished job run in creation order. Throws when the tab dies.
 */
async function pageLife(repo: InMemoryRepository, llm: Model, embedder: ToyEmbedder, signal?: AbortSignal): Promise<MemoriseOutcome[]> {
  const index = createHybridIndex();
  for (const m of await repo.listMemories()) index.upsert(memoryUnit(m));
  for (const v of await repo.listVectors(embedder.modelId)) if (index.has(v.unitId)) index.setVector(v.unitId, v.vector);
  const jobs = (await repo.listJobs()).filter((j) => j.status !== 'done').sort((a, b) => a.createdAt - b.createdAt);
  const outcomes: MemoriseOutcome[] = [];
  for (const job of jobs) {
    outcomes.push(
      await runMemoriseJob(job, {
        repo,
        llm,
        embedder,
        index,
        settings,
        signal,
        now: () => T0 + 999,
        // Whatever the job hands over (topic ranges, or a model) goes to the real segmenter.
        segmenter: ({ turns, ...rest }) => segmentSession(turns, rest),
      }),
    );
  }
  return outcomes;
}

function snapshot(repo: InMemoryRepository) {
  const byId = <T extends { id: string }>(xs: Iterable<T>) => [...xs].sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    memories: byId(repo.memories.values()),
    edges: byId(repo.edges.values()),
    segments: byId(repo.segments.values()),
    vectors: [...repo.vectors.values()]
      .map((v) => ({ unitId: v.unitId, modelId: v.modelId, vector: [...v.vector] }))
      .sort((a, b) => (a.unitId < b.unitId ? -1 : 1)),
    sessions: byId(repo.sessions.values()).map((s) => [s.id, s.status]),
    jobs: byId(repo.jobs.values()).map((j) => [j.id, j.step, j.status, j.state]),
  };
}

function expectNoDuplicates(snap: ReturnType<typeof snapshot>): void {
  const texts = snap.memories.map((m) => `${m.kind}|${m.subject}|${m.text.toLowerCase()}`);
  expect(new Set(texts).size).toBe(texts.length);
  const pairs = snap.edges.map((e) => [e.from, e.to].sort().join('|'));
  expect(new Set(pairs).size).toBe(pairs.length);
  const segs = snap.segments.map((s) => `${s.sessionId}|${s.firstTurn}`);
  expect(new Set(segs).size).toBe(segs.length);
  expect(checkGraphInvariants(snap.memories, snap.edges)).toEqual([]);
}

async function reference() {
  const repo = new InMemoryRepository();
  await seed(repo);
  const before = repo.commits;
  const llm = new Model();
  const embedder = new ToyEmbedder();
  const outcomes = await pageLife(repo, llm, embedder);
  expect(outcomes.map((o) => o.status)).toEqual(['done', 'done', 'done']);
  return { snap: snapshot(repo), writes: repo.commits - before, modelCalls: llm.calls, embedCalls: embedder.calls };
}

describe('the memorise job resumes after the tab is closed anywhere', () => {
  it('the uninterrupted reference run exercises every step', async () => {
    const ref = await reference();
    expectNoDuplicates(ref.snap);
    expect(ref.snap.memories.length).toBeGreaterThanOrEqual(10);
    expect(ref.snap.edges.length).toBeGreaterThan(0);
    expect(ref.snap.edges.some((e) => e.relation === 'Changed')).toBe(true);
    expect(ref.snap.memories.some((m) => m.supersededBy)).toBe(true);
    expect(ref.snap.vectors.length).toBe(ref.snap.memories.length);
    expect(ref.snap.segments.length).toBeGreaterThanOrEqual(6);
    expect(ref.snap.sessions.every(([, s]) => s === 'memorised')).toBe(true);
    // Writes per session: summarise + embed + one per memory linked + segment + done.
    expect(ref.writes).toBe(3 * 4 + ref.snap.memories.length);
  });

  for (const mode of ['before-write', 'after-write'] as const) {
    it(`killed ${mode} at every write #1..#N of the whole job: same final graph, no duplicates`, async () => {
      const ref = await reference();
      let survived = 0;
      for (let k = 1; k <= ref.writes; k++) {
        const { repo, ctl } = killableRepo();
        await seed(repo);
        Object.assign(ctl, { armed: true, killAt: k, mode });
        const llm = new Model();
        const embedder = new ToyEmbedder();
        // First life: dies at write k. Failures are retried in-process until the store is dead,
        // so the life ends either with a throw or with a failed job.
        let died: boolean;
        try {
          const outs = await pageLife(repo, llm, embedder);
          died = outs.some((o) => o.status !== 'done');
        } catch (e) {
          died = e instanceof Killed;
          if (!died) throw e;
        }
        expect(ctl.dead, `write #${k} was reached`).toBe(true);
        expect(died || mode === 'after-write').toBe(true);
        // Reload: the store is alive again; failed jobs are picked up too (the service retries them).
        ctl.armed = false;
        ctl.dead = false;
        for (const j of await repo.listJobs()) if (j.status === 'failed') await repo.apply({ jobs: [{ ...j, status: 'pending' }] });
        const outs = await pageLife(repo, new Model(), new ToyEmbedder());
        expect(outs.every((o) => o.status === 'done')).toBe(true);
        const snap = snapshot(repo);
        expect(snap, `killed ${mode} #${k}`).toEqual(ref.snap);
        expectNoDuplicates(snap);
        survived++;
      }
      expect(survived).toBe(ref.writes);
      console.log(`[trust] kill points survived (${mode}, per write): ${survived}`);
    });
  }

  for (const who of ['model', 'embedder'] as const) {
    it(`killed in the middle of every ${who} call (AbortSignal): same final graph`, async () => {
      const ref = await reference();
      const calls = who === 'model' ? ref.modelCalls : ref.embedCalls;
      expect(calls).toBeGreaterThan(3);
      for (let k = 1; k <= calls; k++) {
        const repo = new InMemoryRepository();
        await seed(repo);
        const llm = new Model();
        const embedder = new ToyEmbedder();
        const tab = new AbortController();
        const target = who === 'model' ? llm : embedder;
        target.onCall = (n) => {
          if (n === k) tab.abort(new Killed(`during ${who} call #${k}`));
        };
        await expect(pageLife(repo, llm, embedder, tab.signal)).rejects.toBeInstanceOf(Killed);
        const outs = await pageLife(repo, new Model(), new ToyEmbedder());
        expect(outs.every((o) => o.status === 'done')).toBe(true);
        const snap = snapshot(repo);
        expect(snap, `killed during ${who} call #${k}`).toEqual(ref.snap);
        expectNoDuplicates(snap);
      }
      console.log(`[trust] kill points survived (mid-${who}-call): ${calls}`);
    });
  }

  it('named kill points: after summarising, mid-link (k of n), during embedding, after segmenting', async () => {
    const ref = await reference();
    // Kill exactly when the first job's store records a given step (after that write landed).
    const cases: Array<{ name: string; when: (c: ChangeSet) => boolean }> = [
      { name: 'after summarising', when: (c) => c.jobs?.[0]?.step === 'embed' },
      { name: 'after embedding (vectors committed)', when: (c) => (c.vectors?.length ?? 0) > 0 },
      {
        name: 'mid-link, after 2 of n memories',
        when: (c) => c.jobs?.[0]?.step === 'link' && (c.jobs[0].state as { linked?: number } | undefined)?.linked === 2,
      },
      { name: 'after segmenting', when: (c) => (c.segments?.length ?? 0) > 0 },
    ];
    for (const { name, when } of cases) {
      let dead = false;
      let hit = false;
      let fired = false; // one kill per case: the reloaded tab lives
      const repo = new InMemoryRepository({
        beforeApply: (c) => {
          if (dead) throw new Killed('(already)');
          if (!hit && when(c)) hit = true;
        },
      });
      await seed(repo);
      const apply = repo.apply.bind(repo);
      repo.apply = async (c) => {
        const applied = await apply(c);
        if (hit && !fired) {
          fired = true;
          dead = true;
          throw new Killed(name);
        }
        return applied;
      };
      await pageLife(repo, new Model(), new ToyEmbedder()).catch((e: unknown) => {
        if (!(e instanceof Killed)) throw e;
      });
      expect(hit, name).toBe(true);
      // Something of the job is in the store, but not all of it.
      expect(snapshot(repo), name).not.toEqual(ref.snap);
      dead = false;
      for (const j of await repo.listJobs()) if (j.status === 'failed') await apply({ jobs: [{ ...j, status: 'pending' }] });
      await pageLife(repo, new Model(), new ToyEmbedder());
      expect(snapshot(repo), name).toEqual(ref.snap);
    }
  });

  it('property: several kills in a row, at random writes and calls, still converge', async () => {
    const ref = await reference();
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({
              kind: fc.constant('write' as const),
              at: fc.integer({ min: 1, max: ref.writes }),
              mode: fc.constantFrom<KillMode>('before-write', 'after-write'),
            }),
            fc.record({ kind: fc.constantFrom('model' as const, 'embedder' as const), at: fc.integer({ min: 1, max: 6 }) }),
          ),
          { minLength: 1, maxLength: 5 },
        ),
        async (kills) => {
          const { repo, ctl } = killableRepo();
          await seed(repo);
          for (const kill of kills) {
            const llm = new Model();
            const embedder = new ToyEmbedder();
            const tab = new AbortController();
            Object.assign(ctl, {
              armed: kill.kind === 'write',
              writes: 0,
              dead: false,
              killAt: kill.kind === 'write' ? kill.at : 0,
              mode: kill.kind === 'write' ? kill.mode : 'before-write',
            });
            if (kill.kind === 'model') llm.onCall = (n) => n === kill.at && tab.abort(new Killed('model'));
            if (kill.kind === 'embedder') embedder.onCall = (n) => n === kill.at && tab.abort(new Killed('embed'));
            await pageLife(repo, llm, embedder, tab.signal).catch((e: unknown) => {
              if (!(e instanceof Killed)) throw e;
            });
            ctl.armed = false;
            ctl.dead = false;
            for (const j of await repo.listJobs()) if (j.status === 'failed') await repo.apply({ jobs: [{ ...j, status: 'pending' }] });
          }
          await pageLife(repo, new Model(), new ToyEmbedder());
          const snap = snapshot(repo);
          expect(snap).toEqual(ref.snap);
          expectNoDuplicates(snap);
        },
      ),
      { numRuns: 60 },
    );
  });
});

// A session longer than the model's window is summarised in parts, each committed with
// the job's state. Killed before or after any write, the resumed job summarises the same parts and
// ends with the graph of an uninterrupted run.
describe('a session summarised in parts resumes after the tab is closed anywhere', () => {
  // Two user turns to a part: every session of SESSIONS is cut in two.
  beforeAll(() => void (WINDOW = { contextTokens: 1100, maxOutputTokens: 180 }));
  afterAll(() => void (WINDOW = undefined));

  for (const mode of ['before-write', 'after-write'] as const) {
    it(`killed ${mode} at every write: same final graph, no duplicates`, async () => {
      const ref = await reference();
      const parts = (ref.snap.jobs as unknown as Array<[string, string, string, { summary?: { total: number } }]>).map(
        (j) => j[3].summary?.total,
      );
      expect(
        parts.every((n) => (n ?? 0) >= 2),
        `parts per session: ${parts.join(', ')}`,
      ).toBe(true);
      for (let k = 1; k <= ref.writes; k++) {
        const { repo, ctl } = killableRepo();
        await seed(repo);
        Object.assign(ctl, { armed: true, killAt: k, mode });
        try {
          await pageLife(repo, new Model(), new ToyEmbedder());
        } catch (e) {
          if (!(e instanceof Killed)) throw e;
        }
        ctl.armed = false;
        ctl.dead = false;
        for (const j of await repo.listJobs()) if (j.status === 'failed') await repo.apply({ jobs: [{ ...j, status: 'pending' }] });
        const outs = await pageLife(repo, new Model(), new ToyEmbedder());
        expect(outs.every((o) => o.status === 'done')).toBe(true);
        const snap = snapshot(repo);
        expect(snap, `killed ${mode} #${k}`).toEqual(ref.snap);
        expectNoDuplicates(snap);
      }
    });
  }
});
