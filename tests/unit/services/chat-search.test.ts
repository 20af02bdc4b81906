import { describe, expect, it } from 'vitest';
import { fold, matchSession, snippetAround } from '../../../src/services/chat/chat-search';
import type { Session } from '../../../src/memory/types';

const s = (title: string): Session => ({ id: 's1', title, startedAt: 0, lastActivityAt: 0, status: 'open' });

describe('chat search', () => {
  it('matches the title, ignoring case and accents', () => {
    expect(matchSession(s('Trip to the Café'), [], 'cafe trip')).toEqual({ sessionId: 's1', in: 'title', snippet: '' });
    expect(fold('Ÿes Ñandú')).toBe('yes nandu');
  });

  it('matches message text when every word occurs somewhere, with a snippet around it', () => {
    const texts = ['Hello', 'I planted a ginkgo tree in the garden behind the old house last spring, it grows slowly'];
    const m = matchSession(s('Garden chat'), texts, 'GINKGO garden');
    expect(m?.in).toBe('text');
    expect(m?.snippet).toContain('ginkgo');
    expect(matchSession(s('Garden chat'), texts, 'ginkgo oak')).toBeUndefined();
    expect(matchSession(s('x'), texts, '   ')).toBeUndefined();
  });

  it('cuts snippets at word boundaries', () => {
    const text = 'one two three four five six seven eight nine ten eleven twelve';
    const at = text.indexOf('six');
    const snip = snippetAround(text, at, 3, 10);
    expect(snip.startsWith('…')).toBe(true);
    expect(snip.endsWith('…')).toBe(true);
    expect(snip).toContain('six');
    expect(
      snip
        .replace(/…/g, '')
        .split(' ')
        .every((w) => text.split(' ').includes(w)),
    ).toBe(true);
  });
});
