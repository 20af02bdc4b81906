// What the chat view says about continuing an ended chat: under it, that sending starts a new chat
// whose replies see its messages; above the new chat, which chat it follows on from.
import { describe, expect, it } from 'vitest';
import { ENDED_SEND_WORDS, followsWords } from '../../../src/app/chat/follow-words';

describe('follow-on words', () => {
  it('under an ended chat: a new chat starts, and its replies see these messages', () => {
    expect(ENDED_SEND_WORDS).toMatch(/starts a new chat/);
    expect(ENDED_SEND_WORDS).toMatch(/replies see these messages/);
  });

  it.each([
    ['Bike chain', 'Follows on from “Bike chain”, which had ended: replies here also see its messages.'],
    ['  Bike chain ', 'Follows on from “Bike chain”, which had ended: replies here also see its messages.'],
    ['', 'Follows on from an earlier chat, which had ended: replies here also see its messages.'],
    [undefined, 'Follows on from an earlier chat, which had ended: replies here also see its messages.'],
  ])('above the new chat (title %j)', (title, words) => {
    expect(followsWords(title)).toBe(words);
  });
});
