// The arithmetic of a virtualised list (no DOM): row heights measured where rows were rendered and
// estimated elsewhere, row offsets, which rows a scroll window needs, and where a key moves the
// focus. Rows render only near the viewport, so 20,000 rows cost what 30 do.

/** Heights of `count` rows: measured ones as measured, the others at the mean of those measured. */
export class RowHeights {
  private readonly heights: Float64Array;
  private readonly measured: Uint8Array;
  private offsets: Float64Array;
  private dirty = true;
  private measuredSum = 0;
  private measuredCount = 0;
  /** Counts changes (a measurement that differed, a reset). */
  revision = 0;

  constructor(
    readonly count: number,
    private readonly initialEstimate: number,
  ) {
    this.heights = new Float64Array(count);
    this.measured = new Uint8Array(count);
    this.offsets = new Float64Array(count + 1);
  }

  /** What an unmeasured row is taken to be. */
  estimate(): number {
    return this.measuredCount ? this.measuredSum / this.measuredCount : this.initialEstimate;
  }

  isMeasured(i: number): boolean {
    return this.measured[i] === 1;
  }

  height(i: number): number {
    return this.measured[i] ? this.heights[i] : this.estimate();
  }

  /** Records a measured height; true when it changed anything. */
  set(i: number, h: number): boolean {
    if (i < 0 || i >= this.count || !(h >= 0)) return false;
    if (this.measured[i]) {
      if (Math.abs(this.heights[i] - h) < 0.5) return false;
      this.measuredSum += h - this.heights[i];
    } else {
      this.measured[i] = 1;
      this.measuredCount++;
      this.measuredSum += h;
    }
    this.heights[i] = h;
    this.dirty = true;
    this.revision++;
    return true;
  }

  /**
   * Records many measurements at once and says how far the content under the viewport's top edge
   * (`viewTop`, in list coordinates) moved because of them: scroll by as much and what the user
   * looks at stays put while rows above it turn out taller or shorter than estimated.
   */
  apply(updates: Iterable<readonly [number, number]>, viewTop: number): number {
    const anchored = viewTop > 0 && this.count > 0;
    const end = anchored && viewTop >= this.total();
    const anchor = anchored && !end ? this.indexAt(viewTop) : this.count;
    const before = this.offset(anchor);
    let changed = false;
    for (const [i, h] of updates) changed = this.set(i, h) || changed;
    return changed && anchored ? this.offset(anchor) - before : 0;
  }

  /** Forget every measurement (e.g. the width changed, so every row may wrap differently). */
  reset(): void {
    this.measured.fill(0);
    this.measuredSum = 0;
    this.measuredCount = 0;
    this.dirty = true;
    this.revision++;
  }

  private ensure(): Float64Array {
    if (this.dirty) {
      const est = this.estimate();
      const o = this.offsets;
      for (let i = 0; i < this.count; i++) o[i + 1] = o[i] + (this.measured[i] ? this.heights[i] : est);
      this.dirty = false;
    }
    return this.offsets;
  }

  /** Top of row i (i = count gives the total). */
  offset(i: number): number {
    return this.ensure()[Math.max(0, Math.min(this.count, i))];
  }

  total(): number {
    return this.offset(this.count);
  }

  /** The row that contains y (clamped to the first and last rows); -1 when there are none. */
  indexAt(y: number): number {
    if (this.count === 0) return -1;
    const o = this.ensure();
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (o[mid] <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * Rows overlapping [top, bottom) plus `overscan` rows either side: [first, end) with end
   * exclusive; empty (first === end) when the window misses the list entirely.
   */
  range(top: number, bottom: number, overscan = 0): [number, number] {
    if (this.count === 0 || bottom <= 0 || top >= this.total() || bottom <= top) return [0, 0];
    const first = this.indexAt(Math.max(0, top));
    const last = this.indexAt(bottom - 0.001);
    return [Math.max(0, first - overscan), Math.min(this.count, last + 1 + overscan)];
  }
}

/** The row a key moves the focus to (clamped), or null for keys the list does not handle. */
export function keyTarget(key: string, current: number, count: number, page: number): number | null {
  if (count === 0) return null;
  const step = Math.max(1, Math.floor(page));
  const c = Math.max(0, Math.min(count - 1, current));
  switch (key) {
    case 'ArrowDown':
      return Math.min(count - 1, c + 1);
    case 'ArrowUp':
      return Math.max(0, c - 1);
    case 'PageDown':
      return Math.min(count - 1, c + step);
    case 'PageUp':
      return Math.max(0, c - step);
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}
