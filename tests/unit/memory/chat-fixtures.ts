// A long chat with a fact told at its start, and questions about it in its own words and in
// others (in-chat recall by meaning: chat-recall-meaning tests of memory and services).
import type { DialogueTurn } from '../../../src/memory/recall/turn';
import { T0 } from './helpers';

const FILLER = ['the', 'garden', 'river', 'coffee', 'walked', 'quietly', 'yesterday', 'because'];
const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => FILLER[(i * 7 + seed) % 8]).join(' ');
export const LENA = 'My daughter Lena is allergic to peanuts, so we keep them out of the house.';

/** 200 turns with 300-word replies, the fact at turn 3 (index 2), then the question. */
export function longChat(question: string): DialogueTurn[] {
  const turns: DialogueTurn[] = Array.from({ length: 200 }, (_, i) => {
    const user = i % 2 === 0;
    const text = i === 2 ? LENA : user ? `On day ${i} I repaired bicycle number ${i} and named it Bike${i}.` : words(300, i);
    return { id: `t${i}`, role: user ? 'user' : 'assistant', text, time: T0 + i * 3_600_000 };
  });
  return [...turns, { id: 'q', role: 'user', text: question, time: T0 + 201 * 3_600_000 }];
}

export const OWN_WORDS = ['Is my daughter Lena allergic to anything?', 'Remind me what Lena is allergic to.'];
export const OTHER_WORDS = [
  "What snack can I pack for my kid's school trip?",
  'My little girl has to stay away from eating what, again?',
  'Any ideas for lunch treats my child could take along?',
];
