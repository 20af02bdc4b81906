// What this device has seen of each other device's messages in the room, and what it knows is
// missing (docs/SYNC.md, "The relay's history"). Replaces the replay guard's single mark per device:
//
// - a message is a replay only when its number was seen, so two messages the relay swapped both
//   apply (a device's numbers run on across rooms, so they are not dense within one);
// - a version 2 message names its sender's previous one in the room (`prev`); a `prev` never seen
//   is a hole: the relay dropped or withheld it. Holes are said in words, and stop nothing after
//   them (what depends on a lost change waits in Yjs until someone sends it again: `need`);
// - a snapshot (compaction) or an answer to a `need` covers what its sender had seen.
//
// The book is kept with the state written in the same transaction as what the message brought
// (engine.ts), and marked only once the message was processed: a message whose processing failed
// is read again, not skipped as seen.

export interface SavedBook {
  /** Per device, every number up to this one counts as seen (but the holes). In a book saved before holes were kept: the highest applied. */
  marks: Record<string, number>;
  /** Numbers above the mark that were seen. */
  recent?: Record<string, number[]>;
  /** Numbers known to be missing (named as `prev`, never seen). */
  holes?: Record<string, number[]>;
}

/** Numbers kept above the mark per device: a message the relay holds back longer than this is refused as a replay. */
const RECENT = 64;
/** Holes kept per device: a relay that drops everything fills no memory past this. */
const MAX_HOLES = 256;

export class SeqBook {
  private readonly marks: Record<string, number>;
  private readonly recent: Record<string, Set<number>>;
  private readonly holes: Record<string, Set<number>>;

  constructor(saved: SavedBook = { marks: {} }) {
    this.marks = { ...saved.marks };
    this.recent = sets(saved.recent);
    this.holes = sets(saved.holes);
  }

  /** A message already applied: a replay, refused. */
  seen(device: string, seq: number): boolean {
    if (this.holes[device]?.has(seq)) return false;
    return seq <= (this.marks[device] ?? 0) || (this.recent[device]?.has(seq) ?? false);
  }

  /** Records a processed message; its `prev`, when never seen, becomes a hole. */
  mark(device: string, seq: number, prev?: number): void {
    const prevSeen = prev === undefined || prev === 0 || prev === seq || this.seen(device, prev);
    this.holes[device]?.delete(seq);
    if (!prevSeen) add(this.holes, device, prev!, MAX_HOLES);
    const recent = add(this.recent, device, seq);
    if (recent.size > RECENT) {
      // The mark moves up under the oldest half; the holes below it stay holes.
      const sorted = [...recent].sort((a, b) => a - b);
      const keep = sorted.slice(-RECENT / 2);
      this.marks[device] = Math.max(this.marks[device] ?? 0, sorted[sorted.length - keep.length - 1]);
      this.recent[device] = new Set(keep);
    }
  }

  /** What the sender of a snapshot or an answer had seen counts as seen here; its holes stay (or become) holes. */
  cover(book: SavedBook): void {
    for (const [device, mark] of Object.entries(book.marks)) {
      const theirs = new Set(book.holes?.[device] ?? []);
      const mine = this.holes[device] ?? new Set<number>();
      for (const h of [...mine]) if (h <= mark && !theirs.has(h)) mine.delete(h);
      for (const h of theirs) if (!this.seen(device, h)) mine.add(h);
      for (const s of book.recent?.[device] ?? []) mine.delete(s);
      if (mine.size > 0) this.holes[device] = mine;
      else delete this.holes[device];
      this.marks[device] = Math.max(this.marks[device] ?? 0, mark);
      for (const s of book.recent?.[device] ?? []) if (s > this.marks[device]) add(this.recent, device, s);
    }
  }

  /** What is missing, per device (empty when nothing is). */
  missing(): Array<{ device: string; count: number }> {
    return Object.entries(this.holes)
      .filter(([, h]) => h.size > 0)
      .map(([device, h]) => ({ device, count: h.size }));
  }

  saved(): SavedBook {
    const out: SavedBook = { marks: { ...this.marks } };
    const recent = lists(this.recent);
    const holes = lists(this.holes);
    if (recent) out.recent = recent;
    if (holes) out.holes = holes;
    return out;
  }
}

function sets(saved: Record<string, number[]> | undefined): Record<string, Set<number>> {
  return Object.fromEntries(Object.entries(saved ?? {}).map(([d, xs]) => [d, new Set(xs)]));
}

function lists(all: Record<string, Set<number>>): Record<string, number[]> | undefined {
  const out = Object.entries(all)
    .filter(([, s]) => s.size > 0)
    .map(([d, s]) => [d, [...s].sort((a, b) => a - b)] as const);
  return out.length > 0 ? Object.fromEntries(out) : undefined;
}

function add(all: Record<string, Set<number>>, device: string, n: number, max = Infinity): Set<number> {
  const set = (all[device] ??= new Set());
  set.add(n);
  if (set.size > max) set.delete(Math.min(...set));
  return set;
}
