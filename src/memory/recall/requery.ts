// Self-reflection re-query (conditional memory, seed 002): when the first retrieval for a turn is
// weak, one model call writes search keywords for what the person means, and a second search
// with them is fused by rank with the first. Only weak turns pay the call, so the average stays
// near one call per turn beside the reply.
import type { ChatMessage, JsonSchema, LanguageModel } from '../../ports';
import { extractJson, pickArray } from '../llm-output';
import type { SearchHit } from '../retrieval/types';

/**
 * Weak: nothing shares a word with the query, and no meaning match is close (cosine below
 * `minDense`; none at all without an embedding model). A retrieval with any word in common is
 * left alone: the re-query is for questions phrased unlike anything remembered.
 */
export function isWeakRetrieval(hits: readonly SearchHit[], minDense = 0.45): boolean {
  for (const h of hits) {
    if ((h.score.lexical ?? 0) > 0) return false;
    if ((h.score.dense ?? -1) >= minDense) return false;
  }
  return true;
}

export const REQUERY_SCHEMA: JsonSchema = {
  title: 'memory_search_keywords',
  type: 'object',
  properties: {
    keywords: { type: 'array', items: { type: 'string' }, maxItems: 8 },
  },
  required: ['keywords'],
};

export function requeryMessages(dialogue: string): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You help an assistant search its memory of earlier conversations with a person. A search with the ' +
        "person's own words found nothing. Write up to 8 short search keywords (people, places, activities, " +
        'objects, feelings) that memories answering the last message would contain. Keywords only, no sentences.',
    },
    { role: 'user', content: dialogue },
  ];
}

/** The keywords of the model's answer, joined into one query ('' if unusable or failed). */
export async function requeryKeywords(llm: LanguageModel, dialogue: string, signal?: AbortSignal): Promise<string> {
  try {
    const raw = await llm.json(requeryMessages(dialogue), REQUERY_SCHEMA, { signal, maxTokens: 80 });
    const list = pickArray(extractJson(raw).value, ['keywords', 'words', 'queries']) ?? [];
    const words = list
      .filter((k): k is string => typeof k === 'string')
      .map((k) => k.trim())
      .filter((k) => k.length > 0 && k.length < 60)
      .slice(0, 8);
    return words.join(' ');
  } catch (e) {
    if (signal?.aborted) throw e;
    return '';
  }
}

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
