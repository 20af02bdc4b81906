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

/** One item of remembered material as the prompt lists it: a bullet, then the text. */
export function promptItem(text: string): string {
  return text.startsWith('- ') ? text : `- ${text}`;
}

/** Words an item costs in the prompt, its list bullet included: every word sent is paid for. */
export function promptItemCost(text: string): number {
  return countWords(promptItem(text));
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

/** What the packing rule needs of an item: its cost, its place in time and rank, its evidence. */
export interface PackItem {
  cost: number;
  time: number;
  rank: number;
  sourceTurnIds: readonly Id[];
}

/**
 * The one packing rule, shared by the reply turn (recall/turn.ts) and the benchmark baselines
 * (packByBudget): items are offered best first; each is taken while it fits in what is left of
 * the budget (a big one is skipped and smaller ones after it may still fit); an item whose source
 * turns are all covered by items already taken can be skipped; the prompt gets them in time order
 * (SeCom), ties by rank.
 */
export class BudgetPacker<T extends PackItem> {
  readonly taken: T[] = [];
  readonly covered = new Set<Id>();
  used = 0;

  constructor(readonly budget: number) {}

  fits(cost: number, refund = 0): boolean {
    return this.used - refund + cost <= this.budget;
  }

  /** Every source turn of these items is already in the prompt (never true for no turns). */
  isCovered(turnIds: readonly Id[]): boolean {
    return turnIds.length > 0 && turnIds.every((t) => this.covered.has(t));
  }

  take(item: T): void {
    this.taken.push(item);
    this.used += item.cost;
    for (const t of item.sourceTurnIds) this.covered.add(t);
  }

  /** Gives an item's place back (its turns stay covered: what replaces it holds them). */
  remove(item: T): void {
    const i = this.taken.indexOf(item);
    if (i < 0) return;
    this.taken.splice(i, 1);
    this.used -= item.cost;
  }

  inTimeOrder(): T[] {
    return [...this.taken].sort((a, b) => a.time - b.time || a.rank - b.rank);
  }
}

/**
 * Greedy by rank: take each unit that still fits (a unit too big for what is left is skipped, and
 * smaller ones after it may still fit), then order the taken units by time, as SeCom does, so the
 * model reads the past in the order it happened. Ties keep rank order.
 */
export function packByBudget(ranked: ReadonlyArray<SearchHit | IndexedUnit>, budget: number, options: PackOptions = {}): Packed {
  const measure = options.measure ?? 'words';
  const packer = new BudgetPacker<PackedUnit & PackItem>(budget);
  const seen = new Set<Id>();
  ranked.forEach((item, rank) => {
    const unit = 'unit' in item ? item.unit : item;
    const score = 'unit' in item ? item.score : undefined;
    if (seen.has(unit.id)) return;
    if (options.skipCovered && packer.isCovered(unit.sourceTurnIds)) return;
    const cost = options.cost ? options.cost(unit) : unitCost(unit.text, measure);
    if (!packer.fits(cost)) return;
    seen.add(unit.id);
    packer.take({ unit, score, cost, rank, time: unit.time, sourceTurnIds: unit.sourceTurnIds });
  });
  const units = packer.inTimeOrder().map(({ unit, score, cost, rank }) => ({ unit, score, cost, rank }));
  return { units, used: packer.used, budget, turnIds: [...packer.covered] };
}
