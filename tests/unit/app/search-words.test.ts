// The search count's words for every state of the search by meaning.
import { describe, expect, it } from 'vitest';
import { searchCountWords } from '../../../src/app/explorer/search-words';

describe('searchCountWords', () => {
  it('says what it counts in every state', () => {
    expect(searchCountWords({ word: 1, meaning: 0, status: 'unavailable' })).toBe(
      '1 whole-word match · searched by words only (the memory search model is not loaded)',
    );
    expect(searchCountWords({ word: 0, meaning: 0, status: 'searching' })).toBe(
      'No whole-word matches · looking for memories related by meaning…',
    );
    expect(searchCountWords({ word: 2, meaning: 3, status: 'ready' })).toBe('2 whole-word matches · 3 related by meaning');
    expect(searchCountWords({ word: 2, meaning: 0, status: 'ready' })).toBe('2 whole-word matches · none related by meaning');
    expect(searchCountWords({ word: 1200, meaning: 1, status: 'ready' })).toBe('1,200 whole-word matches · 1 related by meaning');
    expect(searchCountWords({ word: 0, meaning: 0, status: 'failed' })).toBe(
      'No whole-word matches · searched by words only (the search by meaning failed)',
    );
  });
});
