import { describe, expect, it } from 'vitest';
import { aboutWords } from '../../../src/app/explorer/format';

describe('who a memory is about, in the detail panel', () => {
  it('names an event’s subject in words, never the stored "user" or "assistant"', () => {
    expect(aboutWords('event', 'user')).toBe('about you');
    expect(aboutWords('event', 'assistant')).toBe('about Tealeaf');
    expect(aboutWords('event', 'Ana')).toBe('about Ana');
    // Imported conversations name their speakers: a trait of Caroline says so.
    expect(aboutWords('user-trait', 'Caroline')).toBe('about Caroline');
  });

  it('says nothing where the kind says it already, or nobody is named', () => {
    expect(aboutWords('user-trait', 'user')).toBeUndefined();
    expect(aboutWords('assistant-trait', 'assistant')).toBeUndefined();
    expect(aboutWords('note', 'user')).toBeUndefined();
    expect(aboutWords('event', undefined)).toBeUndefined();
  });
});
