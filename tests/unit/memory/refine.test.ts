// Phase II-2 is conditioned on the dialogue (Theanine): a note is written for one dialogue, so the
// refinement cache answers only the very same input, and a note that calls a timeline irrelevant
// leaves its memories out of that turn only.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { RefineCache, refineTimelines, type RefineInput } from '../../../src/memory/recall/refine';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { withDefaults } from '../../../src/memory/settings';
import type { Memory, Timeline } from '../../../src/memory/types';
import { DAY, edge, FixedIndex, mem, ScriptedModel, T0, sentText } from './helpers';

const memories: Memory[] = [
  mem('c1', 1, 'You bought a second-hand car', 'event'),
  mem('c2', 5, 'You sold your car to your neighbour', 'event'),
  mem('b1', 2, 'You oiled your bike chain', 'event'),
  mem('b2', 6, 'Your bike chain snapped on the hill', 'event'),
];
const byId = new Map(memories.map((m) => [m.id, m]));
const car: Timeline = { memoryIds: ['c1', 'c2'], relations: ['Cause'], through: 'c2' };
const bike: Timeline = { memoryIds: ['b1', 'b2'], relations: ['SameTopic'], through: 'b2' };

/** Writes a note per timeline; an empty one when the timeline shares no word with the last user line. */
const notingModel = () =>
  new ScriptedModel(({ messages }) => {
    const text = messages[1]!.content;
    const last = [...text.matchAll(/^user: (.*)$/gm)].at(-1)?.[1]?.toLowerCase() ?? '';
    const words = new Set(last.split(/\W+/).filter((w) => w.length > 2));
    const lines = [...text.matchAll(/^(\d+)\. (.*)$/gm)];
    return JSON.stringify({
      notes: lines.map((l) => ({
        timeline: Number(l[1]),
        note: l[2]!
          .toLowerCase()
          .split(/\W+/)
          .some((w) => words.has(w))
          ? `About it: ${l[2]!.slice(0, 60)}`
          : '',
      })),
      enough: true,
      keywords: [],
    });
  });

describe('the refinement cache', () => {
  const base = (llm: ScriptedModel, cache: RefineCache, extra: Partial<RefineInput> = {}): RefineInput => ({
    llm,
    dialogue: 'user: any bike chain tips?',
    timelines: [car, bike],
    memoriesById: byId,
    cache,
    ...extra,
  });

  it('answers the same input from the cache, and misses on every change of what the note depends on', async () => {
    const llm = notingModel();
    const cache = new RefineCache();
    await refineTimelines(base(llm, cache));
    expect(llm.count()).toBe(1);
    // The very same input: no call.
    const again = await refineTimelines(base(llm, cache));
    expect(again.fromCache).toBe(true);
    expect(llm.count()).toBe(1);

    const edited = (id: string, patch: Partial<Memory>) => new Map(byId).set(id, { ...byId.get(id)!, ...patch });
    const changes: Array<[string, Partial<RefineInput>]> = [
      ['the last user message', { dialogue: 'user: how is my car doing?' }],
      ['an earlier turn', { dialogue: 'user: hello again\nassistant: hi!\nuser: any bike chain tips?' }],
      ['who said it', { dialogue: 'assistant: any bike chain tips?' }],
      ['a memory text', { memoriesById: edited('b1', { text: 'You greased your bike chain' }) }],
      ['a memory date', { memoriesById: edited('b1', { time: T0 + 3 * DAY }) }],
      ['a memory marked no longer true', { memoriesById: edited('c1', { endedAt: T0 + 4 * DAY }) }],
      ['a memory superseded', { memoriesById: edited('b1', { supersededBy: 'b2' }) }],
      ['a relation', { timelines: [{ ...car, relations: ['Changed'] }, bike] }],
      [
        'a memory more in a timeline',
        { timelines: [car, { ...bike, memoryIds: ['b1', 'b2', 'c1'], relations: ['SameTopic', 'SameTopic'] }] },
      ],
      ['the timelines asked about', { timelines: [car] }],
    ];
    for (const [what, change] of changes) {
      const before = llm.count();
      const r = await refineTimelines(base(llm, cache, change));
      expect({ what, fromCache: r.fromCache, calls: llm.count() - before }).toEqual({ what, fromCache: false, calls: 1 });
    }
    // Each changed input, asked again, is answered from the cache.
    for (const [what, change] of changes) {
      const r = await refineTimelines(base(llm, cache, change));
      expect({ what, fromCache: r.fromCache }).toEqual({ what, fromCache: true });
    }
    expect(llm.count()).toBe(1 + changes.length);
  });

  it('a note written for one dialogue is not reused for another (bike tips, then the car)', async () => {
    const llm = notingModel();
    const cache = new RefineCache();
    const bikeTurn = await refineTimelines(base(llm, cache));
    expect(bikeTurn.notes[0]).toBe(''); // the car timeline does not help with bike tips
    const carTurn = await refineTimelines(base(llm, cache, { dialogue: 'user: How is my car doing?' }));
    expect(carTurn.notes[0]).toMatch(/car/);
    expect(llm.count()).toBe(2);
  });
});

describe('prepareTurn: an irrelevant note applies to its turn only', () => {
  it('the car timeline, left out of a turn about bike chains, is back (refined again) when the car is asked about', async () => {
    const index = new FixedIndex(['c2', 'b2']);
    for (const m of memories) index.upsert(memoryUnit(m));
    const llm = notingModel();
    const input = {
      now: T0 + 40 * DAY,
      index,
      graph: MemoryGraph.from(memories, [edge('c1', 'c2', 'Cause'), edge('b1', 'b2')]),
      memoriesById: byId,
      llm,
      settings: withDefaults({ refineWhenUnsure: false }),
      refineCache: new RefineCache(),
      seed: 1,
    };
    const first = await prepareTurn({ ...input, dialogue: [{ role: 'user', text: 'Any bike chain tips?' }] });
    expect(first.usedMemory.memoryIds).not.toContain('c2');
    const second = await prepareTurn({
      ...input,
      dialogue: [
        { role: 'user', text: 'Any bike chain tips?' },
        { role: 'assistant', text: 'Keep it oiled.' },
        { role: 'user', text: 'How is my car doing?' },
      ],
    });
    expect(second.modelCalls).toBe(1);
    expect(llm.count()).toBe(2);
    expect(second.usedMemory.memoryIds).toEqual(expect.arrayContaining(['c1', 'c2']));
    expect(sentText(second)).toMatch(/About it: .*car/);
  });
});
