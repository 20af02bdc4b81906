// The one chronological order used everywhere an edge direction or "most recent" is decided.
// Memories of one session often share a time, so ties need a stable, documented break:
// time, then createdAt, then id (plain string comparison). Ids of one session's memories are
// zero-padded by their index in the summary, so within a session the summary order decides.
import type { Memory } from './types';

export type Dated = Pick<Memory, 'id' | 'time' | 'createdAt'>;

/** Negative when a is older than b, positive when newer, 0 only for the same id. */
export function compareChronological(a: Dated, b: Dated): number {
  if (a.time !== b.time) return a.time - b.time;
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function isOlder(a: Dated, b: Dated): boolean {
  return compareChronological(a, b) < 0;
}
