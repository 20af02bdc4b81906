// Search over memories for the explorer's views: plain substring matching, every word must hit.

import type { Id, Memory } from '../memory/types';

/** Memory ids whose text (or subject, or context) contains every word of the query, case-insensitive. */
export function searchMemories(memories: readonly Memory[], query: string): Set<Id> {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const hits = new Set<Id>();
  if (words.length === 0) return hits;
  for (const m of memories) {
    const hay = `${m.text} ${m.subject ?? ''} ${m.context ?? ''}`.toLowerCase();
    if (words.every((w) => hay.includes(w))) hits.add(m.id);
  }
  return hits;
}
