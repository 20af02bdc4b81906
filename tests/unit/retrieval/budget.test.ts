import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { packByBudget, unitCost } from '../../../src/memory/retrieval/budget';
import type { IndexedUnit } from '../../../src/memory/retrieval/types';

const unit = (id: string, words: number, time: number, turns: string[] = [id]): IndexedUnit => ({
  id,
  kind: 'segment',
  text: Array.from({ length: words }, (_, i) => `w${i}`).join(' '),
  time,
  sessionId: 's',
  sourceTurnIds: turns,
});

describe('packByBudget', () => {
  it('never exceeds the budget, keeps rank priority, and orders by time (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ words: fc.integer({ min: 1, max: 60 }), time: fc.integer({ min: 0, max: 1000 }) }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 300 }),
        (specs, budget) => {
          const ranked = specs.map((s, i) => unit(`u${i}`, s.words, s.time));
          const packed = packByBudget(ranked, budget);
          expect(packed.used).toBeLessThanOrEqual(budget);
          expect(packed.used).toBe(packed.units.reduce((a, p) => a + unitCost(p.unit.text), 0));
          for (let i = 1; i < packed.units.length; i++)
            expect(packed.units[i]!.unit.time).toBeGreaterThanOrEqual(packed.units[i - 1]!.unit.time);
          // Greedy: any skipped unit did not fit in what was left when its turn came.
          const taken = new Set(packed.units.map((p) => p.unit.id));
          let used = 0;
          for (const u of ranked) {
            const c = unitCost(u.text);
            if (taken.has(u.id)) used += c;
            else expect(used + c).toBeGreaterThan(budget);
          }
          for (const p of packed.units) expect(p.unit.sourceTurnIds.length).toBeGreaterThan(0);
        },
      ),
    );
  });

  it('skips a too-big unit but still takes smaller ones after it', () => {
    const packed = packByBudget([unit('a', 5, 3), unit('big', 100, 1), unit('b', 5, 2)], 12);
    expect(packed.units.map((p) => p.unit.id)).toEqual(['b', 'a']);
    expect(packed.turnIds.sort()).toEqual(['a', 'b']);
  });

  it('skipCovered drops a unit whose turns are already in the prompt', () => {
    const seg = unit('seg', 10, 1, ['t1', 't2', 't3']);
    const mem = unit('mem', 3, 1, ['t2']);
    expect(packByBudget([seg, mem], 100, { skipCovered: true }).units.map((p) => p.unit.id)).toEqual(['seg']);
    expect(packByBudget([seg, mem], 100).units).toHaveLength(2);
  });

  it('counts tokens as characters / 4', () => {
    expect(unitCost('abcdefgh', 'tokens')).toBe(2);
    expect(unitCost('  two   words ', 'words')).toBe(2);
  });
});
