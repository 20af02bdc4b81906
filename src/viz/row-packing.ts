// First-fit packing of a lane's memories into rows (viz/lanes.ts): each goes to the lowest row
// whose last memory lies at least `spacing` to its left. Memories arrive in time order, so x never
// decreases and a row that has room stays free until it is used: rows are kept in a queue by the
// x they end at and, once free, in a min-heap of row numbers. O(n log rows), where scanning every
// row for every memory was O(n * rows): about 1,500 rows and 1.5e8 steps for one memory's 100,000
// linked neighbours in one lane.

export class RowPacker {
  private readonly ends: number[] = [];
  /** Rows in the order they were last used (so by the x they end at), from `head` on. */
  private readonly queue: number[] = [];
  private head = 0;
  /** Free rows, a binary min-heap of row numbers. */
  private readonly free: number[] = [];

  constructor(private readonly spacing: number) {}

  get rows(): number {
    return this.ends.length;
  }

  /** The row for a memory at x (x must not be less than the previous one's). */
  place(x: number): number {
    while (this.head < this.queue.length && x - this.ends[this.queue[this.head]] >= this.spacing) this.push(this.queue[this.head++]);
    const row = this.free.length > 0 ? this.pop() : this.ends.length;
    this.ends[row] = x;
    this.queue.push(row);
    return row;
  }

  private push(row: number): void {
    const h = this.free;
    let i = h.push(row) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p] <= h[i]) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  private pop(): number {
    const h = this.free;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l] < h[m]) m = l;
        if (r < h.length && h[r] < h[m]) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    return top;
  }
}
