// The keys a merge touched, in parts: the records of a large message are written a part at a time
// (so no one task holds the page for long), what others refer to first.
import type { Kind, Touched } from './record-kinds';

/** Records written to the store in one transaction when a message brought many. */
export const PART = 500;
const KIND_ORDER: Kind[] = ['tombstones', 'sessions', 'turns', 'memories', 'edges', 'segments'];

/** Touched keys in parts of at most `size`, in the order others refer to them (a chat before its turns). */
export function inKeyParts(keys: Touched, size: number): Touched[] {
  const parts: Touched[] = [];
  let part: Touched = new Map();
  let n = 0;
  for (const kind of KIND_ORDER) {
    for (const id of keys.get(kind) ?? []) {
      if (n === size) {
        parts.push(part);
        part = new Map();
        n = 0;
      }
      (part.get(kind) ?? part.set(kind, new Set()).get(kind)!).add(id);
      n++;
    }
  }
  if (n > 0 || parts.length === 0) parts.push(part);
  return parts;
}

export function unionOf(parts: Touched[]): Touched {
  const out: Touched = new Map();
  for (const p of parts) for (const [kind, ids] of p) ids.forEach((id) => (out.get(kind) ?? out.set(kind, new Set()).get(kind)!).add(id));
  return out;
}
