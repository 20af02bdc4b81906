// Where a history import stands, as one state, and the words and bar position the page shows for
// it. The parsing worker reports reading, opening and checking; the page reports the rest.

export type HistoryProgress =
  /** Bytes of the file read (in the worker). */
  | { phase: 'reading'; done: number; total: number }
  /** The file's JSON is being parsed (in the worker): no count of its own. */
  | { phase: 'opening' }
  /** Chats checked and converted (in the worker). */
  | { phase: 'checking'; done: number; total: number }
  /** Waiting for memorising to stop in every tab before the first write. */
  | { phase: 'waiting' }
  /** New chats saved, of those the import will save. */
  | { phase: 'saving'; done: number; total: number }
  | { phase: 'saved'; done: number; total: number }
  /** Cancelled or failed after saving began: the chats saved so far are being taken back. */
  | { phase: 'undoing'; done: number; total: number };

export type HistoryPhase = HistoryProgress['phase'];

const MB = 1024 * 1024;
const count = (n: number) => n.toLocaleString('en-US');
const chats = (n: number) => (n === 1 ? 'chat' : 'chats');
/** Megabytes as the user reads them: one decimal for small files, whole numbers for large ones. */
function megabytes(bytes: number, total: number): string {
  return total < 10 * MB ? (bytes / MB).toFixed(1) : String(Math.round(bytes / MB));
}

/** The words for a state: "Reading 1,200 of 4,000 chats…". */
export function historyProgressWords(p: HistoryProgress): string {
  switch (p.phase) {
    case 'reading':
      return p.done === 0 ? 'Reading the file…' : `Reading the file: ${megabytes(p.done, p.total)} of ${megabytes(p.total, p.total)} MB…`;
    case 'opening':
      return 'Opening the file…';
    case 'checking':
      return `Reading ${count(p.done)} of ${count(p.total)} ${chats(p.total)}…`;
    case 'waiting':
      return 'Pausing memorising for the import…';
    case 'saving':
      return `Saving ${count(p.done)} of ${count(p.total)} ${chats(p.total)}…`;
    case 'saved':
      return `Saved ${count(p.done)} of ${count(p.total)} ${chats(p.total)}.`;
    case 'undoing':
      return `Cancelling: taking back the ${chats(p.total)} saved so far (${count(p.done)} of ${count(p.total)})…`;
  }
}

// Where each phase sits on the bar: parsing the JSON gives no progress of its own.
const SPAN: Record<HistoryPhase, [number, number]> = {
  reading: [0, 0.2],
  opening: [0.2, 0.3],
  checking: [0.3, 0.55],
  waiting: [0.55, 0.55],
  saving: [0.55, 1],
  saved: [1, 1],
  undoing: [0, 1],
};

/** 0 to 100 along the whole import (undoing: how much of the saved part is taken back). */
export function historyProgressPercent(p: HistoryProgress): number {
  const [from, to] = SPAN[p.phase];
  const part = 'total' in p && p.total > 0 ? Math.min(1, p.done / p.total) : 0;
  return Math.floor(100 * (from + (to - from) * part));
}

/** Whether a Cancel still changes anything (saved: the import has happened). */
export function historyCancellable(p: HistoryProgress | null): boolean {
  return p === null || (p.phase !== 'saved' && p.phase !== 'undoing');
}
