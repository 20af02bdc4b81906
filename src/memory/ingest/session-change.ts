// Changes within one session (docs/METHOD.md, sections 1.3 and 4). Phase I takes a new memory's
// candidates from earlier sessions only, as the paper does (Algorithm 1), so "I live in Oslo" early
// in a chat and "I moved from Oslo to Bergen" later in the same chat never met: both stayed current.
// The session's older memories are therefore shown to the labeller too, in the same call, but only
// for the change question: up to j of them that the newer memory could change. Such a pair gets an
// edge only when the change rule retires the older memory or asks about it (change.ts); any other
// label between two memories of one session makes no edge, so ordinary links stay the paper's.
// "Older" within a session is the one order of order.ts: the time of the latest source turn first.
import type { Id, Memory } from '../types';
import type { MemoryGraph } from '../graph';
import { compareChronological, isOlder } from '../order';
import { cosine } from '../text';
import { changeDecision, readsAsChange, sharedWords } from './change';

export interface SessionChangeInput {
  memory: Memory;
  graph: MemoryGraph;
  lookup: (id: Id) => Memory | undefined;
  /** Ids of the memories formed in the same batch (session), the new memory included. */
  batch?: ReadonlySet<Id>;
  vector?: Float32Array;
  vectorOf?: (id: Id) => Float32Array | undefined;
}

/** Says how things are (a trait, note or instruction), not that something happened. */
const isState = (m: Memory): boolean => m.kind !== 'event';

/**
 * Whether the newer memory of a session could change the older one, so that the pair is worth the
 * change question: the newer tells a change in words ("moved", "no longer", "now": readsAsChange)
 * and shares a content word with the older or the older says how things are ("You live in Oslo" /
 * "You moved to Bergen" share none); or both say how things are and share a content word ("You live
 * in Oslo" / "You live in Bergen"). Never an older memory already past, or one about another person
 * (change.ts keeps those whatever the label).
 */
export function mayChangeWithin(older: Memory, newer: Memory): boolean {
  if (changeDecision(older, newer, 'Changed') === 'keep') return false;
  const shared = sharedWords(older.text, newer.text).length > 0;
  if (readsAsChange(newer.text)) return shared || isState(older);
  return shared && isState(older) && isState(newer);
}

/**
 * The session's memories older than `memory` that it could change, for the change question only:
 * at most `limit`, those sharing more content words first, then the more similar by vectors when
 * known, then the more recent. `exclude`: memories already among the ordinary candidates. Each pair
 * is looked at once, when its newer memory is linked, whatever order the summary listed them in.
 */
export function sessionChangeCandidates(input: SessionChangeInput, limit: number, exclude: ReadonlySet<Id> = new Set()): Memory[] {
  const { memory, batch } = input;
  if (!batch || limit <= 0) return [];
  const scored: { older: Memory; shared: number; similarity: number }[] = [];
  for (const id of batch) {
    if (id === memory.id || exclude.has(id) || !input.graph.has(id)) continue;
    const older = input.lookup(id);
    if (!older || !isOlder(older, memory) || !mayChangeWithin(older, memory)) continue;
    const theirs = input.vectorOf?.(id);
    const similarity = input.vector && theirs ? cosine(input.vector, theirs) : 0;
    scored.push({ older, shared: sharedWords(older.text, memory.text).length, similarity });
  }
  return scored
    .sort((a, b) => b.shared - a.shared || b.similarity - a.similarity || compareChronological(b.older, a.older))
    .slice(0, limit)
    .map((s) => s.older);
}
