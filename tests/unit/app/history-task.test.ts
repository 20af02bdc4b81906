// The history import's progress bar reads its words, position and Cancel from one state
// (where the import stands, and whether Cancel was pressed). Every state's words.
import { describe, expect, it } from 'vitest';
import { historyTaskView } from '../../../src/app/memory/history-task';
import { historyProgressWords, historyProgressPercent, type HistoryProgress } from '../../../src/services/history/progress';

const MB = 1024 * 1024;

describe('history import progress', () => {
  const cases: Array<[HistoryProgress, string, number]> = [
    [{ phase: 'reading', done: 0, total: 240 * MB }, 'Reading the file…', 0],
    [{ phase: 'reading', done: 120 * MB, total: 240 * MB }, 'Reading the file: 120 of 240 MB…', 10],
    [{ phase: 'reading', done: 1.25 * MB, total: 2.5 * MB }, 'Reading the file: 1.3 of 2.5 MB…', 10],
    [{ phase: 'opening' }, 'Opening the file…', 20],
    [{ phase: 'checking', done: 1200, total: 4000 }, 'Reading 1,200 of 4,000 chats…', 37],
    [{ phase: 'checking', done: 1, total: 1 }, 'Reading 1 of 1 chat…', 55],
    [{ phase: 'waiting' }, 'Pausing memorising for the import…', 55],
    [{ phase: 'saving', done: 0, total: 4000 }, 'Saving 0 of 4,000 chats…', 55],
    [{ phase: 'saving', done: 2000, total: 4000 }, 'Saving 2,000 of 4,000 chats…', 77],
    [{ phase: 'saved', done: 3, total: 3 }, 'Saved 3 of 3 chats.', 100],
    [{ phase: 'saved', done: 0, total: 0 }, 'Saved 0 of 0 chats.', 100],
    [{ phase: 'undoing', done: 100, total: 1200 }, 'Cancelling: taking back the chats saved so far (100 of 1,200)…', 8],
  ];
  it.each(cases)('%j: %s (%d%%)', (p, words, percent) => {
    expect(historyProgressWords(p)).toBe(words);
    expect(historyProgressPercent(p)).toBe(percent);
  });

  it('the bar: starting, each phase, cancelling before and while taking back, and when Cancel no longer applies', () => {
    const view = (progress: HistoryProgress | null, cancelling = false) =>
      historyTaskView({ file: 'conversations.json', progress, cancelling });
    expect(view(null)).toEqual({ text: 'conversations.json: Starting…', percent: 0, canCancel: true });
    expect(view({ phase: 'checking', done: 1200, total: 4000 })).toEqual({
      text: 'conversations.json: Reading 1,200 of 4,000 chats…',
      percent: 37,
      canCancel: true,
    });
    expect(view({ phase: 'saving', done: 10, total: 40 })).toMatchObject({
      text: 'conversations.json: Saving 10 of 40 chats…',
      canCancel: true,
    });
    // Pressed: the words say so at once, and Cancel cannot be pressed twice.
    expect(view({ phase: 'saving', done: 10, total: 40 }, true)).toEqual({
      text: 'conversations.json: Cancelling…',
      percent: 66,
      canCancel: false,
    });
    expect(view(null, true)).toMatchObject({ text: 'conversations.json: Cancelling…', canCancel: false });
    expect(view({ phase: 'undoing', done: 4, total: 10 }, true)).toEqual({
      text: 'conversations.json: Cancelling: taking back the chats saved so far (4 of 10)…',
      percent: 40,
      canCancel: false,
    });
    // Saved: the import has happened; nothing is left to cancel.
    expect(view({ phase: 'saved', done: 40, total: 40 })).toMatchObject({
      text: 'conversations.json: Saved 40 of 40 chats.',
      canCancel: false,
    });
  });
});
