// One bounded selection for both retrievers: the m slots with the largest scores, kept in a binary
// min-heap of slot numbers (O(n log m), no allocation per candidate). Slots are the retrievers'
// dense document numbers; scores are read through a function over their typed arrays.

export class TopSlots {
  private readonly heap: Int32Array;
  private size = 0;

  constructor(
    private readonly capacity: number,
    private readonly score: (slot: number) => number,
  ) {
    this.heap = new Int32Array(Math.max(0, capacity));
  }

  /** Whether a slot with this score would be kept (the cheap test before any filter). */
  admits(value: number): boolean {
    if (this.capacity <= 0) return false;
    return this.size < this.capacity || value > this.score(this.heap[0]!);
  }

  /** The smallest kept score: the bar to clear once full (-Infinity until then). */
  get floor(): number {
    if (this.capacity <= 0) return Infinity;
    return this.size < this.capacity ? -Infinity : this.score(this.heap[0]!);
  }

  offer(slot: number): void {
    const value = this.score(slot);
    if (!this.admits(value)) return;
    const heap = this.heap;
    if (this.size < this.capacity) {
      let i = this.size++;
      heap[i] = slot;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.score(heap[parent]!) <= value) break;
        heap[i] = heap[parent]!;
        i = parent;
      }
      heap[i] = slot;
      return;
    }
    // Replace the minimum and sift down.
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      let mv = value;
      if (l < this.size && this.score(heap[l]!) < mv) {
        m = l;
        mv = this.score(heap[l]!);
      }
      if (r < this.size && this.score(heap[r]!) < mv) m = r;
      if (m === i) break;
      heap[i] = heap[m]!;
      i = m;
    }
    heap[i] = slot;
  }

  /** The kept slots, unordered. */
  slots(): number[] {
    return Array.from(this.heap.subarray(0, this.size));
  }
}
