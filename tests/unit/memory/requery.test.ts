// Self-reflection re-query (seed 002): only a weak first retrieval pays one keyword call, whose
// second search is fused by rank with the first.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { fuseRankings, isWeakRetrieval, requeryKeywords } from '../../../src/memory/recall/requery';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { RefineCache } from '../../../src/memory/recall/refine';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import type { SearchHit } from '../../../src/memory/retrieval/types';
import { withDefaults } from '../../../src/memory/settings';
import type { Memory } from '../../../src/memory/types';
import { DAY, mem, ScriptedModel, T0 } from './helpers';

const hit = (id: string, lexical?: number, dense?: number): SearchHit => ({
  unit: { id, kind: 'memory', text: id, time: 0, sessionId: 's', sourceTurnIds: [] },
  score: { unitId: id, unitKind: 'memory', lexical, dense, fused: 0.01 },
});

describe('isWeakRetrieval', () => {
  it('is weak when nothing shares a word and no meaning match is close', () => {
    expect(isWeakRetrieval([])).toBe(true);
    expect(isWeakRetrieval([hit('a', undefined, 0.2), hit('b', 0, 0.3)])).toBe(true);
    expect(isWeakRetrieval([hit('a', undefined, 0.2), hit('b', 1.3)])).toBe(false);
    expect(isWeakRetrieval([hit('a', undefined, 0.62)])).toBe(false);
  });
});

describe('requeryKeywords and fuseRankings', () => {
  it('joins the keywords of the answer; an unusable answer or a failed call gives none', async () => {
    const ok = new ScriptedModel(() => '```json\n{"keywords": ["dog", " Biscuit ", "", "vet visit"]}\n```');
    expect(await requeryKeywords(ok, 'user: how is my little friend?')).toBe('dog Biscuit vet visit');
    expect(await requeryKeywords(new ScriptedModel(() => 'no idea'), 'x')).toBe('');
    expect(
      await requeryKeywords(
        new ScriptedModel(() => {
          throw new Error('down');
        }),
        'x',
      ),
    ).toBe('');
  });

  it('fuses by rank: units in both lists rise, the first list wins ties', () => {
    const fused = fuseRankings([hit('a'), hit('b'), hit('c')], [hit('c'), hit('d')]).map((h) => h.unit.id);
    expect(fused).toEqual(['c', 'a', 'b', 'd']); // b and d tie at rank 2: b came first
  });
});

describe('prepareTurn with the re-query', () => {
  const memories: Memory[] = [
    mem('m1', 1, 'You adopted a beagle puppy called Biscuit', 'event'),
    mem('m2', 2, 'Biscuit had his first vet visit and was brave', 'event'),
    mem('m3', 3, 'You started a pottery class on Tuesdays', 'event'),
  ];
  const run = async (text: string, llm: ScriptedModel, reflectiveRequery = true) => {
    const index = createHybridIndex();
    for (const m of memories) index.upsert(memoryUnit(m));
    return prepareTurn({
      dialogue: [{ role: 'user', text }],
      now: T0 + 10 * DAY,
      index,
      graph: MemoryGraph.from(memories, []),
      memoriesById: new Map(memories.map((m) => [m.id, m])),
      llm,
      settings: withDefaults({ refinement: false, reflectiveRequery }),
      refineCache: new RefineCache(),
      seed: 1,
    });
  };
  const keywordModel = () =>
    new ScriptedModel((c) => (c.schemaTitle === 'memory_search_keywords' ? '{"keywords":["Biscuit","vet","puppy"]}' : '{}'));

  it('a question in other words finds the memories through one keyword call, and records the keywords', async () => {
    const llm = keywordModel();
    const r = await run('How is my little furry friend doing?', llm);
    expect(llm.count('memory_search_keywords')).toBe(1);
    expect(r.modelCalls).toBe(1);
    expect(r.usedMemory.requery).toBe('Biscuit vet puppy');
    expect(r.usedMemory.memoryIds).toEqual(expect.arrayContaining(['m1', 'm2']));
    expect(r.usedMemory.memoryIds).not.toContain('m3');
  });

  it('a question sharing words with a memory makes no extra call; the switch turns it off', async () => {
    const llm = keywordModel();
    const r = await run('How was the pottery class?', llm);
    expect(llm.count()).toBe(0);
    expect(r.usedMemory.requery).toBeUndefined();
    const off = keywordModel();
    const r2 = await run('How is my little furry friend doing?', off, false);
    expect(off.count()).toBe(0);
    expect(r2.usedMemory.memoryIds).toEqual([]);
  });
});
