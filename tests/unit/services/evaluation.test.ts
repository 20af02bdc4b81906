// The Evaluate view's service over the real MemoryService: it says what is missing before a run,
// runs TeaFarm over the live memory, can be cancelled and continued, and writes nothing to the store.
import { describe, expect, it } from 'vitest';
import { EvaluationService, type EvaluationSnapshot } from '../../../src/services/memory/evaluation';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { createMemoriseJob } from '../../../src/memory/ingest/memorise';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { until } from '../../support/until';
import { ScriptedModel, type ScriptedCall } from '../memory/helpers';
import type { Session, Turn } from '../../../src/memory/types';

const T = Date.UTC(2025, 0, 10);

function answer({ kind, schemaTitle, messages }: ScriptedCall): string {
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
  if (schemaTitle === 'teafarm_questions') {
    const facts = [...text.matchAll(/^- (.+)$/gm)].map((m) => m[1]);
    return JSON.stringify({ questions: facts.map((f) => ({ question: `Since it is over, what now: ${f}?`, correct_answer: f })) });
  }
  if (schemaTitle === 'teafarm_verdict') return JSON.stringify({ verdict: 'fooled', reason: 'scripted' });
  return '{}';
}

async function seed(repo: InMemoryRepository) {
  const session: Session = { id: 's1', title: 's1', startedAt: T, lastActivityAt: T + 2, status: 'ended', endedAt: T + 2 };
  const lines = ['I adopted a puppy named Biscuit', 'Lovely!', 'I also started pottery classes', 'Nice!'];
  const turns: Turn[] = lines.map((text, i) => ({
    id: `s1:t${i}`,
    sessionId: 's1',
    index: i,
    role: i % 2 ? 'assistant' : 'user',
    text,
    time: T + i,
    status: 'complete',
  }));
  await repo.apply({ sessions: [session], turns, jobs: [createMemoriseJob('s1', T + 100)] });
}

const dump = (repo: InMemoryRepository) =>
  JSON.stringify([repo.sessions, repo.turns, repo.memories, repo.edges, repo.segments, repo.vectors, repo.jobs].map((m) => [...m]));

async function memorised() {
  const repo = new InMemoryRepository();
  await seed(repo);
  let llm: ScriptedModel | undefined;
  const settings = new SettingsService(repo);
  const memory = new MemoryService(
    repo,
    settings,
    () => llm,
    () => undefined,
  );
  const evaluation = new EvaluationService(
    memory,
    settings,
    () => llm,
    () => undefined,
  );
  await memory.load();
  return { repo, memory, evaluation, setModel: (m: ScriptedModel) => (llm = m) };
}

/** The chat is memorised and the memorise run that did it has ended. */
async function memorisedNow(repo: InMemoryRepository, memory: MemoryService): Promise<void> {
  await until('the chat memorised', async () => (await repo.getSession('s1'))?.status === 'memorised');
  await memory['runner'].settled();
}

describe('EvaluationService', () => {
  it('says what is missing, runs over the live memory and leaves the store as it was', async () => {
    const { repo, memory, evaluation, setModel } = await memorised();
    expect(evaluation.blocker()).toBe('no-model');
    const llm = new ScriptedModel(answer);
    setModel(llm);
    expect(evaluation.blocker()).toBe('no-memories');
    memory.kick();
    await memorisedNow(repo, memory);
    expect(evaluation.blocker()).toBeUndefined();

    const before = dump(repo);
    const commits = repo.commits;
    const states: EvaluationSnapshot['state'][] = [];
    evaluation.on('state', (s) => states.push(s.state));
    await evaluation.start({ questions: 2, conditions: ['full', 'no-memory'] });
    expect(evaluation.snapshot.state).toBe('done');
    expect(evaluation.snapshot.report?.cases).toHaveLength(4);
    expect(states[0]).toBe('running');
    expect(repo.commits).toBe(commits);
    expect(dump(repo)).toBe(before);
  });

  it('cancels a run half way; started again, it continues with the cases it finished', async () => {
    const { repo, memory, evaluation, setModel } = await memorised();
    let replies = 0;
    const llm = new ScriptedModel((call) => {
      if (call.kind === 'chat' && /(^|\n\n)Since/.test(call.messages.at(-1)?.content ?? '') && ++replies === 2) evaluation.cancel();
      return answer(call);
    });
    setModel(llm);
    memory.kick();
    await memorisedNow(repo, memory);
    await evaluation.start({ questions: 2, conditions: ['full', 'no-memory'] });
    expect(evaluation.snapshot.state).toBe('cancelled');
    expect(evaluation.snapshot.report?.cases).toHaveLength(1);
    await evaluation.start({ questions: 2, conditions: ['full', 'no-memory'] });
    expect(evaluation.snapshot.state).toBe('done');
    expect(evaluation.snapshot.report?.cases.filter((c) => c.cached)).toHaveLength(1);
    expect(evaluation.snapshot.report?.cases).toHaveLength(4);
  });

  it('a report whose memories were deleted, edited or ended is cleared, with its cached cases', async () => {
    for (const change of ['delete', 'edit', 'end', 'unrelated'] as const) {
      const { repo, memory, evaluation, setModel } = await memorised();
      const llm = new ScriptedModel(answer);
      setModel(llm);
      memory.kick();
      await memorisedNow(repo, memory);
      await evaluation.start({ questions: 2, conditions: ['full'] });
      expect(JSON.stringify(evaluation.snapshot.report)).toContain('Biscuit');
      const biscuit = [...memory.memories.values()].find((m) => m.text.includes('Biscuit'))!;
      if (change === 'delete') await memory.deleteMemory(biscuit.id);
      else if (change === 'edit') await memory.editMemory(biscuit.id, 'The user adopted a cat.');
      else if (change === 'end') await repo.apply({ memoryPatches: [{ id: biscuit.id, endedAt: T + 500 }] }).then(() => memory.reload());
      else await memory.reload();
      if (change === 'unrelated') {
        expect(evaluation.snapshot.state, change).toBe('done');
        continue;
      }
      expect(evaluation.snapshot.state, change).toBe('idle');
      expect(evaluation.snapshot.report, change).toBeUndefined();
      expect(evaluation.snapshot.notice, change).toMatch(/changed since/);
      // Run again: nothing comes from the cache built on the old memory.
      await evaluation.start({ questions: 2, conditions: ['full'] });
      expect(
        evaluation.snapshot.report?.cases.some((c) => c.cached),
        change,
      ).toBe(false);
    }
  });
});
