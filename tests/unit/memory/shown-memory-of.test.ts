// The Memory view re-reads every memory on each graph change: display copies
// are kept per stored record, so only records that changed are worded again.
import { describe, expect, it } from 'vitest';
import { shownMemory, shownMemoryOf } from '../../../src/memory/voice';
import type { Memory } from '../../../src/memory/types';

const record = (id: string, text: string, kind: Memory['kind'] = 'user-trait'): Memory => ({
  id,
  kind,
  text,
  time: 0,
  sourceTurnIds: [],
  sessionId: 's',
  edited: false,
  createdAt: 0,
});

describe('shownMemoryOf', () => {
  it('words a record as shownMemory does, the same copy each time it is read', () => {
    const m = record('a', 'The user likes tea.');
    const first = shownMemoryOf(m);
    expect(first).toEqual(shownMemory(m));
    expect(first.text).not.toBe(m.text);
    expect(shownMemoryOf(m)).toBe(first);
    // A record already in the user's words is its own display copy.
    const note = record('n', 'The user likes tea.', 'note');
    expect(shownMemoryOf(note)).toBe(note);
  });

  it('a replaced record (an edit) gets its own copy with its new words', () => {
    const before = record('a', 'The user likes tea.');
    const after = { ...before, text: 'The user likes coffee.', edited: true };
    const old = shownMemoryOf(before);
    const shown = shownMemoryOf(after);
    expect(shown).not.toBe(old);
    expect(shown).toEqual(shownMemory(after));
    expect(shown.edited).toBe(true);
  });

  it('a record whose words were changed in place is worded again', () => {
    const m = record('a', 'The user likes tea.');
    const first = shownMemoryOf(m);
    m.text = 'The user likes cocoa.';
    expect(shownMemoryOf(m)).not.toBe(first);
    expect(shownMemoryOf(m).text).toBe(shownMemory(m).text);
  });
});
