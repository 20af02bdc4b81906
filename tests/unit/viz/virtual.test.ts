import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RowHeights, keyTarget } from '../../../src/viz/virtual';

describe('RowHeights', () => {
  it('estimates unmeasured rows, then uses the mean of the measured ones', () => {
    const h = new RowHeights(4, 50);
    expect(h.total()).toBe(200);
    expect(h.offset(2)).toBe(100);
    expect(h.set(0, 80)).toBe(true);
    expect(h.set(0, 80.2)).toBe(false); // sub-pixel noise is no change
    // Row 0 measured 80; the three others now estimated at 80 too.
    expect(h.total()).toBe(320);
    expect(h.set(1, 40)).toBe(true);
    expect(h.estimate()).toBe(60);
    expect([h.offset(1), h.offset(2), h.offset(3), h.total()]).toEqual([80, 120, 180, 240]);
    expect(h.isMeasured(1)).toBe(true);
    expect(h.isMeasured(2)).toBe(false);
    h.reset();
    expect(h.total()).toBe(200);
  });

  it('ignores measurements out of range or not numbers', () => {
    const h = new RowHeights(2, 10);
    expect(h.set(-1, 5)).toBe(false);
    expect(h.set(2, 5)).toBe(false);
    expect(h.set(0, Number.NaN)).toBe(false);
    expect(h.total()).toBe(20);
  });

  it('finds the row under a point and the rows a window needs', () => {
    const h = new RowHeights(10, 10);
    expect(h.indexAt(0)).toBe(0);
    expect(h.indexAt(9.99)).toBe(0);
    expect(h.indexAt(10)).toBe(1);
    expect(h.indexAt(-50)).toBe(0);
    expect(h.indexAt(1e9)).toBe(9);
    expect(h.range(25, 45)).toEqual([2, 5]);
    expect(h.range(25, 45, 2)).toEqual([0, 7]);
    expect(h.range(95, 400, 3)).toEqual([6, 10]);
    // Windows that miss the list: above it, below it, or empty.
    expect(h.range(-100, 0)).toEqual([0, 0]);
    expect(h.range(100, 200)).toEqual([0, 0]);
    expect(h.range(30, 30)).toEqual([0, 0]);
    expect(new RowHeights(0, 10).range(0, 100)).toEqual([0, 0]);
    expect(new RowHeights(0, 10).indexAt(5)).toBe(-1);
  });

  it('apply: how far the row under the viewport top moved', () => {
    // Viewport top at 55 (inside row 5 of ten 10-px rows): rows 0-1 turn out 30 px each.
    const h = new RowHeights(10, 10);
    for (let i = 0; i < 10; i++) h.set(i, 10);
    expect(
      h.apply(
        [
          [0, 30],
          [1, 30],
        ],
        55,
      ),
    ).toBe(40);
    expect(h.offset(5)).toBe(90);
    // A row below the viewport top changing moves nothing above it.
    expect(h.apply([[8, 50]], 95)).toBe(0);
    // The list scrolled entirely past: its whole growth counts.
    const total = h.total();
    expect(h.apply([[9, 20]], total + 100)).toBe(10);
    // At the very top nothing needs to move.
    expect(h.apply([[0, 10]], 0)).toBe(0);
    // Unchanged measurements move nothing.
    expect(h.apply([[3, 10]], 55)).toBe(0);
  });

  it('offsets are the running sum of heights for any measurements', () => {
    const cases = new Set<string>();
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 300 })), { maxLength: 80 }),
        fc.integer({ min: 1, max: 200 }),
        (count, sets, estimate) => {
          cases.add(JSON.stringify([count, sets, estimate]));
          const h = new RowHeights(count, estimate);
          const known = new Map<number, number>();
          for (const [i, v] of sets) {
            h.set(i % count, v);
            known.set(i % count, v);
          }
          const mean = known.size ? [...known.values()].reduce((a, b) => a + b, 0) / known.size : estimate;
          let y = 0;
          for (let i = 0; i < count; i++) {
            expect(h.offset(i)).toBeCloseTo(y, 6);
            const hi = known.get(i) ?? mean;
            if (hi > 0) expect(h.indexAt(y + hi / 2)).toBe(i);
            y += hi;
          }
          expect(h.total()).toBeCloseTo(y, 6);
        },
      ),
      { numRuns: 200, seed: 3 },
    );
    expect(cases.size).toBeGreaterThan(150);
  });
});

describe('keyTarget', () => {
  it("moves by one, by a page, to the ends, clamped; other keys are not the list's", () => {
    const moves: [string, number, number | null][] = [
      ['ArrowDown', 3, 4],
      ['ArrowUp', 3, 2],
      ['ArrowDown', 9, 9],
      ['ArrowUp', 0, 0],
      ['PageDown', 3, 7],
      ['PageUp', 3, 0],
      ['PageDown', 8, 9],
      ['Home', 6, 0],
      ['End', 2, 9],
      ['Tab', 3, null],
      ['a', 3, null],
    ];
    for (const [key, from, to] of moves) expect(keyTarget(key, from, 10, 4), `${key} from ${from}`).toBe(to);
    expect(keyTarget('ArrowDown', 0, 0, 4)).toBeNull();
    // A page of less than one row still moves.
    expect(keyTarget('PageDown', 0, 10, 0.2)).toBe(1);
    // A current index left over from a longer list is clamped first.
    expect(keyTarget('ArrowUp', 50, 10, 4)).toBe(8);
  });
});
