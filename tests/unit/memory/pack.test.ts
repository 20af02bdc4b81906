// Packing the reply prompt (src/memory/recall/pack.ts).
import { describe, expect, it } from 'vitest';
import { pack, type TimelineBlock } from '../../../src/memory/recall/pack';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import type { SearchHit } from '../../../src/memory/retrieval/types';
import { mem } from './helpers';

describe('pack', () => {
  // m2 lies on timeline A (through m1), whose note came back empty, and has a
  // timeline of its own (B) with a note. B must go in; before, m2 was dropped as "irrelevant".
  it('a memory on an emptied timeline still goes in through its own timeline with a note', () => {
    const memories = [mem('m1', 1, 'You adopted a puppy'), mem('m2', 5, 'The puppy learned to sit'), mem('m3', 9, 'You bought a leash')];
    const byId = new Map(memories.map((m) => [m.id, m]));
    const hit = (id: string): SearchHit => ({ unit: memoryUnit(byId.get(id)!), score: { unitId: id, unitKind: 'memory', fused: 1 } });
    const irrelevant = new Set(['m1', 'm2']); // timeline A: m1 -> m2, empty note
    const timelineOf = new Map<string, TimelineBlock>([
      [
        'm2',
        {
          timeline: { memoryIds: ['m2', 'm3'], relations: ['Cause'], through: 'm2' },
          text: 'The puppy learned to sit, then a leash.',
          refined: 'The puppy learned to sit, then a leash.',
        },
      ],
    ]);
    const units = pack([hit('m1'), hit('m2')], 300, timelineOf, irrelevant, byId);
    expect(units.map((u) => [u.kind, u.id])).toEqual([['timeline', 'm2']]);
    expect(units[0]!.memoryIds).toEqual(['m2', 'm3']);
  });
});
