import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { RefineCache, refineTimelines } from '../../../src/memory/refine';
import { prepareTurn } from '../../../src/memory/turn';
import { memoryUnit } from '../../../src/memory/pipeline';
import { withDefaults } from '../../../src/memory/settings';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import type { Memory } from '../../../src/memory/types';
import { DAY, edge, mem, ScriptedModel, T0 } from './helpers';

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
  it('answers the same set of timelines from the cache, whatever the order', async () => {
    const { memoriesById } = world();
    const llm = noteModel();
    const cache = new RefineCache();
    const a = { memoryIds: ['m1', 'm2'], relations: ['Cause' as const], through: 'm1' };
    const b = { memoryIds: ['t1', 't2'], relations: ['Changed' as const], through: 't2' };
    const first = await refineTimelines({ llm, dialogue: 'hi', timelines: [a, b], memoriesById, cache });
    const second = await refineTimelines({ llm, dialogue: 'something else', timelines: [b, a], memoriesById, cache });
    expect(llm.count()).toBe(1);
    expect(second.fromCache).toBe(true);
    expect(second.notes).toEqual([first.notes[1], first.notes[0]]);
    // An edited memory text changes the key.
    const edited = new Map(memoriesById);
    edited.set('m2', { ...memoriesById.get('m2')!, text: 'User flew to Alaska' });
    await refineTimelines({ llm, dialogue: 'hi', timelines: [a, b], memoriesById: edited, cache });
    expect(llm.count()).toBe(2);
  });

  it('falls back to the raw timeline where the model gives nothing', async () => {
    const { memoriesById } = world();
    const llm = new ScriptedModel(() => 'garbage');
    const r = await refineTimelines({ llm, dialogue: 'hi', timelines: [{ memoryIds: ['m1'], relations: [], through: 'm1' }], memoriesById, cache: new RefineCache() });
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
    const input = { dialogue, now, index, graph, memoriesById, llm, settings: withDefaults(), refineCache: cache, seed: 1 };
    const r = await prepareTurn(input);
    expect(r.modelCalls).toBe(1);
    expect(r.usedMemory.memoryIds).toContain('m1');
    expect(r.usedMemory.timelines.some((t) => t.memoryIds.join() === 'm1,m2')).toBe(true);
    expect(r.usedMemory.refined?.length).toBe(r.usedMemory.timelines.length);
    expect(r.systemPrompt).toContain('Today is 2024-02-10.');
    expect(r.systemPrompt).toContain('note 1');
    expect(r.systemPrompt).toMatch(/ignore anything that does not fit or would\s+mislead/);
    expect(r.messages.at(-1)).toEqual({ role: 'user', content: dialogue[0].text });
    expect(r.usedMemory.scores.length).toBeGreaterThan(0);
    // Same timelines on the next turn: no refinement call.
    const again = await prepareTurn({ ...input, dialogue: [...dialogue, { role: 'assistant', text: 'Hmm.' }, { role: 'user', text: 'cruise ship or not?' }] });
    expect(again.modelCalls).toBe(0);
    expect(llm.count()).toBe(1);
  });

  it('without refinement puts raw timelines in the prompt, superseded traits as past', async () => {
    const { graph, index, memoriesById } = world();
    const llm = noteModel();
    const r = await prepareTurn({
      dialogue: [{ role: 'user', text: 'Want to get spicy ramen tonight?' }], now, index, graph, memoriesById, llm,
      settings: withDefaults({ refinement: false }), refineCache: new RefineCache(), seed: 1,
    });
    expect(llm.count()).toBe(0);
    expect(r.usedMemory.refined).toBeUndefined();
    expect(r.systemPrompt).toContain('User loves spicy ramen (no longer true: changed later)] -(Changed)->');
  });

  it('plain top-k mode lists memories in time order with no graph and no call', async () => {
    const { graph, index, memoriesById } = world();
    const llm = noteModel();
    const r = await prepareTurn({
      dialogue: [{ role: 'user', text: 'spicy ramen and cruise ships' }], now, index, graph, memoriesById, llm,
      settings: withDefaults({ retrievalMode: 'plain-topk', k: 3 }), refineCache: new RefineCache(), seed: 1,
    });
    expect(llm.count()).toBe(0);
    expect(r.usedMemory.timelines).toEqual([]);
    const lines = r.systemPrompt.split('\n').filter((l) => l.startsWith('- 2024'));
    expect(lines.length).toBe(3);
    expect([...lines].sort()).toEqual(lines);
    expect(r.systemPrompt).toContain('(this is no longer true; it changed later)');
  });

  it('with no memory at all states only the date', async () => {
    const r = await prepareTurn({
      dialogue, now, index: createHybridIndex(), graph: new MemoryGraph(), memoriesById: new Map(), llm: noteModel(),
      settings: withDefaults(), refineCache: new RefineCache(), seed: 1,
    });
    expect(r.usedMemory.memoryIds).toEqual([]);
    expect(r.modelCalls).toBe(0);
    expect(r.systemPrompt).not.toContain('remember');
  });
});
