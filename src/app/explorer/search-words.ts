// The words under the explorer's search field: how many memories hold every word of the query as
// whole words, and whether and how many were found by meaning. Pure, from one state
// (tests/unit/app/search-words.test.ts).

/**
 * unavailable: no memory search model is loaded, so only words were searched; searching: the
 * search by meaning has not answered yet; ready: it answered; failed: it could not run.
 */
export type MeaningStatus = 'unavailable' | 'searching' | 'ready' | 'failed';

export interface SearchCount {
  word: number;
  meaning: number;
  status: MeaningStatus;
}

const n = (k: number, one: string, many: string) => `${k.toLocaleString()} ${k === 1 ? one : many}`;

export function searchCountWords(c: SearchCount): string {
  const words = c.word === 0 ? 'No whole-word matches' : n(c.word, 'whole-word match', 'whole-word matches');
  switch (c.status) {
    case 'unavailable':
      return `${words} · searched by words only (the memory search model is not loaded)`;
    case 'searching':
      return `${words} · looking for memories related by meaning…`;
    case 'failed':
      return `${words} · searched by words only (the search by meaning failed)`;
    case 'ready':
      return `${words} · ${c.meaning === 0 ? 'none related by meaning' : `${c.meaning.toLocaleString()} related by meaning`}`;
  }
}
