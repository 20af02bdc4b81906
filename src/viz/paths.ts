// Linear timelines through one memory, for the explorer (docs/METHOD.md, Phase II-1, section 1.4):
// source -> ... -> id -> ... -> sink. The reply turn samples one such path at random
// (memory/recall/timelines.ts); the explorer shows a few, always the same ones, found by a
// bounded depth-first walk that prefers the most recent neighbour.

import type { MemoryGraph } from '../memory/graph';
import { compareChronological, type Dated } from '../memory/order';
import type { Id, Relation, Timeline } from '../memory/types';

interface Walk {
  ids: Id[];
  rels: Relation[];
}

/** At most `limit` paths each way and `budget` visited steps: never all paths (they grow exponentially). */
export function timelinesThrough(graph: MemoryGraph, id: Id, limit = 3, budget = 5000): Timeline[] {
  if (!graph.has(id)) return [];
  const back = walk(graph, id, 'back', limit, budget);
  const fwd = walk(graph, id, 'forward', limit, budget);
  const count = Math.min(limit, Math.max(back.length, fwd.length));
  const out: Timeline[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const b = back[i % back.length];
    const f = fwd[i % fwd.length];
    // In a cycle (A→B→C→A, A↔B) the way forward comes back to memories already on the way back:
    // it ends before the first of them, so a timeline names each memory once.
    const behind = new Set(b.ids);
    let end = 1;
    while (end < f.ids.length && !behind.has(f.ids[end])) end++;
    const ids = [...b.ids.slice().reverse(), ...f.ids.slice(1, end)];
    const key = ids.join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ memoryIds: ids, relations: [...b.rels.slice().reverse(), ...f.rels.slice(0, end - 1)], through: id });
  }
  return out;
}

/** DFS to sources (back) or sinks (forward); most recent neighbour first, cycle-safe. */
function walk(graph: MemoryGraph, start: Id, dir: 'back' | 'forward', limit: number, budget: number): Walk[] {
  const paths: Walk[] = [];
  let steps = 0;
  const ids: Id[] = [start];
  const rels: Relation[] = [];
  const onPath = new Set<Id>([start]);
  // Every memory with nowhere left to go ends a path, so a visit never needs more than the
  // `limit` most recent neighbours off the path: one pass keeps those (a memory with 100,000 links
  // is not sorted whole).
  const next = (id: Id): { id: Id; rel: Relation }[] => {
    const best: { id: Id; rel: Relation; at: Dated }[] = [];
    for (const e of dir === 'back' ? graph.incoming(id) : graph.outgoing(id)) {
      const other = dir === 'back' ? e.from : e.to;
      if (onPath.has(other)) continue;
      const at = graph.dated(other)!;
      if (best.length === limit && compareChronological(at, best[limit - 1].at) <= 0) continue;
      let i = Math.min(best.length, limit - 1);
      best[i] = { id: other, rel: e.relation, at };
      for (; i > 0 && compareChronological(best[i].at, best[i - 1].at) > 0; i--) [best[i], best[i - 1]] = [best[i - 1], best[i]];
    }
    return best;
  };
  const visit = (id: Id): void => {
    if (paths.length >= limit || steps++ > budget) return;
    const ns = next(id);
    if (ns.length === 0) {
      paths.push({ ids: ids.slice(), rels: rels.slice() });
      return;
    }
    for (const n of ns) {
      if (paths.length >= limit || steps > budget) return;
      ids.push(n.id);
      rels.push(n.rel);
      onPath.add(n.id);
      visit(n.id);
      onPath.delete(n.id);
      ids.pop();
      rels.pop();
    }
  };
  visit(start);
  // The budget ran out before reaching an end: keep the partial walk rather than nothing.
  if (paths.length === 0) paths.push({ ids: [start], rels: [] });
  return paths;
}

/** A timeline as a list shows it: memories in order and the relation from each to the next (null: none). */
export interface Sequence {
  memoryIds: readonly Id[];
  relations: readonly (Relation | null)[];
}

/** `inner` appears in `outer` as one unbroken run, with the same relations between its memories. */
export function containedIn(inner: Sequence, outer: Sequence): boolean {
  const n = inner.memoryIds.length;
  const m = outer.memoryIds.length;
  if (n === 0 || n > m) return n === 0;
  for (
    let start = outer.memoryIds.indexOf(inner.memoryIds[0]);
    start !== -1 && start + n <= m;
    start = outer.memoryIds.indexOf(inner.memoryIds[0], start + 1)
  ) {
    let same = true;
    for (let i = 0; i < n && same; i++) {
      same =
        outer.memoryIds[start + i] === inner.memoryIds[i] &&
        (i === n - 1 || (outer.relations[start + i] ?? null) === (inner.relations[i] ?? null));
    }
    if (same) return true;
  }
  return false;
}

/**
 * The timelines worth listing: one the same as, or contained in, another of them (the first of
 * equals stays) or in a sequence already on screen (`shown`, e.g. the threads of the List view)
 * is left out. Order is kept.
 */
export function distinctTimelines<T extends Sequence>(timelines: readonly T[], shown: readonly Sequence[] = []): T[] {
  return timelines.filter((t, i) => {
    if (shown.some((s) => containedIn(t, s))) return false;
    return !timelines.some((other, j) => {
      if (j === i || !containedIn(t, other)) return false;
      // Equal: keep the first of them. Strictly contained: drop the shorter.
      return other.memoryIds.length > t.memoryIds.length || j < i;
    });
  });
}
