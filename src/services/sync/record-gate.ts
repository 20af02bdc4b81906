// The gate every synced record passes before it reaches the store: the backup's schema
// and the limits of src/memory/limits.ts, so what sync stores the app can always start with,
// export and import again. A record that fails is quarantined (named, with who sent it and why),
// not written; the rest of its message is, and sync goes on. Another device is hostile input: a
// stolen one, a buggy one, or a newer version with fields or values this one does not know.
import { recordIssues } from '../../store/backup-validate';
import type { Kind } from './record-kinds';

/** A record left out, kept with the sync state until a later message puts it right. */
export interface Quarantined {
  kind: Kind;
  /** Its key in the document (a record's id; a tombstone's `kind:id`). */
  id: string;
  /** The device whose message brought it, when known. */
  from?: string;
  problem: string;
  at: number;
}

/** At most this many are kept (the oldest go first): a flood cannot grow the state without end. */
export const MAX_QUARANTINED = 200;

/** Why `value`, stored under `key` in the `kind` map, may not be written; undefined when it may. */
export function recordProblem(kind: Kind, key: string, value: unknown): string | undefined {
  const issues = recordIssues(kind, value);
  if (issues.length > 0) return issues.join('; ');
  const r = value as { id: string; kind?: string };
  // The key is what other records and the store use: a record filed under another key is not it.
  const expected = kind === 'tombstones' ? `${r.kind}:${r.id}` : r.id;
  if (key !== expected) return `filed under ${JSON.stringify(key)} but its id is ${JSON.stringify(expected)}`;
  return undefined;
}

/** The quarantine of one device: what is held back now, by kind and key. */
export class Quarantine {
  private readonly held: Map<string, Quarantined>;

  constructor(saved: readonly Quarantined[] = []) {
    this.held = new Map(saved.map((q) => [keyOf(q.kind, q.id), q]));
  }

  /** True when the record may be written; otherwise it is held (or stays held) with its problem. */
  admit(kind: Kind, id: string, value: unknown, from: string | undefined, now = Date.now()): boolean {
    const problem = recordProblem(kind, id, value);
    const k = keyOf(kind, id);
    if (problem === undefined) {
      this.held.delete(k);
      return true;
    }
    const was = this.held.get(k);
    // Re-inserted, so the newest sit last and the oldest go first when the list is full.
    this.held.delete(k);
    this.held.set(k, { kind, id, from: from ?? was?.from, problem, at: now });
    while (this.held.size > MAX_QUARANTINED) this.held.delete(this.held.keys().next().value!);
    return false;
  }

  /** The record is gone from the document (deleted there): nothing is held back any more. */
  release(kind: Kind, id: string): void {
    this.held.delete(keyOf(kind, id));
  }

  list(): Quarantined[] {
    return [...this.held.values()];
  }
}

const keyOf = (kind: Kind, id: string) => `${kind}\u0000${id}`;
