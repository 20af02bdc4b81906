// Packing retrieved units into the prompt under a context budget, then ordering them by time.
//
// Cost is counted on what goes into the prompt (unit.text, the original words), not on the
// denoised index copy. Two measures:
// - 'words': whitespace-separated words (what the LoCoMo benchmark budgets in);
// - 'tokens': an approximation of subword tokens, ceil(characters / 4), the usual rule of thumb
//   for English BPE vocabularies; good enough to keep a prompt inside a context window with margin.
import type { Id, RetrievalScore } from '../types';
import { countWords } from './tokenize';
import type { IndexedUnit, SearchHit } from './types';

export type BudgetMeasure = 'words' | 'tokens';

export function unitCost(text: string, measure: BudgetMeasure = 'words'): number {
  return measure === 'words' ? countWords(text) : Math.ceil(text.length / 4);
}

export interface PackOptions {
  measure?: BudgetMeasure;
  /**
   * Skip a unit whose source turns are all inside units already packed: it would spend budget
   * on evidence the prompt already has (e.g. a memory summarising a retrieved segment).
   */
  skipCovered?: boolean;
  /** Cost override (e.g. a real tokenizer). */
  cost?: (unit: IndexedUnit) => number;
}

export interface PackedUnit {
  unit: IndexedUnit;
  score?: RetrievalScore;
  cost: number;
  /** Position in the ranked input (0 = best), kept for the "why" view. */
  rank: number;
}

export interface Packed {
  /** In time order (oldest first), as they go into the prompt. */
  units: PackedUnit[];
  used: number;
  budget: number;
  /** Every source turn id of the packed units, deduplicated. */
  turnIds: Id[];
}

/**
 * Greedy by rank: take each unit that still fits (a unit too big for what is left is skipped, and
 * smaller ones after it may still fit), then order the taken units by time, as SeCom does, so the
 * model reads the past in the order it happened. Ties keep rank order.
 */
export function packByBudget(
  ranked: ReadonlyArray<SearchHit | IndexedUnit>,
  budget: number,
  options: PackOptions = {},
): Packed {
  const measure = options.measure ?? 'words';
  const taken: PackedUnit[] = [];
  const covered = new Set<Id>();
  const seen = new Set<Id>();
  let used = 0;
  ranked.forEach((item, rank) => {
    const unit = 'unit' in item ? item.unit : item;
    const score = 'unit' in item ? item.score : undefined;
    if (seen.has(unit.id)) return;
    if (options.skipCovered && unit.sourceTurnIds.length > 0 && unit.sourceTurnIds.every((t) => covered.has(t))) return;
    const cost = options.cost ? options.cost(unit) : unitCost(unit.text, measure);
    if (used + cost > budget) return;
    used += cost;
    seen.add(unit.id);
    for (const t of unit.sourceTurnIds) covered.add(t);
    taken.push({ unit, score, cost, rank });
  });
  taken.sort((a, b) => a.unit.time - b.unit.time || a.rank - b.rank);
  return { units: taken, used, budget, turnIds: [...covered] };
}
