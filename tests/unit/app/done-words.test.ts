import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  chatDeletedWords,
  deletedEverythingWords,
  DEMO_WORDS,
  exportedWords,
  importedWords,
  legacyDemoRemovedWords,
  listWords,
  locomoImportedWords,
  modelsDeletedWords,
  quoted,
  type RecordCounts,
} from '../../../src/app/done-words';
import { sayAfterReload, takeAfterReload } from '../../../src/app/after-reload';

const counts = (c: Partial<RecordCounts>): RecordCounts => ({ sessions: 0, turns: 0, memories: 0, settings: 0, ...c });
// The store's words must never reach the user.
const STORE_WORDS = /\b(sessions?|turns?|edges?|segments?|records?|vectors?)\b/i;

describe('deletedEverythingWords', () => {
  it.each([
    [{ chats: 4, memories: 6, demo: false }, false, 'Everything was deleted: 4 chats and 6 memories. Downloaded models were kept.'],
    [
      { chats: 1, memories: 1, demo: true },
      true,
      'Everything was deleted: 1 chat and 1 memory, and the demo. Downloaded models were deleted too.',
    ],
    [
      { chats: 0, memories: 0, demo: false },
      false,
      'Everything was deleted (there were no chats or memories). Downloaded models were kept.',
    ],
    [
      { chats: 0, memories: 0, demo: true },
      false,
      'Everything was deleted (there were no chats or memories but the demo). Downloaded models were kept.',
    ],
    // Memories whose chats were deleted earlier: chats 0 is not "nothing".
    [{ chats: 0, memories: 3, demo: false }, false, 'Everything was deleted: 0 chats and 3 memories. Downloaded models were kept.'],
    [
      { chats: 1200, memories: 15000, demo: false },
      false,
      'Everything was deleted: 1,200 chats and 15,000 memories. Downloaded models were kept.',
    ],
  ])('%j, models %s', (d, models, words) => {
    expect(deletedEverythingWords(d, models)).toBe(words);
  });
});

describe('exportedWords', () => {
  it('names the file and what it holds, in chats and memories', () => {
    expect(exportedWords('tealeaf-backup-2025-06-01.json', { sessions: 4, memories: 6 })).toBe(
      'Saved tealeaf-backup-2025-06-01.json: 4 chats and 6 memories.',
    );
    expect(exportedWords('b.json', { sessions: 1, memories: 1 })).toBe('Saved b.json: 1 chat and 1 memory.');
    expect(exportedWords('b.json', { sessions: 0, memories: 0 })).toBe('Saved b.json: no chats or memories yet.');
    expect(exportedWords('b.json', { sessions: 5, memories: 20 }, true)).toBe('Saved b.json: the demo’s 5 chats and 20 memories.');
  });
});

describe('importedWords: what came back, what was skipped and why, never record kinds', () => {
  it.each<[string, Parameters<typeof importedWords>[0], 'merge' | 'replace', string]>([
    [
      // The example: "4 sessions, 14 turns, 6 memories, 5 edges, 3 segments, 1 settings".
      'merge into an empty store',
      { added: counts({ sessions: 4, turns: 14, memories: 6, settings: 1 }), skipped: counts({}) },
      'merge',
      'Restored 4 chats (14 messages) and 6 memories. The backup’s settings were applied.',
    ],
    [
      'merge where some was already there',
      { added: counts({ sessions: 1, turns: 2, memories: 1 }), skipped: counts({ sessions: 3, turns: 12, memories: 5, settings: 1 }) },
      'merge',
      'Restored 1 chat (2 messages) and 1 memory. Skipped 3 chats, 12 messages and 5 memories: they were already there. Your settings were kept (the backup’s were not applied).',
    ],
    [
      'merge of the same file again',
      { added: counts({}), skipped: counts({ sessions: 4, turns: 14, memories: 6, settings: 1 }) },
      'merge',
      'Nothing new was restored. Skipped 4 chats, 14 messages and 6 memories: they were already there. Your settings were kept (the backup’s were not applied).',
    ],
    [
      'merge of one memory already there',
      { added: counts({ sessions: 2, turns: 4 }), skipped: counts({ memories: 1 }) },
      'merge',
      'Restored 2 chats (4 messages). Skipped 1 memory: it was already there.',
    ],
    [
      'merge of messages into chats the user has',
      { added: counts({ turns: 3 }), skipped: counts({ sessions: 1 }) },
      'merge',
      'Restored 3 messages in chats you had. Skipped 1 chat: it was already there.',
    ],
    [
      'replace',
      { added: counts({ sessions: 4, turns: 14, memories: 6, settings: 2 }), skipped: counts({}) },
      'replace',
      'Replaced your data with the backup: 4 chats (14 messages), 6 memories and the backup’s settings.',
    ],
    [
      'replace with an empty backup',
      { added: counts({}), skipped: counts({}) },
      'replace',
      'Replaced your data with the backup, which held no chats, memories or settings.',
    ],
    [
      'merge of a file with a link from a memory to itself',
      { added: counts({ sessions: 1, memories: 7 }), skipped: counts({}), selfLinks: 1 },
      'merge',
      'Restored 1 chat and 7 memories. Left out 1 link from a memory to itself (a link joins two different memories).',
    ],
    [
      'replace with two of them',
      { added: counts({ memories: 3 }), skipped: counts({}), selfLinks: 2 },
      'replace',
      'Replaced your data with the backup: 3 memories. Left out 2 links from a memory to itself (a link joins two different memories).',
    ],
  ])('%s', (_, summary, mode, words) => {
    const said = importedWords(summary, mode);
    expect(said).toBe(words);
    expect(said).not.toMatch(STORE_WORDS);
  });
});

describe('chatDeletedWords: from what was really deleted and kept', () => {
  it.each([
    ['Garden notes', 0, 0, 'Deleted “Garden notes”.'],
    ['Garden notes', 0, 1, 'Deleted “Garden notes”. Its memory was kept; the explorer shows its source as deleted.'],
    ['Garden notes', 0, 3, 'Deleted “Garden notes”. Its 3 memories were kept; the explorer shows their source as deleted.'],
    ['Garden notes', 1, 0, 'Deleted “Garden notes” and the memory made from it.'],
    ['Garden notes', 3, 0, 'Deleted “Garden notes” and the 3 memories made from it.'],
    [
      'Garden notes',
      2,
      1,
      'Deleted “Garden notes” and the 2 memories made from it; 1 other memory was kept: the explorer shows its source as deleted.',
    ],
  ])('%s: %d deleted, %d kept', (title, deleted, kept, words) => {
    expect(chatDeletedWords(title, deleted, kept)).toBe(words);
  });

  it('quotes a long title cut short', () => {
    expect(chatDeletedWords('x'.repeat(100), 0, 0)).toBe(`Deleted “${'x'.repeat(59)}…”.`);
    expect(quoted('  two\n words ')).toBe('“two words”');
  });
});

describe('locomoImportedWords', () => {
  it.each([
    [
      { sessions: 3, turns: 45, memories: 14, edges: 20, skipped: 0 },
      'Imported 3 chats (45 messages), remembered as 14 memories and 20 links.',
    ],
    [
      { sessions: 1, turns: 1, memories: 1, edges: 0, skipped: 2 },
      'Imported 1 chat (1 message), remembered as 1 memory; 2 chats of this conversation were already there.',
    ],
    [
      { sessions: 0, turns: 0, memories: 0, edges: 0, skipped: 5 },
      'Nothing new was imported: 5 chats of this conversation were already there.',
    ],
    [
      { sessions: 0, turns: 0, memories: 0, edges: 0, skipped: 1 },
      'Nothing new was imported: 1 chat of this conversation was already there.',
    ],
  ])('%j', (r, words) => {
    expect(locomoImportedWords(r)).toBe(words);
    expect(locomoImportedWords(r)).not.toMatch(STORE_WORDS);
  });
});

describe('the other confirmations', () => {
  it('models, the old demo, the demo', () => {
    expect(modelsDeletedWords(0)).toBe('There were no downloaded models to delete.');
    expect(modelsDeletedWords(1)).toBe('Deleted 1 downloaded model; it downloads again when you choose it.');
    expect(modelsDeletedWords(2)).toBe('Deleted 2 downloaded models; they download again when you choose one.');
    expect(modelsDeletedWords(1, 1)).toBe(
      'Deleted 1 downloaded model; it downloads again when you choose it. 1 model could not be deleted; try again after a reload.',
    );
    expect(modelsDeletedWords(0, 2)).toBe('No model was deleted. 2 models could not be deleted; try again after a reload.');
    expect(legacyDemoRemovedWords({ sessions: 6, memories: 21 })).toBe(
      'Removed the old demo from your memory: 6 chats and 21 memories. Your own chats and memories were not touched.',
    );
    expect(DEMO_WORDS.removed).toMatch(/demo was removed/);
    expect(DEMO_WORDS.left).toMatch(/left the demo/);
    expect(listWords([])).toBe('');
    expect(listWords(['a'])).toBe('a');
    expect(listWords(['a', 'b', 'c'])).toBe('a, b and c');
  });
});

describe('after-reload: carried in sessionStorage, shown once', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('keeps the last message for one read', () => {
    const store = new Map<string, string>();
    vi.stubGlobal('sessionStorage', {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
      removeItem: (k: string) => void store.delete(k),
    });
    expect(takeAfterReload()).toBeNull();
    sayAfterReload('first');
    sayAfterReload('Everything was deleted: 1 chat and 2 memories.');
    expect(takeAfterReload()).toBe('Everything was deleted: 1 chat and 2 memories.');
    expect(takeAfterReload()).toBeNull();
  });

  it('a storage that refuses loses only the words', () => {
    vi.stubGlobal('sessionStorage', {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
      removeItem: () => undefined,
    });
    expect(() => sayAfterReload('x')).not.toThrow();
    expect(takeAfterReload()).toBeNull();
  });
});
