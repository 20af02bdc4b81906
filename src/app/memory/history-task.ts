// What the history import's progress bar shows, from one state: where the import stands (as the
// service reports it) and whether the user has asked to cancel. Pure.
import { historyCancellable, historyProgressPercent, historyProgressWords, type HistoryProgress } from '../../services/history/progress';

export interface HistoryTask {
  file: string;
  /** null until the first report. */
  progress: HistoryProgress | null;
  cancelling: boolean;
}

export interface HistoryTaskView {
  /** "conversations.json: Reading 1,200 of 4,000 chats…" */
  text: string;
  percent: number;
  /** Cancel changes something only before the import has finished saving. */
  canCancel: boolean;
}

export function historyTaskView(t: HistoryTask): HistoryTaskView {
  const p = t.progress;
  // Once taking back has begun its own words say so; before that the cancel is on its way.
  const words = t.cancelling && p?.phase !== 'undoing' ? 'Cancelling…' : p ? historyProgressWords(p) : 'Starting…';
  return {
    text: `${t.file}: ${words}`,
    percent: p ? historyProgressPercent(p) : 0,
    canCancel: !t.cancelling && historyCancellable(p),
  };
}
