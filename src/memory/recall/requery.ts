// Self-reflection's second search (conditional memory, seed 002): when the refinement call judges
// that what the first retrieval found is not enough to answer (recall/refine.ts), a search with its
// keywords is fused by rank with the first, so what the keywords find joins what was found.
import type { SearchHit } from '../retrieval/types';

/** Reciprocal rank fusion of the first and the second ranking, first ranking winning ties. */
export function fuseRankings(first: readonly SearchHit[], second: readonly SearchHit[], c = 60): SearchHit[] {
  const score = new Map<string, { hit: SearchHit; fused: number; order: number }>();
  const add = (list: readonly SearchHit[], offset: number) =>
    list.forEach((h, i) => {
      const e = score.get(h.unit.id);
      if (e) e.fused += 1 / (c + i + 1);
      else score.set(h.unit.id, { hit: h, fused: 1 / (c + i + 1), order: offset + i });
    });
  add(first, 0);
  add(second, first.length);
  return [...score.values()]
    .sort((a, b) => b.fused - a.fused || a.order - b.order)
    .map(({ hit, fused }) => ({ ...hit, score: { ...hit.score, fused } }));
}
