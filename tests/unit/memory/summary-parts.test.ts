// Phase 0 in parts keeps every memory with the turns it came from: a part whose answer fills a
// list to its schema bound is asked again in halves, and the LoCoMo observation stand-in answers a
// part as a model shown only that part would (its turns, no more items than the schema allows).
// Both once went wrong together: the recall bench lost 0.05 when 353 memories lost their sources.
import { describe, expect, it } from 'vitest';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { createMemoriseJob, runMemoriseJob } from '../../../src/memory/ingest/memorise';
import { summariseMessages, summarySchema } from '../../../src/memory/ingest/summary-prompt';
import { answerFilled } from '../../../src/memory/ingest/summary-plan';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { withDefaults } from '../../../src/memory/settings';
import { observationSummariser, type LocomoSession } from '../../../src/memory/locomo';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel, ModelWindow } from '../../../src/ports';
import type { Session, Turn } from '../../../src/memory/types';
import { T0 } from './helpers';

/** Two people who both tell about themselves: every turn holds one fact. */
function dialogue(n: number): { session: Session; turns: Turn[] } {
  const turns: Turn[] = Array.from({ length: n }, (_, i) => ({
    id: `s:t${i}`,
    sessionId: 's',
    index: i,
    role: i % 2 === 0 ? 'user' : 'assistant',
    text: `${i % 2 === 0 ? 'Ana' : 'Ben'} says: fact number ${i} is that I like item${i}.`,
    time: T0 + i * 60_000,
    status: 'complete',
  }));
  const last = turns[turns.length - 1]!.time;
  return { session: { id: 's', title: 's', startedAt: T0, lastActivityAt: last, endedAt: last, status: 'ended' }, turns };
}

/** Writes one event per shown turn, and no more than the schema's bound: as a grammar-bound engine. */
class EveryTurnModel implements LanguageModel {
  readonly modelId = 'every-turn';
  readonly calls: number[] = [];
  constructor(readonly window: ModelWindow) {}
  chat(): Promise<string> {
    return Promise.reject(new Error('no chat here'));
  }
  async json(messages: ChatMessage[], schema: JsonSchema, _options?: GenerateOptions): Promise<string> {
    const text = messages.map((m) => m.content).join('\n');
    const shown = [...text.matchAll(/^(T\d+) \[[^\]]*\]: .*item(\d+)\./gm)].map((m) => ({ label: m[1]!, item: m[2]! }));
    const max = (schema.properties as { events: { maxItems: number } }).events.maxItems;
    const events = shown.slice(0, max).map((s) => ({ text: `Likes item${s.item}`, about: 'them', turns: [s.label] }));
    this.calls.push(shown.length);
    return JSON.stringify({ events, userTraits: [], assistantTraits: [], topics: [] });
  }
}

async function memorise(llm: LanguageModel, n: number) {
  const repo = new InMemoryRepository();
  const { session, turns } = dialogue(n);
  const job = createMemoriseJob(session.id, T0);
  await repo.apply({ sessions: [session], turns, jobs: [job] });
  const out = await runMemoriseJob(job, {
    repo,
    llm,
    index: createHybridIndex(),
    settings: withDefaults({ relationAwareLinking: false, refinement: false }),
    includeNotes: false,
    now: () => T0 + n * 60_000 + 1,
  });
  return { out, memories: await repo.listMemories(), turns };
}

describe('Phase 0 in parts keeps every memory with its source turn', () => {
  // An output cap of 300 tokens bounds an answer at 4 items; a part is planned for 4 user turns,
  // and so holds 8 turns, each with a fact.
  const window: ModelWindow = { contextTokens: 4096, maxOutputTokens: 300 };

  it('a part whose answer filled a list is asked again in halves: one memory per turn, each from its turn', async () => {
    const llm = new EveryTurnModel(window);
    const { out, memories, turns } = await memorise(llm, 40);
    expect(out.status).toBe('done');
    expect(memories).toHaveLength(turns.length);
    for (const t of turns) {
      const m = memories.find((x) => x.text === `Likes item${t.index}`);
      expect(m?.sourceTurnIds, `turn ${t.index}`).toEqual([t.id]);
    }
    // Split until each part's answer fits: no call saw more facts than it could write, but the last.
    expect(llm.calls.filter((n) => n <= 4).length).toBeGreaterThanOrEqual(10);
  });

  it('a resumed job keeps the halves it split into (the plan is stored with the job)', async () => {
    const llm = new EveryTurnModel(window);
    const first = await memorise(llm, 24);
    const again = await memorise(new EveryTurnModel(window), 24);
    expect(again.memories.map((m) => [m.text, m.sourceTurnIds])).toEqual(first.memories.map((m) => [m.text, m.sourceTurnIds]));
    expect(first.out.job.state).toMatchObject({ summary: { done: expect.any(Number) } });
    const s = (first.out.job.state as { summary: { done: number; total: number; starts: number[] } }).summary;
    expect(s.done).toBe(s.total);
    expect(s.starts.length).toBe(s.total);
  });

  it('an answer below every bound is not split', () => {
    const schema = summarySchema(false, 4);
    const three = { events: [1, 2, 3].map((i) => ({ text: `e${i}`, turns: ['T1'] })), userTraits: [{ text: 'x', turns: ['T1'] }] };
    expect(answerFilled(JSON.stringify(three), schema)).toBe(false);
    expect(answerFilled(JSON.stringify({ ...three, userTraits: [three.events[0], three.events[1]] }), schema)).toBe(true);
    expect(answerFilled(JSON.stringify({ ...three, assistantTraits: [three.events[0]], notes: [three.events[0]] }), schema)).toBe(false);
    expect(answerFilled(JSON.stringify({ ...three, events: [...three.events, three.events[0]] }), schema)).toBe(true);
    expect(answerFilled('not json', schema)).toBe(false);
  });
});

describe('the LoCoMo observation stand-in answers the part it is shown', () => {
  const s: LocomoSession = {
    index: 1,
    dateText: '1:00 pm on 1 May, 2023',
    time: T0,
    turns: Array.from({ length: 6 }, (_, i) => ({ diaId: `D1:${i + 1}`, speaker: i % 2 ? 'Ben' : 'Ana', text: `line ${i + 1}` })),
    observations: [
      { speaker: 'Ana', fact: 'Ana told line 1', diaIds: ['D1:1'] },
      { speaker: 'Ana', fact: 'Ana told lines 3 and 5', diaIds: ['D1:3', 'D1:5'] },
      { speaker: 'Ben', fact: 'Ben told line 6', diaIds: ['D1:6'] },
    ],
  };
  const turns = s.turns.map((t, i) => ({
    id: `x:${t.diaId}`,
    role: i % 2 ? ('assistant' as const) : ('user' as const),
    text: t.text,
    time: T0 + i,
    externalId: t.diaId,
  }));

  async function answer(from: number, to: number, maxItems = 40) {
    const messages = summariseMessages(turns.slice(from, to), { offset: from, part: { index: 1, count: 2 }, includeNotes: false });
    const raw = await observationSummariser(() => s).json(messages, summarySchema(false, maxItems));
    return (JSON.parse(raw) as { events: Array<{ text: string; turns: string[] }> }).events;
  }

  it('only facts from the turns shown, citing only those turns', async () => {
    expect(await answer(0, 4)).toEqual([
      { text: 'Ana told line 1', about: 'Ana', turns: ['D1:1'] },
      { text: 'Ana told lines 3 and 5', about: 'Ana', turns: ['D1:3'] },
    ]);
    expect((await answer(4, 6)).map((e) => [e.text, e.turns])).toEqual([
      ['Ana told lines 3 and 5', ['D1:5']],
      ['Ben told line 6', ['D1:6']],
    ]);
  });

  it('no more items than the schema allows', async () => {
    expect(await answer(0, 6, 1)).toHaveLength(1);
  });
});
