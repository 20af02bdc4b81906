import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { RefineCache, refineTimelines } from '../../../src/memory/recall/refine';
import { fitTimeline, prepareTurn } from '../../../src/memory/recall/turn';
import { segmentUnit } from '../../../src/memory/retrieval/units';
import { countWords } from '../../../src/memory/retrieval/tokenize';
import { promptItem } from '../../../src/memory/retrieval/budget';
import { formatTimeline } from '../../../src/memory/recall/timelines';
import fc from 'fast-check';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { withDefaults } from '../../../src/memory/settings';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import type { Memory, Segment, Timeline } from '../../../src/memory/types';
import { DAY, edge, FixedIndex, mem, ScriptedModel, T0, sentText } from './helpers';

const memories: Memory[] = [
  mem('m1', 1, 'User is afraid of cruise ships after a storm', 'event'),
  mem('m2', 5, 'User planned a trip to Alaska by plane', 'event'),
  mem('t1', 2, 'User loves spicy ramen', 'user-trait', { subject: 'user', supersededBy: 't2' }),
  mem('t2', 9, 'User stopped eating spicy ramen for health reasons', 'user-trait', { subject: 'user' }),
];
const edges = [edge('m1', 'm2', 'Cause'), edge('t1', 't2', 'Changed')];

function world() {
  const graph = MemoryGraph.from(memories, edges);
  const index = createHybridIndex();
  for (const m of memories) index.upsert(memoryUnit(m));
  const memoriesById = new Map(memories.map((m) => [m.id, m]));
  return { graph, index, memoriesById };
}

const noteModel = () =>
  new ScriptedModel(({ messages }) => {
    const count = (messages[1].content.match(/^\d+\. /gm) ?? []).length;
    return JSON.stringify({ notes: Array.from({ length: count }, (_, i) => ({ timeline: i + 1, note: `note ${i + 1}` })) });
  });

describe('refineTimelines', () => {
  it('falls back to the raw timeline where the model gives nothing', async () => {
    const { memoriesById } = world();
    const llm = new ScriptedModel(() => 'garbage');
    const r = await refineTimelines({
      llm,
      dialogue: 'hi',
      timelines: [{ memoryIds: ['m1'], relations: [], through: 'm1' }],
      memoriesById,
      cache: new RefineCache(),
    });
    expect(r.notes).toEqual(r.raw);
    expect(r.raw[0]).toContain('cruise ships');
  });
});

describe('prepareTurn', () => {
  const now = T0 + 40 * DAY;
  const dialogue = [{ role: 'user' as const, text: 'Should I book a cruise ship holiday this summer?' }];

  it('retrieves, untangles, refines once and builds the reply prompt', async () => {
    const { graph, index, memoriesById } = world();
    const llm = noteModel();
    const cache = new RefineCache();
    const input = {
      dialogue,
      now,
      index,
      graph,
      memoriesById,
      llm,
      settings: withDefaults({ refineWhenUnsure: false }),
      refineCache: cache,
      seed: 1,
    };
    const r = await prepareTurn(input);
    expect(r.modelCalls).toBe(1);
    expect(r.usedMemory.memoryIds).toContain('m1');
    expect(r.usedMemory.timelines.some((t) => t.memoryIds.join() === 'm1,m2')).toBe(true);
    expect(r.usedMemory.refined?.length).toBe(r.usedMemory.timelines.length);
    expect(sentText(r)).toContain('Today is 2024-02-10.');
    expect(sentText(r)).toContain('note 1');
    expect(sentText(r)).toMatch(/ignore anything that does not fit or would\s+mislead/);
    // What memory found rides with the person's message, marked as not theirs.
    expect(r.messages.at(-1)!.role).toBe('user');
    const last = r.messages.at(-1)!.content;
    expect(last.startsWith('<memory>\n')).toBe(true);
    expect(last.endsWith(`\n</memory>\n\n${dialogue[0].text}`)).toBe(true);
    expect(last).toContain('note 1');
    expect(r.usedMemory.scores.length).toBeGreaterThan(0);
    // The same turn again (a regenerated reply): answered from the cache.
    const same = await prepareTurn(input);
    expect(same.modelCalls).toBe(0);
    expect(sentText(same)).toBe(sentText(r));
    // The next turn, on the same timelines: the notes are written again for the new dialogue.
    const again = await prepareTurn({
      ...input,
      dialogue: [...dialogue, { role: 'assistant', text: 'Hmm.' }, { role: 'user', text: 'cruise ship or not?' }],
    });
    expect(again.modelCalls).toBe(1);
    expect(llm.count()).toBe(2);
  });

  it('without refinement puts raw timelines in the prompt, superseded traits as past', async () => {
    const { graph, index, memoriesById } = world();
    const llm = noteModel();
    const r = await prepareTurn({
      dialogue: [{ role: 'user', text: 'Want to get spicy ramen tonight?' }],
      now,
      index,
      graph,
      memoriesById,
      llm,
      settings: withDefaults({ refinement: false, reflectiveRequery: false }),
      refineCache: new RefineCache(),
      seed: 1,
    });
    expect(llm.count()).toBe(0);
    expect(r.usedMemory.refined).toBeUndefined();
    expect(sentText(r)).toContain('; no longer true)] -(Changed)->');
  });

  it('plain top-k mode lists memories in time order with no graph and no call', async () => {
    const { graph, index, memoriesById } = world();
    const llm = noteModel();
    const r = await prepareTurn({
      dialogue: [{ role: 'user', text: 'spicy ramen and cruise ships' }],
      now,
      index,
      graph,
      memoriesById,
      llm,
      settings: withDefaults({ retrievalMode: 'plain-topk', k: 3, reflectiveRequery: false }),
      refineCache: new RefineCache(),
      seed: 1,
    });
    expect(llm.count()).toBe(0);
    expect(r.usedMemory.timelines).toEqual([]);
    const lines = sentText(r)
      .split('\n')
      .filter((l) => l.startsWith('- 2024'));
    expect(lines.length).toBe(3);
    expect(r.units.every((u) => u.kind === 'memory')).toBe(true);
    expect([...lines].sort()).toEqual(lines);
    expect(sentText(r)).toContain('; no longer true)');
  });

  it('with no memory at all states only the date', async () => {
    const r = await prepareTurn({
      dialogue,
      now,
      index: createHybridIndex(),
      graph: new MemoryGraph(),
      memoriesById: new Map(),
      llm: noteModel(),
      settings: withDefaults({ refineWhenUnsure: false }),
      refineCache: new RefineCache(),
      seed: 1,
    });
    expect(r.usedMemory.memoryIds).toEqual([]);
    expect(r.modelCalls).toBe(0);
    expect(r.messages.slice(1).some((m) => m.content.includes('<memory>'))).toBe(false);
    expect(r.messages.at(-1)).toEqual({ role: 'user', content: dialogue[0].text });
  });
});

function segment(id: string, day: number, turnIds: string[], text: string, indexText = text): Segment {
  return { id, sessionId: `s${day}`, firstTurn: 0, lastTurn: turnIds.length - 1, turnIds, text, indexText, time: T0 + day * DAY };
}

describe('prepareTurn over memories and segments', () => {
  const now = T0 + 40 * DAY;
  // m1 -> m2 -> m3 form one timeline; t9 stands alone; two segments of past sessions.
  const ms: Memory[] = [
    mem('m1', 1, 'User adopted a rescue dog called Biscuit', 'event', { sourceTurnIds: ['a1'] }),
    mem('m2', 3, 'Biscuit was afraid of the vacuum cleaner', 'event', { sourceTurnIds: ['a2'] }),
    mem('m3', 8, 'User took Biscuit to obedience classes', 'event', { sourceTurnIds: ['b1'] }),
    // An event, not a trait: a current trait is told in the system prompt (the persona bank) and not again.
    mem('t9', 12, 'User prefers tea over coffee', 'event', { sourceTurnIds: ['c1'] }),
  ];
  const segs = [
    segment(
      'seg-a',
      2,
      ['a1', 'a2'],
      'user: We got Biscuit from the shelter!\nassistant: What a lovely name.',
      'biscuit shelter lovely name',
    ),
    segment('seg-c', 20, ['c5', 'c6'], 'user: The vet said Biscuit needs a diet.\nassistant: Poor Biscuit.', 'vet biscuit diet'),
  ];
  const world2 = (ranking: string[]) => {
    const index = new FixedIndex(ranking);
    for (const m of ms) index.upsert(memoryUnit(m));
    for (const s of segs) index.upsert(segmentUnit(s));
    return {
      index,
      graph: MemoryGraph.from(ms, [edge('m1', 'm2', 'React'), edge('m2', 'm3', 'Want')]),
      memoriesById: new Map(ms.map((m) => [m.id, m])),
    };
  };
  const base = { dialogue: [{ role: 'user' as const, text: 'How is Biscuit doing?' }], now, refineCache: new RefineCache(), seed: 1 };

  it('retrieves both kinds in one ranking, puts them in time order, segments with their original words', async () => {
    const { index, graph, memoriesById } = world2(['seg-c', 'm3', 't9', 'seg-a']);
    const r = await prepareTurn({
      ...base,
      index,
      graph,
      memoriesById,
      settings: withDefaults({ refinement: false, contextBudgetWords: 300 }),
    });
    expect(r.usedMemory.segmentIds).toEqual(['seg-c', 'seg-a']);
    expect(r.usedMemory.scores.map((s) => s.unitKind)).toEqual(['segment', 'memory', 'memory', 'segment']);
    // The top memory goes in through its timeline (n = 1), the other memory as itself.
    expect(r.usedMemory.timelines.map((t) => t.memoryIds)).toEqual([['m1', 'm2', 'm3'], ['t9']].slice(0, r.usedMemory.timelines.length));
    expect(r.usedMemory.memoryIds.slice(0, 3)).toEqual(['m3', 'm1', 'm2']);
    expect(sentText(r)).toContain('  user: The vet said Biscuit needs a diet.');
    expect(sentText(r)).not.toContain('vet biscuit diet');
    // Time order in the prompt, whatever the ranking: seg-a (day 2), timeline at m3 (day 8), t9 (day 12), seg-c (day 20).
    const times = r.units.map((u) => u.time);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    const pos = (s: string) => sentText(r).indexOf(s);
    expect(pos('We got Biscuit')).toBeLessThan(pos('-(React)->'));
    expect(pos('-(React)->')).toBeLessThan(pos('tea over coffee'));
    expect(pos('tea over coffee')).toBeLessThan(pos('The vet said'));
    expect(r.budget.used).toBe(countWords(r.units.map((u) => promptItem(u.text)).join('\n')));
  });

  it('skips a memory whose source turns are already in the prompt, but never a timeline', async () => {
    const { index, graph, memoriesById } = world2(['seg-a', 'm1', 't9']);
    const plain = await prepareTurn({
      ...base,
      index,
      graph,
      memoriesById,
      settings: withDefaults({ retrievalMode: 'plain-topk', contextBudgetWords: 300 }),
    });
    // m1's only turn (a1) is inside seg-a, which ranks first.
    expect(plain.usedMemory.memoryIds).toEqual(['t9']);
    expect(plain.usedMemory.timelines).toEqual([]);
    const withGraph = await prepareTurn({
      ...base,
      index,
      graph,
      memoriesById,
      settings: withDefaults({ refinement: false, contextBudgetWords: 300 }),
    });
    expect(withGraph.units.map((u) => u.kind)).toContain('timeline');
    expect(withGraph.usedMemory.memoryIds).toContain('m1');
  });

  it('a refined timeline goes in as its note, and an empty note leaves its memories out', async () => {
    const { index, graph, memoriesById } = world2(['m2', 't9', 'seg-c']);
    const llm = new ScriptedModel(() =>
      JSON.stringify({
        notes: [
          { timeline: 1, note: 'Biscuit settled in after a shaky start.' },
          { timeline: 2, note: '' },
        ],
      }),
    );
    const r = await prepareTurn({
      ...base,
      index,
      graph,
      memoriesById,
      llm,
      refineCache: new RefineCache(),
      settings: withDefaults({ contextBudgetWords: 300, refineWhenUnsure: false }),
    });
    expect(llm.count()).toBe(1);
    expect(r.usedMemory.refined).toEqual(['Biscuit settled in after a shaky start.']);
    expect(sentText(r)).toContain('2024-01-02 to 2024-01-09: Biscuit settled in after a shaky start.');
    expect(r.usedMemory.memoryIds).not.toContain('t9');
    expect(r.usedMemory.segmentIds).toEqual(['seg-c']);
  });

  it('never exceeds the budget, and every unit in the prompt is accounted for (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 80 }),
        fc.shuffledSubarray(['m1', 'm2', 'm3', 't9', 'seg-a', 'seg-c']),
        fc.constantFrom<'timelines' | 'plain-topk'>('timelines', 'plain-topk'),
        async (budget, ranking, retrievalMode) => {
          const { index, graph, memoriesById } = world2(ranking);
          const r = await prepareTurn({
            ...base,
            index,
            graph,
            memoriesById,
            settings: withDefaults({ refinement: false, retrievalMode, contextBudgetWords: budget }),
          });
          expect(r.budget.used).toBeLessThanOrEqual(budget);
          expect(r.budget.used).toBe(countWords(r.units.map((u) => promptItem(u.text)).join('\n')));
          for (const u of r.units) expect(sentText(r)).toContain(u.text);
          // Every word of the remembered list is paid for, its bullets included.
          if (r.units.length > 0) expect(sentText(r)).toContain(`${r.units.map((u) => promptItem(u.text)).join('\n')}\n</memory>`);
          const ids = new Set(r.units.flatMap((u) => u.memoryIds));
          expect(new Set(r.usedMemory.memoryIds)).toEqual(ids);
          expect(r.usedMemory.scores.length).toBe(r.units.length);
          // A memory appears once: on its own or inside one timeline.
          expect(r.units.flatMap((u) => u.memoryIds).length).toBe(ids.size);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('fitTimeline', () => {
  it('keeps a contiguous part around the retrieved memory within the word limit (property)', () => {
    const long = Array.from({ length: 12 }, (_, i) => mem(`x${i}`, i, `event number ${i} with a few more words`));
    const byId = new Map(long.map((m) => [m.id, m]));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 11 }), fc.integer({ min: 1, max: 200 }), (at, maxWords) => {
        const t: Timeline = { memoryIds: long.map((m) => m.id), relations: long.slice(1).map(() => 'Cause' as const), through: `x${at}` };
        const f = fitTimeline(t, byId, maxWords);
        expect(f.memoryIds).toContain(`x${at}`);
        expect(f.relations.length).toBe(f.memoryIds.length - 1);
        const first = long.findIndex((m) => m.id === f.memoryIds[0]);
        expect(f.memoryIds).toEqual(long.slice(first, first + f.memoryIds.length).map((m) => m.id));
        const words = countWords(promptItem(formatTimeline(f, byId)));
        if (f.memoryIds.length > 1) expect(words).toBeLessThanOrEqual(maxWords);
        // Maximal: adding a neighbour on either side would overflow.
        for (const ext of [first - 1, first + f.memoryIds.length]) {
          if (ext < 0 || ext >= long.length) continue;
          const lo = Math.min(first, ext);
          const bigger: Timeline = {
            memoryIds: long.slice(lo, lo + f.memoryIds.length + 1).map((m) => m.id),
            relations: Array(f.memoryIds.length).fill('Cause'),
            through: t.through,
          };
          expect(countWords(promptItem(formatTimeline(bigger, byId)))).toBeGreaterThan(maxWords);
        }
      }),
    );
  });
});
