// Explorer search: whole words (and plural or possessive forms) only, every query word, word
// matches ranked first, then matches by meaning that are not word matches.
import { describe, expect, it } from 'vitest';
import { queryWords, rankSearch, searchMemories, wordScore } from '../../../src/viz/search';
import { DAY, mem } from './fixtures';

const memories = [
  mem('relocation', 5 * DAY, 'event', { text: 'You said: They offered 66k plus relocation' }),
  mem('miso', 1 * DAY, 'event', { text: 'You said: I adopted my cat Miso' }),
  mem('cats', 3 * DAY, 'event', { text: "You said: The neighbour's cats visit the garden" }),
  mem('catalog', 4 * DAY, 'event', { text: 'You said: The seed catalog came' }),
  mem('scat', 2 * DAY, 'event', { text: 'You said: We listened to scat singing', subject: 'user' }),
];

describe('search', () => {
  it('"cat" is not found inside "relocation", "catalog" or "scat" (the substring shortcut finds all of them)', () => {
    const substring = memories.filter((m) => m.text.toLowerCase().includes('cat')).map((m) => m.id);
    expect(substring).toEqual(['relocation', 'miso', 'cats', 'catalog', 'scat']);
    expect([...searchMemories(memories, 'cat')].sort()).toEqual(['cats', 'miso']);
  });

  it('ranks the exact word before another form of it, then the more recent', () => {
    expect(rankSearch(memories, 'cat').word).toEqual(['miso', 'cats']);
    expect(rankSearch(memories, 'cats').word).toEqual(['cats', 'miso']);
    expect(rankSearch(memories, 'CAT miso').word).toEqual(['miso']);
    expect(rankSearch(memories, '  ').order).toEqual([]);
  });

  it('meaning matches come after word matches and never repeat one', () => {
    const r = rankSearch(memories, 'cat', [
      { id: 'miso', score: 0.9 },
      { id: 'scat', score: 0.6 },
      { id: 'relocation', score: 0.7 },
      { id: 'gone', score: 0.99 },
    ]);
    expect(r.word).toEqual(['miso', 'cats']);
    expect(r.meaning).toEqual(['relocation', 'scat']);
    expect(r.order).toEqual(['miso', 'cats', 'relocation', 'scat']);
    expect(r.all.size).toBe(4);
  });

  it('words, apostrophes and scores', () => {
    expect(queryWords("Miso's  bowl!")).toEqual(["miso's", 'bowl']);
    expect(wordScore("Miso's bowl", ['miso'])).toBe(0.5);
    expect(wordScore('Miso bowl', ['miso', 'bowl'])).toBe(2);
    expect(wordScore('Miso bowl', ['miso', 'dish'])).toBe(0);
  });
});
