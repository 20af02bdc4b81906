// Every builder of a model call fits the smallest window in the catalog: the processor
// models' 2,048 tokens with 384 out, counted by a real tokenizer (the Qwen2.5 family's) through the
// enforcing stand-in, which refuses a prompt over the window as the real engine does and cuts an
// answer at the cap. Each test feeds its builder the worst of what a user can give it.
import { describe, expect, it } from 'vitest';
import { enforce, engineProfile, type EnforcedModel } from '../../support/standin';
import { ModelDouble } from '../../support/model-double';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { CPU_MODELS, LLM_MODELS } from '../../../src/models/catalog';
import { MemoryGraph } from '../../../src/memory/graph';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { createMemoriseJob, memoryUnit, runMemoriseJob } from '../../../src/memory/ingest/memorise';
import { RefineCache } from '../../../src/memory/recall/refine';
import { prepareTurn, type DialogueTurn } from '../../../src/memory/recall/turn';
import { linkMemory } from '../../../src/memory/ingest/linking';
import { runTeaFarm } from '../../../src/memory/eval/teafarm';
import { isPromptTooLong } from '../../../src/memory/fit';
import { withDefaults } from '../../../src/memory/settings';
import { memorylessPreparer } from '../../../src/services/chat/reply-prompt';
import type { Memory, Session, Turn } from '../../../src/memory/types';
import { DAY, T0, sentText } from './helpers';

const SMALLEST = 'cpu-2048';
/** The same engine when the runtime cannot count: the builders fall back on their estimate. */
const ESTIMATING = JSON.stringify({ profile: SMALLEST, exposesCount: false });

const words = (n: number, seed: number) =>
  Array.from(
    { length: n },
    (_, i) => ['the', 'garden', 'river', 'coffee', 'walked', 'quietly', 'yesterday', 'because'][(i * 7 + seed) % 8],
  ).join(' ');

/** A chat of `n` turns: user lines each with a fact of their own, replies of `replyWords` words. */
function longChat(n: number, replyWords: number): DialogueTurn[] {
  const turns: DialogueTurn[] = [];
  for (let i = 0; i < n; i++) {
    const user = i % 2 === 0;
    const text =
      i === 2
        ? 'My sister Ingrid is coming to visit me at Christmas.'
        : user
          ? `On day ${i} I repaired bicycle number ${i} and named it Bike${i}.`
          : words(replyWords, i);
    turns.push({ id: `t${i}`, role: user ? 'user' : 'assistant', text, time: T0 + i * 60_000 });
  }
  return turns;
}

/** Every call the engine saw fitted: none refused, and no answer cut by the window itself. */
function expectAllFitted(llm: EnforcedModel): void {
  expect(llm.calls.length).toBeGreaterThan(0);
  for (const c of llm.calls) {
    expect(c.overflowed, `${c.kind} ${c.title ?? ''} refused`).toBe(false);
    expect(c.promptTokens + c.limit).toBeLessThanOrEqual(llm.window.contextTokens);
  }
}

function memoryWorld(count: number, extra: Memory[] = []) {
  const memories: Memory[] = [
    ...Array.from({ length: count }, (_, i): Memory => ({
      id: `m${i}`,
      kind: i % 5 === 0 ? 'user-trait' : 'event',
      text: `You repaired bicycle number ${i} and named it Bike${i} ${words(20, i)}`,
      time: T0 - (count - i) * DAY,
      sourceTurnIds: [],
      sessionId: `old${i % 7}`,
      edited: false,
      createdAt: T0 - (count - i) * DAY,
      ...(i % 5 === 0 ? { subject: 'user' } : {}),
    })),
    ...extra,
  ];
  const index = createHybridIndex();
  for (const m of memories) index.upsert(memoryUnit(m));
  const graph = MemoryGraph.from(memories, []);
  return { memories, index, graph, memoriesById: new Map(memories.map((m) => [m.id, m])) };
}

describe('the smallest window in the catalog', () => {
  it('is the stand-in profile these tests use', () => {
    const p = engineProfile(SMALLEST);
    expect(p.contextTokens).toBe(Math.min(...CPU_MODELS.map((m) => m.contextTokens), ...LLM_MODELS.map((m) => m.contextWindow)));
    expect(p.maxOutputTokens).toBe(Math.min(...CPU_MODELS.map((m) => m.maxReplyTokens)));
  });
});

describe.each([SMALLEST, ESTIMATING])('builders fit %s', (profile) => {
  it('the reply (with refinement and self-reflection) at turn 200 of a chat with 300-word replies', async () => {
    const llm = enforce(new ModelDouble(), profile);
    const world = memoryWorld(60);
    const dialogue = longChat(199, 300);
    dialogue.push({
      id: 't199',
      role: 'user',
      text: 'When is my sister Ingrid visiting, and which bike did I repair on day 150?',
      time: T0 + 200 * 60_000,
    });
    const prepared = await prepareTurn({
      dialogue,
      now: T0 + 201 * 60_000,
      ...world,
      llm,
      settings: withDefaults({ refineWhenUnsure: false }),
      refineCache: new RefineCache(),
      seed: 1,
    });
    await llm.chat(prepared.messages, { maxTokens: prepared.maxTokens });
    expectAllFitted(llm);
    // The refinement call was made, and the reply could write its whole cap.
    expect(llm.calls.some((c) => c.title === 'timeline_notes' || c.title === 'memory_reflection')).toBe(true);
    expect(llm.calls.at(-1)!.limit).toBe(prepared.maxTokens);
    // The current message last, the instructions first; the start of the chat recalled.
    expect(prepared.messages.at(-1)!.content).toContain('sister Ingrid visiting');
    expect(prepared.messages[0]!.content).toMatch(/^You are Tealeaf/);
    expect(sentText(prepared)).toContain('Ingrid is coming to visit me at Christmas');
    expect(prepared.usedMemory.earlierTurnIds).toContain('t2');
    expect(prepared.chat.left).toBeGreaterThan(150);
  });

  it('the reply without memory (a temporary chat) at turn 200', async () => {
    const llm = enforce(new ModelDouble(), profile);
    const history: Turn[] = longChat(200, 300).map((t, i) => ({
      ...t,
      id: t.id!,
      sessionId: 's',
      index: i,
      time: t.time!,
      status: 'complete',
    }));
    const prompt = await memorylessPreparer(() => undefined).prepare({
      session: { id: 's', title: 's', startedAt: T0, lastActivityAt: T0, status: 'open' } as Session,
      history,
      now: T0,
      llm,
      signal: new AbortController().signal,
    });
    await llm.chat(prompt.messages, { maxTokens: prompt.maxTokens });
    expectAllFitted(llm);
    expect(prompt.messages.at(-1)!.content).toBe(history.at(-1)!.text);
  });

  it('the summary of a 300-turn session, whose first and last tenths are both remembered', async () => {
    const llm = enforce(new ModelDouble(), profile);
    const repo = new InMemoryRepository();
    const session: Session = { id: 's', title: 's', startedAt: T0, lastActivityAt: T0, status: 'ended' };
    const turns: Turn[] = longChat(300, 300).map((t, i) => ({
      ...t,
      id: t.id!,
      sessionId: 's',
      index: i,
      time: t.time!,
      status: 'complete',
    }));
    const job = createMemoriseJob('s', T0 + DAY);
    await repo.apply({ sessions: [session], turns, jobs: [job] });
    const out = await runMemoriseJob(job, {
      repo,
      llm,
      index: createHybridIndex(),
      settings: withDefaults({ relationAwareLinking: false }),
    });
    expect(out.status).toBe('done');
    expectAllFitted(llm);
    const summaries = llm.calls.filter((c) => c.title === 'session_memories');
    expect(summaries.length).toBeGreaterThan(1);
    // No answer was cut: each part asked for no more than its cap holds.
    expect(summaries.every((c) => !c.cut)).toBe(true);
    const remembered = new Set((await repo.listMemories()).flatMap((m) => m.sourceTurnIds));
    const users = turns.filter((t) => t.role === 'user');
    const tenth = Math.ceil(users.length / 10);
    const share = (part: Turn[]) => part.filter((t) => remembered.has(t.id)).length / part.length;
    expect(share(users.slice(0, tenth))).toBeGreaterThanOrEqual(0.95);
    expect(share(users.slice(-tenth))).toBeGreaterThanOrEqual(0.95);
  });

  it('the labelling of a memory against candidates the user edited to thousands of words', async () => {
    const llm = enforce(new ModelDouble(), profile);
    const long = (id: string, day: number): Memory => ({
      id,
      kind: 'event',
      text: `You repaired bicycle Bike7 ${words(1500, day)}`,
      time: T0 + day * DAY,
      sourceTurnIds: [],
      sessionId: `s${day}`,
      edited: true,
      createdAt: T0 + day * DAY,
    });
    const world = memoryWorld(0, [long('a', 1), long('b', 2), long('c', 3), long('n', 9)]);
    const plan = await linkMemory({
      memory: world.memoriesById.get('n')!,
      graph: world.graph,
      index: world.index,
      lookup: (id) => world.memoriesById.get(id),
      settings: withDefaults(),
      llm,
      batch: new Set(['n']),
      now: T0 + 10 * DAY,
    });
    expectAllFitted(llm);
    expect(plan.modelCalls).toBe(1);
    expect(plan.candidates.every((c) => c.label === 'SameTopic')).toBe(true);
  });

  it('TeaFarm: questions from many sessions, replies and verdicts', async () => {
    const llm = enforce(new ModelDouble(), profile);
    const world = memoryWorld(400);
    const report = await runTeaFarm({
      llm,
      memoriesById: world.memoriesById,
      index: world.index,
      graph: world.graph,
      settings: withDefaults(),
      now: T0,
      questions: 5,
      conditions: ['full', 'no-memory'],
    });
    expect(report.status).toBe('done');
    expectAllFitted(llm);
    expect(report.cases.every((c) => c.verdict === 'corrected')).toBe(true);
  });

  it('a message too long for the window is refused in words, never sent', async () => {
    const llm = enforce(new ModelDouble(), profile);
    const world = memoryWorld(5);
    const err = await prepareTurn({
      dialogue: [{ role: 'user', text: words(4000, 1) }],
      now: T0,
      ...world,
      llm,
      settings: withDefaults(),
      refineCache: new RefineCache(),
      seed: 1,
    }).catch((e: unknown) => e);
    expect(isPromptTooLong(err)).toBe(true);
    expect(String((err as Error).message)).toMatch(/too long for the model in use.*Shorten the message/);
    expect(llm.calls.filter((c) => c.kind === 'chat')).toEqual([]);
  });
});
