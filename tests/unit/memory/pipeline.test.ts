import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InMemoryRepository } from '../../../src/memory/in-memory-repository';
import { createMemoriseJob, memoryUnit, runMemoriseJob, type MemoriseDeps } from '../../../src/memory/pipeline';
import { withDefaults, type MemorySettings } from '../../../src/memory/settings';
import { checkGraphInvariants } from '../../../src/memory/invariants';
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
    { id: `${id}:a${k}`, sessionId: id, index: 2 * k + 1, role: 'assistant', text: 'I see, tell me more.', time: time + k * 1000 + 500, status: 'complete' },
  ]);
  return { session: { id, title: id, startedAt: time, lastActivityAt: time, status: 'ended' }, turns };
}

/** Summaries: one event per user turn, plus a trait for tea/coffee turns. Labels by word overlap. */
function deterministicScript(call: ScriptedCall): string {
  if (call.schemaTitle === 'session_memories') {
    const lines = call.messages[1].content.split('\n').filter((l) => /^T\d+ \[user/.test(l));
    const events = lines.map((l) => ({ text: `User said: ${l.replace(/^T\d+ \[[^\]]*\]: /, '')}`, about: 'user', turns: [l.split(' ')[0]] }));
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

interface World {
  repo: InMemoryRepository;
  jobs: Job[];
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

function depsFor(repo: InMemoryRepository, llm: ScriptedModel | undefined, settings: MemorySettings, extra: Partial<MemoriseDeps> = {}): MemoriseDeps {
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
    expect(await runAll(repo, jobs.map((j) => j.id), llm, settings)).toBe('done');
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
    await runAll(reference, refJobs.map((j) => j.id), new ScriptedModel(deterministicScript), settings);
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
    expect(await runAll(repo, jobs.map((j) => j.id), llm, off)).toBe('done');
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
      modelId: 'toy', dimension: 4,
      embed: async (texts) => texts.map((t) => { const v = new Float32Array(4); v[t.length % 4] = 1; return v; }),
    };
    const progress: string[] = [];
    const out = await runMemoriseJob(job, depsFor(repo, new ScriptedModel(deterministicScript), settings, { embedder, onProgress: (j) => progress.push(j.step) }));
    expect(out.status).toBe('done');
    expect(repo.vectors.size).toBe(repo.memories.size);
    expect(progress[0]).toBe('embed');
    expect(progress.at(-1)).toBe('done');
  });
});

describe('property: random sessions and garbage model output keep the graph invariants', () => {
  const garbage = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.constant(''),
    fc.json().map((j) => j.slice(0, 40)),
    fc.record({
      labels: fc.array(fc.record({ candidate: fc.integer({ min: -2, max: 6 }), relation: fc.constantFrom('Cause', 'same topic', 'Changed', 'Banana', 'None', 'hindered_by') }), { maxLength: 5 }),
    }).map((o) => JSON.stringify(o)),
    fc.record({
      events: fc.array(fc.record({ text: fc.constantFrom('User likes tea', 'User hikes', 'User has a dog', ''), turns: fc.array(fc.constantFrom('T1', 'T2', 'T9', 'x', 3), { maxLength: 3 }) }), { maxLength: 4 }),
      userTraits: fc.array(fc.record({ text: fc.constantFrom('User prefers tea', 'User prefers coffee'), turns: fc.constant(['T1']) }), { maxLength: 2 }),
    }).map((o) => JSON.stringify(o)),
  );

  it('holds for any sequence of outputs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom('guitar lessons', 'green tea', 'my dog', 'hiking trip', 'coffee now'), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
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
