// Self-reflection (seed 002), folded into the refinement call: the model judges whether what the
// first retrieval found is enough to answer; if not, its keywords run a second search, fused by rank
// with the first, and what they find reaches the prompt. With refinement off, or nothing to refine,
// the same call runs with no timelines, so the judgement is still made; never more than one call.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { fuseRankings } from '../../../src/memory/recall/requery';
import { parseReflection, refineMessages, timelineNotesSchema } from '../../../src/memory/recall/refine';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { RefineCache } from '../../../src/memory/recall/refine';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import type { SearchHit } from '../../../src/memory/retrieval/types';
import { withDefaults, type MemorySettings } from '../../../src/memory/settings';
import type { Memory } from '../../../src/memory/types';
import { DAY, edge, mem, ScriptedModel, T0, type ScriptedCall, sentText } from './helpers';

const hit = (id: string): SearchHit => ({
  unit: { id, kind: 'memory', text: id, time: 0, sessionId: 's', sourceTurnIds: [] },
  score: { unitId: id, unitKind: 'memory', fused: 0.01 },
});

describe('fuseRankings', () => {
  it('fuses by rank: units in both lists rise, the first list wins ties', () => {
    const fused = fuseRankings([hit('a'), hit('b'), hit('c')], [hit('c'), hit('d')]).map((h) => h.unit.id);
    expect(fused).toEqual(['c', 'a', 'b', 'd']); // b and d tie at rank 2: b came first
  });
});

describe('the reflection part of the call', () => {
  it('asks for the judgement only when reflecting; no timelines means no notes asked', () => {
    expect(timelineNotesSchema(2, true)).toMatchObject({ title: 'timeline_notes', required: ['notes', 'enough', 'keywords'] });
    expect(timelineNotesSchema(2)).toMatchObject({ required: ['notes'] });
    expect(timelineNotesSchema(0, true)).toMatchObject({ title: 'memory_reflection', required: ['enough', 'keywords'] });
    const none = refineMessages('user: how is my friend?', [], [], true);
    expect(none[0]!.content).toMatch(/enough/);
    expect(none[0]!.content).not.toMatch(/timeline/i);
    expect(none[1]!.content).toContain('Found in memory: nothing.');
  });

  it('reads the judgement defensively; keywords count only when not enough', () => {
    expect(parseReflection('{"enough": false, "keywords": ["dog", " Biscuit ", "", "vet visit"]}')).toEqual({
      enough: false,
      keywords: ['dog', 'Biscuit', 'vet visit'],
    });
    expect(parseReflection('```json\n{"notes": [], "enough": "no", "keywords": "dog, vet"}\n```')).toEqual({
      enough: false,
      keywords: ['dog', 'vet'],
    });
    expect(parseReflection('{"enough": true, "keywords": ["ignored"]}')).toEqual({ enough: true, keywords: [] });
    for (const junk of ['', 'no idea', '{"keywords": ["x"]}', '{"enough": "maybe"}', '[]']) expect(parseReflection(junk)).toBeUndefined();
  });
});

describe('prepareTurn with self-reflection', () => {
  const memories: Memory[] = [
    mem('m1', 1, 'You adopted a beagle puppy called Biscuit', 'event'),
    mem('m2', 2, 'Biscuit had his first vet visit and was brave', 'event'),
    mem('m3', 3, 'You started a pottery class on Tuesdays', 'event'),
    mem('m4', 4, 'Your pottery teacher praised your first bowl', 'event'),
  ];
  const byId = new Map(memories.map((m) => [m.id, m]));
  const run = async (text: string, llm: ScriptedModel, settings: Partial<MemorySettings> = {}) => {
    const index = createHybridIndex();
    for (const m of memories) index.upsert(memoryUnit(m));
    return prepareTurn({
      dialogue: [{ role: 'user', text }],
      now: T0 + 10 * DAY,
      index,
      graph: MemoryGraph.from(memories, [edge('m1', 'm2'), edge('m3', 'm4')]),
      memoriesById: byId,
      llm,
      settings: withDefaults(settings),
      refineCache: new RefineCache(),
      seed: 1,
    });
  };
  /** Notes for whatever timelines are listed; the judgement as given. */
  const judging = (answer: { enough: boolean; keywords: string[] } | 'garbage') =>
    new ScriptedModel((call: ScriptedCall) => {
      if (call.kind === 'chat') return 'ok';
      if (answer === 'garbage') return 'I think so.';
      const n = (call.messages[1]!.content.match(/^\d+\. /gm) ?? []).length;
      return JSON.stringify({ notes: Array.from({ length: n }, (_, i) => ({ timeline: i + 1, note: `note ${i + 1}` })), ...answer });
    });
  // Shares "pottery" with two memories: the old word-overlap trigger never fired on such a turn.
  const question = 'The pottery is fine, but how is my little furry friend doing?';

  it('"not enough": the keywords search again and their hits reach the prompt, in the one call', async () => {
    const llm = judging({ enough: false, keywords: ['Biscuit', 'vet'] });
    const r = await run(question, llm);
    expect(llm.count()).toBe(1);
    expect(llm.count('timeline_notes')).toBe(1);
    expect(r.modelCalls).toBe(1);
    // The call was shown what the first search found, and asked for the judgement.
    const sent = llm.calls[0]!.messages.map((m) => m.content).join('\n');
    expect(sent).toContain('pottery class');
    expect(sent).not.toContain('Biscuit');
    expect(sent).toMatch(/enough/);
    expect(r.usedMemory).toMatchObject({ reflected: 'searched', requery: 'Biscuit vet' });
    expect(r.usedMemory.memoryIds).toEqual(expect.arrayContaining(['m1', 'm2', 'm3']));
    expect(sentText(r)).toContain('Biscuit had his first vet visit');
    // The keywords were written from what the call showed: those sources are recorded with them.
    expect(r.usedMemory.reflectedOn).toEqual(expect.arrayContaining(['m3', 'm4']));
    expect(r.usedMemory.reflectedOn).not.toContain('m1');
  });

  it('"enough": no second search; the prompt keeps only what the first search found', async () => {
    const llm = judging({ enough: true, keywords: [] });
    const r = await run(question, llm);
    expect(llm.count()).toBe(1);
    expect(r.usedMemory).toMatchObject({ reflected: 'enough' });
    expect(r.usedMemory.requery).toBeUndefined();
    expect(r.usedMemory.memoryIds).not.toContain('m1');
  });

  it('"not enough" without keywords, or an unreadable answer: no second search, and said so', async () => {
    const none = await run(question, judging({ enough: false, keywords: [] }));
    expect(none.usedMemory).toMatchObject({ reflected: 'no-keywords' });
    expect(none.usedMemory.memoryIds).not.toContain('m1');
    const garbage = await run(question, judging('garbage'));
    expect(garbage.usedMemory.reflected).toBeUndefined();
    expect(garbage.usedMemory.memoryIds).not.toContain('m1');
    expect(garbage.problems.join()).toMatch(/self-reflection unreadable/);
  });

  it('with refinement off, in plain top-k mode, or with nothing found, the same call runs with no timelines', async () => {
    for (const settings of [{ refinement: false }, { retrievalMode: 'plain-topk' as const }]) {
      const llm = judging({ enough: false, keywords: ['Biscuit', 'vet'] });
      const r = await run(question, llm, settings);
      expect(llm.count('memory_reflection')).toBe(1);
      expect(llm.count()).toBe(1);
      expect(r.usedMemory.refined).toBeUndefined();
      expect(r.usedMemory.memoryIds).toEqual(expect.arrayContaining(['m1', 'm2']));
      // What it judged was shown as found.
      expect(llm.calls[0]!.messages[1]!.content).toMatch(/Found in memory:\n- .*pottery/);
    }
    const llm = judging({ enough: false, keywords: ['Biscuit'] });
    const r = await run('How is my little furry friend doing?', llm);
    expect(llm.calls[0]!.messages[1]!.content).toContain('Found in memory: nothing.');
    expect(r.usedMemory.memoryIds).toEqual(expect.arrayContaining(['m1']));
    expect(r.usedMemory.reflectedOn).toEqual([]);
  });

  it('switched off: no judgement and no call beyond refinement; no memory at all: no call', async () => {
    const llm = judging({ enough: false, keywords: ['Biscuit'] });
    const r = await run(question, llm, { reflectiveRequery: false });
    expect(llm.count('timeline_notes')).toBe(1);
    expect(llm.calls[0]!.messages[0]!.content).not.toMatch(/enough/);
    expect(r.usedMemory.reflected).toBeUndefined();
    expect(r.usedMemory.memoryIds).not.toContain('m1');
    const off = judging({ enough: false, keywords: ['Biscuit'] });
    await run(question, off, { reflectiveRequery: false, refinement: false });
    expect(off.count()).toBe(0);
    const empty = judging({ enough: false, keywords: ['Biscuit'] });
    const nothing = await prepareTurn({
      dialogue: [{ role: 'user', text: question }],
      now: T0,
      index: createHybridIndex(),
      graph: new MemoryGraph(),
      memoriesById: new Map(),
      llm: empty,
      settings: withDefaults(),
      refineCache: new RefineCache(),
      seed: 1,
    });
    expect(empty.count()).toBe(0);
    expect(nothing.usedMemory.reflected).toBeUndefined();
  });
});
