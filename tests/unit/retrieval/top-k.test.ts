import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TopSlots } from '../../../src/memory/retrieval/top-k';

describe('TopSlots', () => {
  it('keeps the m largest scores, and its floor is the m-th largest (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        (scores, m) => {
          const values = Float32Array.from(scores);
          const top = new TopSlots(m, (s) => values[s]!);
          for (let s = 0; s < values.length; s++) top.offer(s);
          const kept = top
            .slots()
            .map((s) => values[s]!)
            .sort((a, b) => b - a);
          const want = [...values].sort((a, b) => b - a).slice(0, m);
          expect(kept).toEqual(want);
          expect(top.floor).toBe(values.length < m ? -Infinity : want[m - 1]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('admits nothing with no room', () => {
    const top = new TopSlots(0, () => 1);
    top.offer(0);
    expect(top.admits(5)).toBe(false);
    expect(top.slots()).toEqual([]);
  });
});
