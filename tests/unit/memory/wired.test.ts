// Parts of the method that live inside a larger flow, each shown to be wired in: taking the call
// out of the flow fails a test here (reviews found both could be removed with every test green).
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { segmentSession } from '../../../src/memory/ingest/segments';
import { RefineCache } from '../../../src/memory/recall/refine';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { withDefaults } from '../../../src/memory/settings';
import type { Turn } from '../../../src/memory/types';
import { DAY, mem, T0 } from './helpers';

describe('time decay in the reply path', () => {
  // The old event matches the question a little better by words; a week-old one a little worse.
  const memories = [
    mem('old', 0, 'You went hiking in the mountains with the hiking club'),
    mem('new', 995, 'You went hiking with friends'),
  ];
  const turn = (halfLife: number) => {
    const index = createHybridIndex();
    for (const m of memories) index.upsert(memoryUnit(m));
    return prepareTurn({
      dialogue: [{ role: 'user', text: 'Where did I go hiking with the hiking club in the mountains?' }],
      now: T0 + 1000 * DAY,
      index,
      graph: MemoryGraph.from(memories, []),
      memoriesById: new Map(memories.map((m) => [m.id, m])),
      settings: withDefaults({ timeDecayHalfLifeDays: halfLife, contextBudgetWords: 300 }),
      refineCache: new RefineCache(),
      seed: 1,
    });
  };

  it('with a half-life, a recent event outranks a much older one that matches a little better', async () => {
    const off = await turn(0);
    const on = await turn(30);
    expect(off.usedMemory.memoryIds[0]).toBe('old');
    expect(on.usedMemory.memoryIds[0]).toBe('new');
  });
});

describe('denoising of chat segments', () => {
  it("a passage's index copy leaves out greetings, filler turns and the speakers' names; its prompt text keeps every word", async () => {
    const turns: Turn[] = [
      'Hey Mel! I went to a pottery class.',
      'Wow, cool!',
      'Mel, what did you make?',
      'A blue bowl for my mother, and Mel liked it.',
    ].map((text, i) => ({
      id: `t${i}`,
      sessionId: 's',
      index: i,
      role: i % 2 === 0 ? 'user' : 'assistant',
      text,
      time: T0 + i,
      status: 'complete',
    }));
    const [segment] = await segmentSession(turns, { ranges: [{ first: 0, last: 3 }], names: ['Mel'] });
    // "Mel" mid-sentence: only the name rule removes it (the greeting rule takes the leading ones).
    expect(segment!.indexText).toBe('I went to a pottery class.\nwhat did you make?\nA blue bowl for my mother, and liked it.');
    expect(segment!.text).toContain('Hey Mel!');
    expect(segment!.text).toContain('Wow, cool!');
  });
});
