// Packing what was found into the reply prompt under the word budget (docs/METHOD.md 1.6): a
// retrieved memory as its timeline or alone, passages whole or as excerpts, in time order.
import type { Id, Memory, Millis, RetrievalScore, Timeline } from '../types';
import type { SearchHit } from '../retrieval/types';
import { BudgetPacker, promptItemCost } from '../retrieval/budget';
import { segmentExcerpt } from '../retrieval/excerpt';
import { promptDate } from '../text';
import { formatTimeline } from './timelines';
import { memoryLine, segmentBlock } from './prompt-text';

/** One item of remembered material as it went into the prompt. */
export interface PromptUnit {
  kind: 'memory' | 'segment' | 'timeline';
  /** The memory or segment id; for a timeline, the retrieved memory it runs through. */
  id: Id;
  /** The text as written into the prompt (without the list bullet). */
  text: string;
  /** Words counted against the budget (the list bullet included). */
  cost: number;
  /** Time that orders the prompt (a timeline sits at its retrieved memory). */
  time: Millis;
  /** Position in the fused ranking (0 = best). */
  rank: number;
  score: RetrievalScore;
  /** Source turns of everything in the item (a timeline: of all its memories). */
  sourceTurnIds: Id[];
  /** Memories the item shows (a segment: none). */
  memoryIds: Id[];
}

/** Words of a passage the self-reflection is shown (the reply prompt gets it whole). */
const REFLECT_PASSAGE_WORDS = 60;

/**
 * The longest contiguous part of the timeline around its retrieved memory whose raw text fits in
 * maxWords, growing nearest-first on both sides: a long timeline cannot crowd out the rest of the
 * budget, and what is kept is what lies closest in the story to the memory that was retrieved.
 */
export function fitTimeline(t: Timeline, memoriesById: ReadonlyMap<Id, Memory>, maxWords: number): Timeline {
  const cost = (lo: number, hi: number) =>
    promptItemCost(
      formatTimeline({ memoryIds: t.memoryIds.slice(lo, hi + 1), relations: t.relations.slice(lo, hi), through: t.through }, memoriesById),
    );
  if (cost(0, t.memoryIds.length - 1) <= maxWords) return t;
  const at = Math.max(0, t.memoryIds.indexOf(t.through));
  let lo = at;
  let hi = at;
  for (let grew = true; grew;) {
    grew = false;
    if (lo > 0 && cost(lo - 1, hi) <= maxWords) {
      lo--;
      grew = true;
    }
    if (hi < t.memoryIds.length - 1 && cost(lo, hi + 1) <= maxWords) {
      hi++;
      grew = true;
    }
  }
  return { memoryIds: t.memoryIds.slice(lo, hi + 1), relations: t.relations.slice(lo, hi), through: t.through };
}

export interface TimelineBlock {
  timeline: Timeline;
  text: string;
  refined?: string;
}

/**
 * What the self-reflection is shown beside the `numbered` timelines it refines: `raw` timelines
 * (refinement off), then the first ranking's top-k units that no timeline holds (passages; memories in plain
 * top-k mode), as prompt lines. `ids`: every memory and passage shown, refined timelines included.
 */
export function reflectionCandidates(
  ranked: readonly SearchHit[],
  numbered: readonly Timeline[],
  raw: readonly Timeline[],
  k: number,
  memoriesById: ReadonlyMap<Id, Memory>,
  query: string,
): { lines: string[]; ids: Id[] } {
  const lines = raw.map((t) => formatTimeline(t, memoriesById));
  const ids = new Set<Id>([...numbered, ...raw].flatMap((t) => t.memoryIds));
  for (const hit of ranked.slice(0, k)) {
    const u = hit.unit;
    if (ids.has(u.id)) continue;
    ids.add(u.id);
    if (u.kind === 'memory') lines.push(memoryLine(memoriesById.get(u.id)!, memoriesById));
    else {
      const words = (segmentExcerpt(u.text, u.sourceTurnIds, query)?.text ?? u.text).replace(/\n/g, ' / ').split(/\s+/);
      lines.push(
        `${promptDate(u.time)}: ${words.slice(0, REFLECT_PASSAGE_WORDS).join(' ')}${words.length > REFLECT_PASSAGE_WORDS ? ' …' : ''}`,
      );
    }
  }
  return { lines, ids: [...ids] };
}

/**
 * Greedy by rank under the budget: a retrieved memory with a timeline goes in as its timeline
 * (or, if that does not fit, as itself); a single memory whose source turns are all already in the
 * prompt is skipped (it would spend budget on evidence the prompt has in fuller words). Segments and
 * timelines are never skipped that way: the raw words and the relations say more than the turn ids.
 * Returned in time order, ties by rank.
 */
export function pack(
  ranked: readonly SearchHit[],
  limit: number,
  timelineOf: ReadonlyMap<Id, TimelineBlock>,
  irrelevant: ReadonlySet<Id>,
  memoriesById: ReadonlyMap<Id, Memory>,
  /** Segments go in as excerpts around the turns matching this query (undefined: whole). */
  excerptQuery?: string,
): PromptUnit[] {
  const packer = new BudgetPacker<PromptUnit>(limit);
  const inTimeline = new Set<Id>();
  ranked.forEach((hit, rank) => {
    const unit = hit.unit;
    if (unit.kind === 'segment') {
      // Never skipped for coverage: memories summarise, the segment has the original words.
      const part = excerptQuery === undefined ? undefined : segmentExcerpt(unit.text, unit.sourceTurnIds, excerptQuery);
      const text = segmentBlock(unit.time, part?.text ?? unit.text);
      const cost = promptItemCost(text);
      if (packer.fits(cost))
        packer.take({
          kind: 'segment',
          id: unit.id,
          text,
          cost,
          time: unit.time,
          rank,
          score: hit.score,
          sourceTurnIds: part?.turnIds ?? unit.sourceTurnIds,
          memoryIds: [],
        });
      return;
    }
    const m = memoriesById.get(unit.id)!;
    if (inTimeline.has(m.id)) return;
    const tl = timelineOf.get(m.id);
    // On a timeline whose note was empty, but retrieved through a timeline of its own with a note:
    // that timeline goes in (only memories with no note of their own are left out).
    if (!tl && irrelevant.has(m.id)) return;
    if (tl) {
      const ids = tl.timeline.memoryIds;
      // Memories of the timeline already in the prompt on their own give their place back.
      const dup = packer.taken.filter((u) => u.kind === 'memory' && ids.includes(u.id));
      const cost = promptItemCost(tl.text);
      const refund = dup.reduce((a, u) => a + u.cost, 0);
      if (packer.fits(cost, refund)) {
        for (const d of dup) packer.remove(d);
        const turns = [...new Set(ids.flatMap((id) => memoriesById.get(id)?.sourceTurnIds ?? []))];
        for (const id of ids) inTimeline.add(id);
        packer.take({
          kind: 'timeline',
          id: m.id,
          text: tl.text,
          cost,
          time: m.time,
          rank,
          score: hit.score,
          sourceTurnIds: turns,
          memoryIds: [m.id, ...ids.filter((id) => id !== m.id)],
        });
        return;
      }
    }
    if (packer.isCovered(m.sourceTurnIds)) return;
    const text = memoryLine(m, memoriesById);
    const cost = promptItemCost(text);
    if (packer.fits(cost))
      packer.take({
        kind: 'memory',
        id: m.id,
        text,
        cost,
        time: m.time,
        rank,
        score: hit.score,
        sourceTurnIds: m.sourceTurnIds,
        memoryIds: [m.id],
      });
  });
  // Time order for the prompt (SeCom).
  return packer.inTimeOrder();
}
