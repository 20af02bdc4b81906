// The explorer's search state for one view: word matches (at once, or after a pause in typing
// where one search over every memory is costly), matches by meaning a moment later (the previous
// lookup aborted), and the words that say what was counted.
import { untrack } from 'svelte';
import type { Memory } from '../../memory/types';
import { rankSearch, type MeaningHit, type SearchRanking } from '../../viz/search';
import { searchCountWords, type MeaningStatus } from './search-words';

/** Memories related to a query by meaning; null when no memory search model is loaded. */
export type MeaningSearch = (query: string, signal: AbortSignal) => Promise<MeaningHit[] | null>;

/** The embedding call waits for a pause in typing. */
const MEANING_PAUSE_MS = 250;

export class ExplorerSearch {
  private meaning = $state.raw<MeaningHit[] | null>(null);
  /** The query the meaning hits are for. */
  private meaningFor = $state('');
  private failed = $state(false);
  private debounced = $state('');
  private readonly query: () => string;
  private readonly memories: () => readonly Memory[];
  private readonly search: () => MeaningSearch | null | undefined;
  private readonly debounceMs: number;

  /** `debounceMs` > 0: the query applies after that pause in typing (at once when cleared). */
  constructor(query: () => string, memories: () => readonly Memory[], search: () => MeaningSearch | null | undefined, debounceMs = 0) {
    this.query = query;
    this.memories = memories;
    this.search = search;
    this.debounceMs = debounceMs;
    this.debounced = untrack(query);
    if (debounceMs > 0)
      $effect(() => {
        const q = this.query();
        const timer = setTimeout(() => (this.debounced = q), q.trim() ? debounceMs : 0);
        return () => clearTimeout(timer);
      });
    $effect(() => {
      const q = this.applied.trim();
      const run = this.search();
      if (!q || !run) return;
      const abort = new AbortController();
      const settle = (hits: MeaningHit[] | null, failed: boolean) => {
        if (abort.signal.aborted) return;
        this.failed = failed;
        this.meaning = hits;
        this.meaningFor = q;
      };
      const timer = setTimeout(
        () =>
          run(q, abort.signal).then(
            (hits) => settle(hits, false),
            () => settle(null, true),
          ),
        debounceMs > 0 ? 0 : MEANING_PAUSE_MS,
      );
      return () => {
        clearTimeout(timer);
        abort.abort();
      };
    });
  }

  /** The query searched for now. */
  readonly applied = $derived.by(() => (this.debounceMs > 0 ? this.debounced : this.query()));

  readonly status = $derived.by((): MeaningStatus => {
    if (!this.search()) return 'unavailable';
    if (this.meaningFor !== this.applied.trim()) return 'searching';
    if (this.failed) return 'failed';
    return this.meaning === null ? 'unavailable' : 'ready';
  });

  readonly ranking: SearchRanking = $derived.by(() =>
    rankSearch(this.memories(), this.applied, this.status === 'ready' ? this.meaning : null),
  );

  readonly countText = $derived(
    searchCountWords({ word: this.ranking.word.length, meaning: this.ranking.meaning.length, status: this.status }),
  );
}
