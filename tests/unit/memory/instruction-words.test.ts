// The wordings table: what a person asks Tealeaf to remember, read as a standing instruction (how
// to answer) or a fact, whatever the wording: first and second person, with and without the
// "remember" that introduces it. The classifier may say 'unsure' (the loaded model is then asked);
// it must never be confidently wrong, and its accuracy on its own is reported.
import { describe, expect, it } from 'vitest';
import { instructionReading } from '../../../src/memory/commands/instruction-words';
import { parseMemoryCommand } from '../../../src/memory/commands/parse';

const INSTRUCTIONS = [
  'answers should always be short',
  'always answer me in British English',
  'never use bullet points in your answers',
  'keep your answers short',
  'I prefer short answers',
  "I'd like you to use metric units",
  'you should call me Sam',
  'call me Sam',
  "please don't use emoji",
  'no emoji in your replies',
  'your replies must be in French',
  'when you explain something, give an example',
  'I want you to be more direct with me',
  'I hate bullet points',
  'use Celsius, not Fahrenheit',
  'responses need to be brief',
  'talk to me like a friend',
  "I'd rather you didn't use jargon",
  "don't apologise so much",
  'you must always cite your sources',
  'reply in one paragraph at most',
  'all answers in plain English',
  'I like it when you keep things brief',
  'stop ending every answer with a question',
  'address me as Dr. Patel',
  'be blunt with me',
  'fewer emojis',
  'I want shorter replies from now on',
  'your tone should be gentle',
  'my name is Samuel but call me Sam',
  'Tealeaf should answer in German',
  'the answers you give should be short',
];

const FACTS = [
  'I live in Oslo',
  'my sister is called Ana',
  'I prefer tea over coffee',
  'I hate cilantro',
  "I'm allergic to peanuts",
  'my daughter Lena is allergic to peanuts',
  'I have a dentist appointment on Friday',
  'the wifi password is in the blue notebook',
  'I always take the 8:15 train',
  'I never eat meat',
  "I'm learning French",
  'I like long walks on the beach',
  'you helped me fix my bike last week',
  'I keep my keys in the drawer',
  'my favourite colour is green',
  'I work as a nurse on night shifts',
  'I use Linux at home',
  'Ana answers the phone in French',
  'my sister writes very short answers in her emails',
  'we moved to Bergen in May',
];

type Case = { words: string; want: 'instruction' | 'fact' };
const TABLE: Case[] = [
  ...INSTRUCTIONS.map((words) => ({ words, want: 'instruction' as const })),
  ...FACTS.map((words) => ({ words, want: 'fact' as const })),
];

describe('instruction or fact, by what the words are about', () => {
  it('the table holds at least 40 wordings of both kinds', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
    expect(INSTRUCTIONS.length).toBeGreaterThanOrEqual(20);
    expect(FACTS.length).toBeGreaterThanOrEqual(15);
  });

  it.each(TABLE)('"$words" is never read confidently as the other kind', ({ words, want }) => {
    const other = want === 'instruction' ? 'fact' : 'instruction';
    expect(instructionReading(words)).not.toBe(other);
    // The same with the "remember" that introduces it, capitalised and with a full stop.
    expect(instructionReading(`${words.charAt(0).toUpperCase()}${words.slice(1)}.`)).not.toBe(other);
  });

  it('reads most wordings without asking the model, and reports its accuracy', () => {
    const right = TABLE.filter((c) => instructionReading(c.words) === c.want);
    const unsure = TABLE.filter((c) => instructionReading(c.words) === 'unsure');
    const accuracy = right.length / TABLE.length;
    console.log(
      `[instruction-words] ${right.length}/${TABLE.length} read right by the words alone (${accuracy.toFixed(3)}); ` +
        `unsure (the model is asked): ${unsure.map((c) => `"${c.words}"`).join(', ') || 'none'}`,
    );
    expect(accuracy).toBeGreaterThanOrEqual(0.85);
  });

  it('"remember that …", "remember: …" and "remember to …" reach the reading in every wording', () => {
    for (const words of INSTRUCTIONS) {
      const said = parseMemoryCommand(`remember that ${words}`);
      expect(said, words).toMatchObject({ kind: 'remember', fact: words.replace(/[.]$/, '') });
    }
    expect(parseMemoryCommand('remember to keep your answers short')).toMatchObject({ kind: 'remember', instruction: true });
    // A reminder for the person, not an instruction: no command (the model answers).
    expect(parseMemoryCommand('remember to drink water')).toBeUndefined();
  });
});
