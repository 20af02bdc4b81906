// First-fit row packing of the timeline's lanes (before, it scanned every row for
// every memory, O(n * rows)).
import { describe, expect, it } from 'vitest';
import { seededRng } from '../../../src/memory/rng';
import { RowPacker } from '../../../src/viz/row-packing';
import { leastTime } from '../../support/scaling';

/** The old packing: the lowest row with room, found by a scan. */
function scan(xs: readonly number[], spacing: number): number[] {
  const ends: number[] = [];
  return xs.map((x) => {
    let row = ends.findIndex((end) => x - end >= spacing);
    if (row === -1) {
      row = ends.length;
      ends.push(x);
    } else ends[row] = x;
    return row;
  });
}

describe('RowPacker', () => {
  it('places every memory where the first-fit scan did, on random time-ordered lanes', () => {
    const rng = seededRng(5);
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(rng() * 200);
      const spacing = 1 + Math.floor(rng() * 20);
      let x = 0;
      // Bursts (many at one x), gaps that free some rows and not others, exact-spacing steps.
      const xs = Array.from({ length: n }, () => (x += [0, 0, 1, spacing, spacing - 1, rng() * 3 * spacing][Math.floor(rng() * 6)]));
      const packer = new RowPacker(spacing);
      const rows = xs.map((v) => packer.place(v));
      expect(rows).toEqual(scan(xs, spacing));
      expect(packer.rows).toBe(rows.length ? Math.max(...rows) + 1 : 0);
    }
  });

  it('100,000 memories over 900 px: as many rows as before, without scanning them each time', () => {
    const n = 100_000;
    const over = (px: number) => Array.from({ length: n }, (_, i) => (i * px) / n);
    const pack = (xs: number[]) => {
      const packer = new RowPacker(14);
      return { packer, rows: xs.map((x) => packer.place(x)) };
    };
    const { packer, rows } = pack(over(900));
    expect(packer.rows).toBe(1556);
    expect(rows.slice(0, 3)).toEqual([0, 1, 2]);
    expect(rows[1556]).toBe(0);
    // The scan took 1.5e8 steps: a memory cost as many steps as there are rows. As many memories
    // over ten times the width need a tenth of the rows; with a few heap operations per memory the
    // two cost about the same. Two runs compared at the same moment, not a time.
    const narrow = over(900);
    const wide = over(9000);
    expect(leastTime(() => pack(narrow), 5)).toBeLessThan(4 * leastTime(() => pack(wide), 5));
  });
});
