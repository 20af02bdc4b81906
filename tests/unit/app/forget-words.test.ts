// What a forget takes, in the user's words, from the service's preview.
import { describe, expect, it } from 'vitest';
import { FORGET_AFTER, forgetWords } from '../../../src/app/forget-words';

const names = {
  asked: ['m1'],
  title: (id: string) => ({ s1: 'My sister Ingrid is coming to visit me at Christmas, and more', s2: 'Holidays' })[id],
  text: (_id: string, stored: string) => stored.replace(/^The user said: /, 'You said: '),
};

describe('forgetWords', () => {
  it('names the copies, the lines of each chat and the passages', () => {
    const words = forgetWords(
      {
        memories: [
          { id: 'm1', text: 'The user said: Ingrid visits at Christmas' },
          { id: 'm2', text: 'The user said: Ingrid comes for Christmas' },
        ],
        chats: [
          { sessionId: 's1', yours: 1, replies: 1 },
          { sessionId: 's2', yours: 0, replies: 2 },
          { sessionId: 'gone', yours: 1, replies: 0 },
        ],
        passages: 2,
      },
      names,
    );
    expect(words).toEqual([
      '1 more memory saying the same, made from the same words: “You said: Ingrid comes for Christmas”',
      'In “My sister Ingrid is coming to visit me at Chris…”: 1 of your messages and 1 reply',
      'In “Holidays”: 2 replies',
      'In a chat: 1 of your messages',
      '2 passages of past chats, recalled without those lines',
    ]);
    expect(FORGET_AFTER).toMatch(/Undo brings it all back/);
  });

  it('says nothing more when only the memory goes', () => {
    expect(forgetWords({ memories: [{ id: 'm1', text: 'x' }], chats: [], passages: 0 }, names)).toEqual([]);
  });
});
