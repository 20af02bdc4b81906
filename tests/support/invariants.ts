// The graph invariants the method relies on (property tests). A violation means a bug
// or a corrupted store, never a model's fault: model output is repaired before it reaches here.
import type { Edge, Memory } from '../../src/memory/types';
import { compareChronological } from '../../src/memory/order';

export type InvariantKind =
  | 'edge-direction'
  | 'self-loop'
  | 'duplicate-edge'
  | 'duplicate-edge-id'
  | 'missing-end'
  | 'superseded-missing'
  | 'superseded-not-newer'
  | 'superseded-kind';

export interface InvariantViolation {
  kind: InvariantKind;
  id: string;
  message: string;
}

/** A trait of the user and one of Tealeaf are about different people: neither retires the other. */
const crossesPeople = (a: string, b: string): boolean =>
  (a === 'user-trait' && b === 'assistant-trait') || (a === 'assistant-trait' && b === 'user-trait');

export function checkGraphInvariants(memories: readonly Memory[], edges: readonly Edge[]): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  const byId = new Map(memories.map((m) => [m.id, m]));
  const pairs = new Set<string>();
  const edgeIds = new Set<string>();
  for (const e of edges) {
    if (edgeIds.has(e.id)) out.push({ kind: 'duplicate-edge-id', id: e.id, message: `edge id ${e.id} used twice` });
    edgeIds.add(e.id);
    if (e.from === e.to) {
      out.push({ kind: 'self-loop', id: e.id, message: `edge ${e.id} loops on ${e.from}` });
      continue;
    }
    const key = `${e.from}\u0000${e.to}`;
    if (pairs.has(key)) out.push({ kind: 'duplicate-edge', id: e.id, message: `second edge ${e.from} -> ${e.to}` });
    pairs.add(key);
    const from = byId.get(e.from);
    const to = byId.get(e.to);
    if (!from || !to) {
      out.push({ kind: 'missing-end', id: e.id, message: `edge ${e.id} ends at a missing memory` });
      continue;
    }
    if (compareChronological(from, to) >= 0) {
      out.push({ kind: 'edge-direction', id: e.id, message: `edge ${e.id} goes from newer ${e.from} to older ${e.to}` });
    }
  }
  for (const m of memories) {
    if (m.supersededBy === undefined) continue;
    const newer = byId.get(m.supersededBy);
    if (!newer) {
      out.push({ kind: 'superseded-missing', id: m.id, message: `${m.id} superseded by missing ${m.supersededBy}` });
      continue;
    }
    // A change retires whatever kinds the two are (change.ts), but never across the user and Tealeaf.
    if (crossesPeople(m.kind, newer.kind)) {
      out.push({ kind: 'superseded-kind', id: m.id, message: `${m.id} (${m.kind}) superseded by ${newer.kind}` });
    }
    if (compareChronological(m, newer) >= 0) {
      out.push({ kind: 'superseded-not-newer', id: m.id, message: `${m.id} superseded by older ${newer.id}` });
    }
  }
  return out;
}
