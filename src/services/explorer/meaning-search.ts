// The explorer's search by meaning: the query's vector against the memories' vectors in the live
// index, the way recall searches (src/memory/recall/turn.ts), but memories only and only those
// close enough to call related. Without the memory search model there is none (null), and the
// explorer says it searched by words only.
import type { HybridIndex } from '../../memory/retrieval/types';
import type { Embedder } from '../../ports';
import type { MeaningHit } from '../../viz/search';

/** Least cosine similarity shown as "related by meaning". */
export const MEANING_MIN = 0.55;
/** Most meaning matches listed. */
export const MEANING_MAX = 8;

export async function searchByMeaning(
  index: HybridIndex,
  embedder: Embedder | undefined,
  query: string,
  signal?: AbortSignal,
): Promise<MeaningHit[] | null> {
  if (!embedder) return null;
  const q = query.trim();
  if (!q) return [];
  const [vector] = await embedder.embed([q], signal);
  if (!vector) return [];
  return index
    .search(q, vector, MEANING_MAX * 4, { kinds: ['memory'] })
    .filter((h) => (h.score.dense ?? -1) >= MEANING_MIN)
    .map((h) => ({ id: h.unit.id, score: h.score.dense ?? 0 }))
    .sort((a, b) => b.score - a.score)
    .slice(0, MEANING_MAX);
}
