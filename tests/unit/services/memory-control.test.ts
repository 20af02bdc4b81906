// The memory switches are respected by the real paths (retrieval into replies,
// memorise jobs), switching creation off stops a job that is running, and a temporary chat leaves
// nothing in the store.
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { ChatService } from '../../../src/services/chat/chat';
import { IdbRepository } from '../../../src/store/repository';
import { createMemoriseJob } from '../../../src/memory/ingest/memorise';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { until as waitUntil } from '../../support/until';
import { ScriptedModel, type ScriptedCall } from '../memory/helpers';
import { freshFactory } from '../store/helpers';
import type { LineReads, Repository } from '../../../src/ports';
import type { Session, Turn } from '../../../src/memory/types';

const T = Date.UTC(2025, 0, 10);

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

async function seedSession(repo: Repository & LineReads, id: string, lines: string[]) {
  const session: Session = { id, title: id, startedAt: T, lastActivityAt: T + lines.length, status: 'ended', endedAt: T + lines.length };
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

/** Waits on the condition, for as long as it takes (tests/support/until.ts). */
const until = (check: () => Promise<boolean>, what: string) => waitUntil(what, check);

/** Resolves when the memorise run in progress, if any, has ended. */
const runEnded = (memory: MemoryService) => memory['runner'].settled();

function wire(repo: Repository & LineReads, llm: ScriptedModel) {
  const settings = new SettingsService(repo);
  const memory = new MemoryService(
    repo,
    settings,
    () => llm,
    () => undefined,
  );
  // As in Tealeaf (src/services/tealeaf.ts).
  settings.on('changed', (s) => (s.memoryCreation ? memory.kick() : memory.pauseJobs()));
  return { settings, memory };
}

describe('memory switches', () => {
  it('memory use off: a reply retrieves nothing and its prompt holds no memory; on again, it does', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', ['I adopted a puppy named Biscuit', 'Lovely!']);
    const llm = new ScriptedModel(answer);
    const { settings, memory } = wire(repo, llm);
    await memory.load();
    memory.kick();
    await until(async () => (await repo.getSession('s1'))?.status === 'memorised', 'memorised');
    const history: Turn[] = [
      { id: 'q', sessionId: 's2', index: 0, role: 'user', text: 'How is Biscuit the puppy?', time: T + 1e6, status: 'complete' },
    ];
    const session: Session = { id: 's2', title: 'q', startedAt: T + 1e6, lastActivityAt: T + 1e6, status: 'open' };
    const ask = () => memory.prepare({ session, history, now: T + 1e6, llm, signal: new AbortController().signal });

    const on = await ask();
    expect(on.usedMemory?.memoryIds.length).toBeGreaterThan(0);
    expect(on.messages.at(-1)?.content).toMatch(/^<memory>\n[^]*Biscuit[^]*\n<\/memory>\n\nHow is Biscuit the puppy\?$/);

    await settings.update({ memoryUse: false });
    const off = await ask();
    expect(off.usedMemory).toBeUndefined();
    expect(off.messages.map((m) => m.content).join()).not.toMatch(/<memory>/);
    expect(off.messages.at(-1)?.content).toBe('How is Biscuit the puppy?');
  });

  it('memory creation off: an ended chat queues no job and stays unremembered', async () => {
    const repo = new InMemoryRepository();
    let remember = false;
    const llm = new ScriptedModel(answer);
    const chat = new ChatService({
      repo,
      preparer: { prepare: async ({ history }) => ({ messages: history.map((t) => ({ role: t.role, content: t.text })) }) },
      getModel: () => llm,
      idleGapMs: () => 3_600_000,
      memorise: () => remember,
    });
    await chat.send('Something private');
    await chat.endCurrent();
    const [s] = await repo.listSessions();
    expect(s.status).toBe('ended');
    expect(await repo.listJobs()).toEqual([]);
    remember = true;
    await chat.send('Something to remember');
    await chat.newChat();
    expect((await repo.listJobs()).map((j) => j.kind)).toEqual(['memorise']);
  });

  it('switching creation off while a job runs stops it with nothing written; on again, it finishes', async () => {
    const repo = new InMemoryRepository();
    await seedSession(repo, 's1', ['I adopted a puppy named Biscuit', 'Lovely!']);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    // The summarising call waits on the gate and, like a model that ignores the stop, answers anyway.
    const llm = new ScriptedModel(answer);
    const json = llm.json.bind(llm);
    llm.json = async (...args) => {
      calls++;
      if (calls === 1) await gate;
      return json(...args);
    };
    const { settings, memory } = wire(repo, llm);
    await memory.load();
    memory.kick();
    await until(async () => calls === 1, 'the summarising call');
    await settings.update({ memoryCreation: false });
    release();
    await runEnded(memory);
    expect(await repo.listMemories()).toEqual([]);
    expect((await repo.getSession('s1'))?.status).toBe('ended');
    const [job] = await repo.listJobs();
    expect(job.status === 'pending' || job.status === 'running').toBe(true);
    expect(job.step).toBe('summarise');
    // Still off: a kick (e.g. a model loading) does not run it.
    memory.kick();
    await runEnded(memory);
    expect(calls).toBe(1);

    await settings.update({ memoryCreation: true });
    await until(async () => (await repo.getSession('s1'))?.status === 'memorised', 'memorised after switching on');
    expect((await repo.listMemories()).map((m) => m.text)).toEqual(['You said: I adopted a puppy named Biscuit']);
  });
});

describe('temporary chat', () => {
  it('is answered without memory, and nothing of it is in the store, during or after', async () => {
    const repo = await IdbRepository.open({ factory: freshFactory() });
    const llm = new ScriptedModel(answer);
    let prepared = 0;
    let memoryless = 0;
    const chat = new ChatService({
      repo,
      getModel: () => llm,
      idleGapMs: () => 3_600_000,
      saveEveryMs: 0,
      // The memory preparer retrieves (and says so); a temporary chat must never reach it.
      preparer: {
        prepare: async ({ history }) => (
          prepared++,
          {
            messages: [
              { role: 'system', content: 'You remember: the user is moving to Oslo.' },
              ...history.map((t) => ({ role: t.role, content: t.text })),
            ],
            usedMemory: { memoryIds: ['m1'], segmentIds: [], timelines: [], scores: [] },
          }
        ),
      },
      memoryless: { prepare: async ({ history }) => (memoryless++, { messages: history.map((t) => ({ role: t.role, content: t.text })) }) },
    });
    await chat.send('A real chat first');
    await chat.startTemporary();
    expect(chat.temporary).toBe(true);
    await chat.send('Something I want forgotten');
    await chat.send('And this too');
    expect(chat.turns.map((t) => t.text)).toEqual(['Something I want forgotten', 'ok', 'And this too', 'ok']);
    await chat.regenerate();
    // Only the real chat's reply used memory; the temporary replies (and the regenerated one) did not.
    expect([prepared, memoryless]).toEqual([1, 3]);
    expect(chat.turns.filter((t) => t.usedMemory)).toEqual([]);
    const prompts = llm.calls.filter((c) => c.kind === 'chat').map((c) => c.messages.map((m) => m.content).join('\n'));
    expect(prompts.map((p) => p.includes('Oslo'))).toEqual([true, false, false, false]);
    const counts = await repo.countAll();
    // Only the real chat (2 turns) and its memorising job: the temporary one wrote nothing.
    expect({ sessions: counts.sessions, turns: counts.turns, jobs: counts.jobs }).toEqual({ sessions: 1, turns: 2, jobs: 1 });
    const all = JSON.stringify([
      await repo.listSessions(),
      ...(await Promise.all((await repo.listSessions()).map((s) => repo.listTurns(s.id)))),
    ]);
    expect(all).not.toMatch(/forgotten|And this too/);
    await chat.newChat();
    expect(chat.temporary).toBe(false);
    expect(chat.turns).toEqual([]);
    expect((await repo.countAll()).turns).toBe(2);
    expect(JSON.stringify(await repo.listJobs())).not.toMatch(/tmp/);
  });
});

describe('races with a memorise job', () => {
  it('"No longer true" and a job that supersedes the same trait keep both marks, in either order', async () => {
    for (const userFirst of [true, false]) {
      const repo = new InMemoryRepository();
      const tea = {
        id: 'tea',
        kind: 'user-trait' as const,
        text: 'You love tea.',
        time: T,
        sourceTurnIds: [],
        sessionId: 's0',
        edited: false,
        createdAt: T,
      };
      const coffee = { ...tea, id: 'coffee', text: 'You drink coffee now.', time: T + 10, createdAt: T + 10, sessionId: 's1' };
      await repo.apply({
        sessions: [
          { id: 's0', title: '', startedAt: T, lastActivityAt: T, status: 'memorised' },
          { id: 's1', title: '', startedAt: T, lastActivityAt: T, status: 'ended' },
        ],
        memories: [tea, coffee],
      });
      const user = { memoryPatches: [{ id: 'tea', endedAt: T + 5 }] };
      // What the link step commits for a Changed trait (src/memory/ingest/memorise.ts).
      const job = {
        edges: [
          { id: 'edge:tea->coffee', from: 'tea', to: 'coffee', relation: 'Changed' as const, origin: 'model' as const, createdAt: T + 10 },
        ],
        memoryPatches: [{ id: 'tea', supersededBy: 'coffee' }],
      };
      for (const c of userFirst ? [user, job] : [job, user]) await repo.apply(c);
      expect(await repo.getMemory('tea')).toMatchObject({ endedAt: T + 5, supersededBy: 'coffee' });
    }
  });

  it('removing old demo records while a job links to one: the link is dropped, nothing dangles', async () => {
    const repo = new InMemoryRepository();
    const { buildDemo } = await import('../../../src/services/demo/demo');
    const { findLegacyDemo } = await import('../../../src/services/space');
    const demo = buildDemo(T);
    await repo.apply({ sessions: demo.sessions, turns: demo.turns, memories: demo.memories, edges: demo.edges });
    const own = {
      id: 'mem:own',
      kind: 'event' as const,
      text: 'You ran 5 km.',
      time: T + 1,
      sourceTurnIds: [],
      sessionId: 's1',
      edited: false,
      createdAt: T + 1,
    };
    await repo.apply({ sessions: [{ id: 's1', title: '', startedAt: T, lastActivityAt: T, status: 'ended' }], memories: [own] });
    const removal = (await findLegacyDemo(repo))!.change;
    await repo.apply(removal);
    // The job's link step, planned against the graph from before the removal, lands after it.
    const applied = await repo.apply({
      edges: [{ id: 'edge:demo->own', from: demo.memories[0].id, to: own.id, relation: 'SameTopic', origin: 'model', createdAt: T + 2 }],
    });
    expect(applied.edges ?? []).toEqual([]);
    expect(applied.dropped.length).toBe(1);
    expect(await repo.listEdges()).toEqual([]);
    expect((await repo.listMemories()).map((m) => m.id)).toEqual(['mem:own']);
  });
});
