import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InMemoryRepository } from '../../support/in-memory-repository';
import {
  createMemoriseJob,
  memoryUnit,
  runMemoriseJob,
  type MemoriseDeps,
  type MemoriseState,
  type Segmenter,
} from '../../../src/memory/ingest/memorise';
import { segmentSession, splitByCohesion } from '../../../src/memory/ingest/segments';
import { withDefaults, type MemorySettings } from '../../../src/memory/settings';
import { checkGraphInvariants } from '../../support/invariants';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { wordOverlap } from '../../../src/memory/text';
import type { Embedder } from '../../../src/ports';
import type { Job, Session, Turn } from '../../../src/memory/types';
import { candidatesInPrompt, DAY, newMemoryInPrompt, ScriptedModel, T0, type ScriptedCall } from './helpers';

const SESSIONS: string[][] = [
  ['I started learning the guitar this week', 'I love green tea in the morning', 'My dog Rex is sick'],
  ['I bought a new guitar for my lessons', 'I switched from green tea to coffee', 'Rex is feeling better now'],
  ['I played guitar at a concert', 'Rex and I went hiking in the hills', 'I love green tea in the morning'],
];

function sessionRecords(i: number, texts: string[]): { session: Session; turns: Turn[] } {
  const id = `s${i}`;
  const time = T0 + i * 10 * DAY;
  const turns: Turn[] = texts.flatMap((text, k) => [
    { id: `${id}:u${k}`, sessionId: id, index: 2 * k, role: 'user', text, time: time + k * 1000, status: 'complete' },
    {
      id: `${id}:a${k}`,
      sessionId: id,
      index: 2 * k + 1,
      role: 'assistant',
      text: 'I see, tell me more.',
      time: time + k * 1000 + 500,
      status: 'complete',
    },
  ]);
  return { session: { id, title: id, startedAt: time, lastActivityAt: time, status: 'ended' }, turns };
}

/** Summaries: one event per user turn, plus a trait for tea/coffee turns. Labels by word overlap. */
function deterministicScript(call: ScriptedCall): string {
  if (call.schemaTitle === 'session_memories') {
    const lines = call.messages[1].content.split('\n').filter((l) => /^T\d+ \[user/.test(l));
    const events = lines.map((l) => ({
      text: `User said: ${l.replace(/^T\d+ \[[^\]]*\]: /, '')}`,
      about: 'user',
      turns: [l.split(' ')[0]],
    }));
    const userTraits = lines
      .filter((l) => /tea|coffee/.test(l))
      .map((l) => ({ text: /coffee/.test(l) ? 'User prefers coffee' : 'User prefers green tea', turns: [l.split(' ')[0]] }));
    return JSON.stringify({ events, userTraits, assistantTraits: [], notes: [] });
  }
  if (call.schemaTitle === 'relation_labels') {
    const target = newMemoryInPrompt(call.messages);
    const labels = [...candidatesInPrompt(call.messages)].map(([i, text]) => ({
      candidate: i,
      relation: /prefers/.test(text) && /prefers/.test(target) ? 'Changed' : wordOverlap(text, target) >= 0.25 ? 'SameTopic' : 'None',
    }));
    return JSON.stringify({ labels });
  }
  return '{}';
}

async function seedWorld(repo: InMemoryRepository, sessions = SESSIONS): Promise<Job[]> {
  const jobs: Job[] = [];
  for (const [i, texts] of sessions.entries()) {
    const { session, turns } = sessionRecords(i, texts);
    const job = createMemoriseJob(session.id, T0 + i * 10 * DAY + 5000);
    await repo.apply({ sessions: [session], turns, jobs: [job] });
    jobs.push(job);
  }
  return jobs;
}

function depsFor(
  repo: InMemoryRepository,
  llm: ScriptedModel | undefined,
  settings: MemorySettings,
  extra: Partial<MemoriseDeps> = {},
): MemoriseDeps {
  // A fresh process: index rebuilt from the store, graph and memory map built by the job.
  const index = createHybridIndex();
  for (const m of repo.memories.values()) index.upsert(memoryUnit(m));
  return { repo, llm, index, settings, now: () => T0 + 999, ...extra };
}

async function runAll(repo: InMemoryRepository, jobIds: string[], llm: ScriptedModel, settings: MemorySettings) {
  for (const id of jobIds) {
    const job = await repo.getJob(id);
    if (!job || job.status === 'done') continue;
    const out = await runMemoriseJob(job, depsFor(repo, llm, settings));
    if (out.status !== 'done') return out.status;
  }
  return 'done';
}

function snapshot(repo: InMemoryRepository) {
  const sort = <T extends { id: string }>(xs: T[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    memories: sort([...repo.memories.values()]),
    edges: sort([...repo.edges.values()]),
    sessions: sort([...repo.sessions.values()]).map((s) => s.status),
  };
}

describe('runMemoriseJob', () => {
  const settings = withDefaults();

  it('summarises, links and finishes; one summary call per session plus at most one label call per memory', async () => {
    const repo = new InMemoryRepository();
    const jobs = await seedWorld(repo);
    const llm = new ScriptedModel(deterministicScript);
    expect(
      await runAll(
        repo,
        jobs.map((j) => j.id),
        llm,
        settings,
      ),
    ).toBe('done');
    const snap = snapshot(repo);
    expect(snap.sessions).toEqual(['memorised', 'memorised', 'memorised']);
    expect(llm.count('session_memories')).toBe(3);
    expect(llm.count('relation_labels')).toBeLessThanOrEqual(snap.memories.length);
    expect(snap.edges.length).toBeGreaterThan(0);
    expect(checkGraphInvariants(snap.memories, snap.edges)).toEqual([]);
    // The repeated sentence of session 3 and its repeated trait are not stored twice.
    const texts = snap.memories.map((m) => `${m.kind}:${m.text}`);
    expect(new Set(texts).size).toBe(texts.length);
    // Tea -> coffee: the older trait is superseded by the newer one.
    const tea = snap.memories.find((m) => m.text === 'User prefers green tea')!;
    const coffee = snap.memories.find((m) => m.text === 'User prefers coffee')!;
    expect(tea.supersededBy).toBe(coffee.id);
    expect(snap.edges.some((e) => e.from === tea.id && e.to === coffee.id && e.relation === 'Changed')).toBe(true);
    // Provenance: every memory points at a turn of its own session.
    for (const m of snap.memories) expect(m.sourceTurnIds.every((t) => t.startsWith(`${m.sessionId}:`))).toBe(true);
    const done = [...repo.jobs.values()];
    expect(done.every((j) => j.status === 'done' && j.step === 'done')).toBe(true);
  });

  it('resumes after a crash at any commit with the same final graph and no duplicates', async () => {
    const reference = new InMemoryRepository();
    const refJobs = await seedWorld(reference);
    await runAll(
      reference,
      refJobs.map((j) => j.id),
      new ScriptedModel(deterministicScript),
      settings,
    );
    const expected = snapshot(reference);
    const commitsNeeded = reference.commits - refJobs.length; // minus the seeding commits

    for (let crashAt = 1; crashAt <= commitsNeeded; crashAt++) {
      let applies = 0;
      let dead = false;
      let armed = false;
      const repo = new InMemoryRepository({
        beforeApply: () => {
          if (!armed) return;
          if (dead) throw new Error('process gone');
          if (++applies === crashAt) {
            dead = true;
            throw new Error('crash');
          }
        },
      });
      const jobs = await seedWorld(repo);
      armed = true;
      const ids = jobs.map((j) => j.id);
      const llm = new ScriptedModel(deterministicScript);
      expect(await runAll(repo, ids, llm, settings)).not.toBe('done');
      dead = false; // restart
      expect(await runAll(repo, ids, llm, settings)).toBe('done');
      expect(snapshot(repo)).toEqual(expected);
    }
  });

  it('waits without a language model, and links by similarity when relation-aware linking is off', async () => {
    const repo = new InMemoryRepository();
    const [job] = await seedWorld(repo, [SESSIONS[0]]);
    const waiting = await runMemoriseJob(job, depsFor(repo, undefined, settings));
    expect(waiting.status).toBe('pending');
    expect(waiting.reason).toMatch(/language model/);
    expect(repo.memories.size).toBe(0);
  });

  it('similarity switch: only the summary costs a call', async () => {
    const repo = new InMemoryRepository();
    const jobs = await seedWorld(repo);
    const llm = new ScriptedModel(deterministicScript);
    const off = withDefaults({ relationAwareLinking: false, lexicalSimilarityThreshold: 0.25 });
    expect(
      await runAll(
        repo,
        jobs.map((j) => j.id),
        llm,
        off,
      ),
    ).toBe('done');
    expect(llm.count()).toBe(3);
    const snap = snapshot(repo);
    expect(snap.edges.length).toBeGreaterThan(0);
    expect(snap.edges.every((e) => e.relation === 'SameTopic' && e.origin === 'similarity')).toBe(true);
    expect(checkGraphInvariants(snap.memories, snap.edges)).toEqual([]);
  });

  it('retries a failing step, then reports it failed with the last error', async () => {
    const repo = new InMemoryRepository();
    const [job] = await seedWorld(repo, [SESSIONS[0]]);
    const llm = new ScriptedModel(() => 'I am not going to answer in JSON.');
    const out = await runMemoriseJob(job, depsFor(repo, llm, withDefaults({ maxStepAttempts: 3 })));
    expect(out.status).toBe('failed');
    expect(llm.count()).toBe(3);
    const stored = await repo.getJob(job.id);
    expect(stored?.status).toBe('failed');
    expect(stored?.attempts).toBe(3);
    expect(stored?.lastError).toMatch(/summary unreadable/);
    expect(stored?.step).toBe('summarise');
  });

  it('stores vectors when an embedder is present, and reports progress', async () => {
    const repo = new InMemoryRepository();
    const [job] = await seedWorld(repo, [SESSIONS[0]]);
    const embedder: Embedder = {
      modelId: 'toy',
      dimension: 4,
      embed: async (texts) =>
        texts.map((t) => {
          const v = new Float32Array(4);
          v[t.length % 4] = 1;
          return v;
        }),
    };
    const progress: string[] = [];
    const out = await runMemoriseJob(
      job,
      depsFor(repo, new ScriptedModel(deterministicScript), settings, { embedder, onProgress: (j) => progress.push(j.step) }),
    );
    expect(out.status).toBe('done');
    expect(repo.vectors.size).toBe(repo.memories.size);
    expect(progress[0]).toBe('embed');
    expect(progress.at(-1)).toBe('done');
  });
});

/** The deterministic script, with these topics added to every summary. */
function scriptWithTopics(topics: unknown): (call: ScriptedCall) => string {
  return (call) => {
    const out = deterministicScript(call);
    if (call.schemaTitle !== 'session_memories') return out;
    return JSON.stringify({ ...(JSON.parse(out) as object), topics });
  };
}

/** As MemoryService should pass it: the summary's ranges, no model. */
const rangesSegmenter: Segmenter = ({ turns, ranges, signal }) => segmentSession(turns, { ranges, signal });
/** The older shape (forwards `llm`), as callers written before topics still do. */
const legacySegmenter: Segmenter = ({ turns, llm, signal }) => segmentSession(turns, { llm, signal });

/** The topics a job carries in its state. */
function topicsOf(job: Job | undefined): MemoriseState['topics'] {
  return (job?.state as Partial<MemoriseState> | undefined)?.topics;
}

async function segmentRanges(repo: InMemoryRepository, sessionId: string): Promise<Array<[number, number]>> {
  return [...repo.segments.values()]
    .filter((x) => x.sessionId === sessionId)
    .sort((a, b) => a.firstTurn - b.firstTurn)
    .map((x) => [x.firstTurn, x.lastTurn]);
}

async function fallbackRanges(repo: InMemoryRepository, sessionId: string): Promise<Array<[number, number]>> {
  const turns = (await repo.listTurns(sessionId)).sort((a, b) => a.index - b.index);
  return splitByCohesion(turns.map((t) => t.text)).map((r) => [turns[r.first]!.index, turns[r.last]!.index]);
}

describe('segments from the summarising call', () => {
  const settings = withDefaults();
  // Six turns per session; the fallback splitter (at least 3 turns a segment) cannot make [0, 1].
  const TOPICS = [
    { first: 'T1', last: 'T2' },
    { first: 'T3', last: 'T6' },
  ];

  it("segments follow the summary's topics; a session costs 1 + labelling calls, the segment step none", async () => {
    for (const segmenter of [rangesSegmenter, legacySegmenter]) {
      const repo = new InMemoryRepository();
      const jobs = await seedWorld(repo);
      const llm = new ScriptedModel(scriptWithTopics(TOPICS));
      for (const job of jobs) {
        const before = llm.count();
        const labelsBefore = llm.count('relation_labels');
        const out = await runMemoriseJob(job, depsFor(repo, llm, settings, { segmenter }));
        expect(out.status).toBe('done');
        const labelling = llm.count('relation_labels') - labelsBefore;
        expect(llm.count() - before).toBe(1 + labelling);
        expect(out.modelCalls).toBe(1 + labelling);
        const stored = await repo.getJob(job.id);
        expect(topicsOf(stored)).toEqual([
          { first: `${job.sessionId}:u0`, last: `${job.sessionId}:a0` },
          { first: `${job.sessionId}:u1`, last: `${job.sessionId}:a2` },
        ]);
        const expected =
          segmenter === rangesSegmenter
            ? [
                [0, 1],
                [2, 5],
              ]
            : await fallbackRanges(repo, job.sessionId!);
        expect(await segmentRanges(repo, job.sessionId!)).toEqual(expected);
      }
      expect(llm.count('session_memories')).toBe(3);
      expect(llm.calls.every((c) => c.schemaTitle === 'session_memories' || c.schemaTitle === 'relation_labels')).toBe(true);
    }
  });

  it('garbage or missing topics fall back to the splitter, without a call', async () => {
    for (const topics of [[{ first: 'T42', last: 'banana' }], 'all of it', undefined]) {
      const repo = new InMemoryRepository();
      const [job] = await seedWorld(repo, [SESSIONS[0]]);
      const llm = new ScriptedModel(scriptWithTopics(topics));
      const out = await runMemoriseJob(job, depsFor(repo, llm, settings, { segmenter: rangesSegmenter }));
      expect(out.status).toBe('done');
      expect(llm.count()).toBe(1 + llm.count('relation_labels'));
      expect(topicsOf(out.job)).toBeUndefined();
      const segs = await segmentRanges(repo, job.sessionId!);
      expect(segs).toEqual(await fallbackRanges(repo, job.sessionId!));
      expect(segs).not.toEqual([
        [0, 1],
        [2, 5],
      ]);
    }
  });

  it('a job resumed after the summarise step segments along the stored topics', async () => {
    let dead = false;
    let crashed = false;
    const repo = new InMemoryRepository({
      beforeApply: (c) => {
        if (dead) throw new Error('process gone');
        // The commit after summarising (embed -> link): the tab dies there, once.
        if (!crashed && c.jobs?.[0]?.step === 'link') {
          crashed = true;
          dead = true;
          throw new Error('crash');
        }
      },
    });
    const [job] = await seedWorld(repo, [SESSIONS[0]]);
    const first = await runMemoriseJob(
      job,
      depsFor(repo, new ScriptedModel(scriptWithTopics(TOPICS)), withDefaults({ maxStepAttempts: 1 }), { segmenter: rangesSegmenter }),
    );
    expect(first.status).toBe('failed');
    const stored = (await repo.getJob(job.id))!;
    expect(stored.step).toBe('embed');
    expect(topicsOf(stored)).toHaveLength(2);
    expect(repo.segments.size).toBe(0);

    // Reload: a model that would now answer other topics is not asked again.
    dead = false;
    const llm = new ScriptedModel(scriptWithTopics([{ first: 'T1', last: 'T6' }]));
    const out = await runMemoriseJob(stored, depsFor(repo, llm, settings, { segmenter: rangesSegmenter }));
    expect(out.job.lastError).toBeUndefined();
    expect(out.status).toBe('done');
    expect(llm.count('session_memories')).toBe(0);
    expect(await segmentRanges(repo, job.sessionId!)).toEqual([
      [0, 1],
      [2, 5],
    ]);
  });
});

describe('property: random sessions and garbage model output keep the graph invariants', () => {
  const garbage = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.constant(''),
    fc.json().map((j) => j.slice(0, 40)),
    fc
      .record({
        labels: fc.array(
          fc.record({
            candidate: fc.integer({ min: -2, max: 6 }),
            relation: fc.constantFrom('Cause', 'same topic', 'Changed', 'Banana', 'None', 'hindered_by'),
          }),
          { maxLength: 5 },
        ),
      })
      .map((o) => JSON.stringify(o)),
    fc
      .record({
        events: fc.array(
          fc.record({
            text: fc.constantFrom('User likes tea', 'User hikes', 'User has a dog', ''),
            turns: fc.array(fc.constantFrom('T1', 'T2', 'T9', 'x', 3), { maxLength: 3 }),
          }),
          { maxLength: 4 },
        ),
        userTraits: fc.array(fc.record({ text: fc.constantFrom('User prefers tea', 'User prefers coffee'), turns: fc.constant(['T1']) }), {
          maxLength: 2,
        }),
      })
      .map((o) => JSON.stringify(o)),
  );

  it('holds for any sequence of outputs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(fc.constantFrom('guitar lessons', 'green tea', 'my dog', 'hiking trip', 'coffee now'), { minLength: 1, maxLength: 3 }),
          { minLength: 1, maxLength: 3 },
        ),
        fc.array(garbage, { minLength: 1, maxLength: 30 }),
        fc.boolean(),
        async (sessions, outputs, relationAware) => {
          const repo = new InMemoryRepository();
          const jobs = await seedWorld(repo, sessions);
          let n = 0;
          const llm = new ScriptedModel(() => outputs[n++ % outputs.length]);
          const s = withDefaults({ relationAwareLinking: relationAware, maxStepAttempts: 2, lexicalSimilarityThreshold: 0.1 });
          for (const job of jobs) {
            const out = await runMemoriseJob(job, depsFor(repo, llm, s));
            expect(['done', 'failed']).toContain(out.status);
          }
          const snap = snapshot(repo);
          expect(checkGraphInvariants(snap.memories, snap.edges)).toEqual([]);
          const keys = snap.memories.map((m) => `${m.kind}|${m.subject}|${m.text.toLowerCase()}`);
          expect(new Set(keys).size).toBe(keys.length);
        },
      ),
      { numRuns: 120 },
    );
  });
});

describe('worth remembering, through the memorise job', () => {
  it('stored memories carry the judgement; a note from a message not judged worth remembering is not stored', async () => {
    const repo = new InMemoryRepository();
    const [job] = await seedWorld(repo, [SESSIONS[0]!]);
    const llm = new ScriptedModel((call) => {
      const out = deterministicScript(call);
      if (call.schemaTitle !== 'session_memories') return out;
      return JSON.stringify({
        ...(JSON.parse(out) as object),
        notes: [
          { context: 'You like tea.', knowledge: 'Offer green tea ideas in the morning.', turns: ['T3'] },
          { context: 'Your dog is sick.', knowledge: 'Ask how Rex is doing.', turns: ['T5'] },
        ],
        remember: ['T5'],
      });
    });
    const out = await runMemoriseJob(job!, depsFor(repo, llm, withDefaults()));
    expect(out.status).toBe('done');
    const stored = [...repo.memories.values()];
    expect(stored.filter((m) => m.kind === 'note').map((m) => m.text)).toEqual(['Ask how Rex is doing.']);
    const rex = stored.filter((m) => m.sourceTurnIds.includes('s0:u2'));
    const others = stored.filter((m) => !m.sourceTurnIds.includes('s0:u2'));
    expect(rex.length).toBeGreaterThan(0);
    expect(rex.every((m) => m.worthRemembering === true)).toBe(true);
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((m) => m.worthRemembering === false)).toBe(true);
  });
});
