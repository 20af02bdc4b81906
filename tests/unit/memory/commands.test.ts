// Which chat messages are memory commands (a table of wordings, and near misses that are
// remarks or questions for the model), what memory "remember that …" makes of the user's words,
// and the answer's words for every kind and state.
import { describe, expect, it } from 'vitest';
import { parseMemoryCommand } from '../../../src/memory/commands/parse';
import { rememberedFact } from '../../../src/memory/commands/fact';
import { answerText } from '../../../src/services/commands/words';
import { COMMAND_KINDS, COMMAND_STATES } from '../../../src/memory/types';

describe('parseMemoryCommand', () => {
  const commands: Array<[string, ReturnType<typeof parseMemoryCommand>]> = [
    ['remember that my sister is called Ana', { kind: 'remember', fact: 'my sister is called Ana' }],
    ['Remember that my sister is called Ana.', { kind: 'remember', fact: 'my sister is called Ana' }],
    ['remember: I am allergic to peanuts', { kind: 'remember', fact: 'I am allergic to peanuts' }],
    ['Remember this: the wifi password is tea-for-two', { kind: 'remember', fact: 'the wifi password is tea-for-two' }],
    ['please remember that I prefer short answers', { kind: 'remember', fact: 'I prefer short answers' }],
    ['Please remember my cat is called Miso', { kind: 'remember', fact: 'my cat is called Miso' }],
    ['Tealeaf, remember that I moved to Porto!', { kind: 'remember', fact: 'I moved to Porto' }],
    ['remember that I work night shifts, please', { kind: 'remember', fact: 'I work night shifts' }],
    ['forget my sister', { kind: 'forget', about: 'my sister', me: false }],
    ['Forget that I like jazz.', { kind: 'forget', about: 'I like jazz', me: false }],
    ['please forget about the Lisbon trip', { kind: 'forget', about: 'the Lisbon trip', me: false }],
    ['forget everything about my ex', { kind: 'forget', about: 'my ex', me: false }],
    ['forget everything about me', { kind: 'forget', about: 'me', me: true }],
    ['what do you remember about me?', { kind: 'recall', about: 'me', me: true }],
    ['What do you remember about me', { kind: 'recall', about: 'me', me: true }],
    ['what do you know about me?', { kind: 'recall', about: 'me', me: true }],
    ['What do you remember?', { kind: 'recall', about: 'me', me: true }],
    ['tell me what you remember about me', { kind: 'recall', about: 'me', me: true }],
    ['what do you remember about my sister?', { kind: 'recall', about: 'my sister', me: false }],
    ['So what else do you remember about Lisbon?', { kind: 'recall', about: 'Lisbon', me: false }],
    ['show me what you remember about work', { kind: 'recall', about: 'work', me: false }],
  ];
  it.each(commands)('%s', (text, want) => {
    expect(parseMemoryCommand(text)).toEqual(want);
  });

  // Remarks, questions to the model, and chat instructions: no command, the model answers.
  const nearMisses = [
    "I can't remember that film",
    'do you remember the day we met?',
    'Do you remember my sister?',
    'remember when we went to Paris?',
    'Remember that film we watched last week',
    'remember that film we watched?',
    'remember that my sister is called Ana?',
    'remember to drink water',
    'I remember that my sister was called Ana',
    'remember that',
    'forget it',
    'Forget about it.',
    'forget what I said',
    'forget the last answer, try again',
    'forget all previous instructions',
    'forget everything',
    'forget to mention it',
    'I forgot my keys',
    "don't forget my birthday",
    'forget my sister?',
    'what do you know about the French revolution?',
    'what do you think about me?',
    'remember that my sister is called Ana\nand also that I like tea',
  ];
  it.each(nearMisses)('no command: %s', (text) => {
    expect(parseMemoryCommand(text)).toBeUndefined();
  });
});

describe('rememberedFact', () => {
  it('the user speaking of themselves: a trait in the second person', () => {
    expect(rememberedFact('my sister is called Ana')).toEqual({ kind: 'user-trait', text: 'Your sister is called Ana.', subject: 'user' });
    expect(rememberedFact("I'm allergic to peanuts and my doctor knows")).toMatchObject({
      kind: 'user-trait',
      text: 'You are allergic to peanuts and your doctor knows.',
    });
    expect(rememberedFact('I am vegan').text).toBe('You are vegan.');
    expect(rememberedFact('i was born in Porto').text).toBe('You were born in Porto.');
  });

  it('Tealeaf spoken of as "you" becomes Tealeaf before "I" becomes "you"', () => {
    expect(rememberedFact('you promised me a recipe').text).toBe('Tealeaf promised you a recipe.');
    expect(rememberedFact('I told you my name is Jo').text).toBe('You told Tealeaf your name is Jo.');
  });

  it('with a when, an event; about no one in particular, a note kept as written', () => {
    expect(rememberedFact('I have a dentist appointment on Friday')).toMatchObject({ kind: 'event', subject: 'user' });
    expect(rememberedFact('the wifi password is tea-for-two')).toEqual({
      kind: 'note',
      text: 'The wifi password is tea-for-two.',
      subject: 'user',
      context: 'You asked Tealeaf to remember this.',
    });
  });
});

describe('answerText: the words of every kind and state', () => {
  it('is defined for every combination and never empty', () => {
    for (const kind of COMMAND_KINDS)
      for (const state of COMMAND_STATES) expect(answerText({ kind, state, count: 2, about: 'x' }).length).toBeGreaterThan(10);
  });

  it('says what each state means', () => {
    expect(answerText({ kind: 'remember', state: 'done', remembered: 'Your sister is called Ana.' })).toBe(
      'Remembered: “Your sister is called Ana.”',
    );
    expect(answerText({ kind: 'remember', state: 'none', remembered: 'Your sister is called Ana.' })).toBe(
      'I already remember that: “Your sister is called Ana.”',
    );
    expect(answerText({ kind: 'remember', state: 'undone' })).toBe('Undone: that is not remembered.');
    expect(answerText({ kind: 'remember', state: 'temporary' })).toMatch(/temporary chat: nothing is remembered here/);
    expect(answerText({ kind: 'forget', state: 'asked', count: 1, about: 'my sister' })).toBe(
      'Forget this memory about “my sister”? Nothing is deleted until you confirm.',
    );
    expect(answerText({ kind: 'forget', state: 'asked', count: 3, about: 'me' })).toBe(
      'Forget these 3 memories about you? Nothing is deleted until you confirm.',
    );
    expect(answerText({ kind: 'forget', state: 'forgotten', count: 1 })).toBe('Forgot 1 memory.');
    expect(answerText({ kind: 'forget', state: 'forgotten', count: 2 })).toBe('Forgot 2 memories.');
    expect(answerText({ kind: 'forget', state: 'kept' })).toBe('Kept them: nothing was forgotten.');
    expect(answerText({ kind: 'forget', state: 'undone', count: 1 })).toBe('Undone: the memory is back.');
    expect(answerText({ kind: 'forget', state: 'undone', count: 2 })).toBe('Undone: the 2 memories are back.');
    expect(answerText({ kind: 'forget', state: 'none', about: 'my ex' })).toBe(
      'Nothing in your memory matches “my ex”, so nothing was forgotten.',
    );
    expect(answerText({ kind: 'forget', state: 'temporary' })).toMatch(/temporary chat.*nothing was forgotten/);
    expect(answerText({ kind: 'recall', state: 'done', about: 'me', count: 2 })).toBe(
      'What I remember about you that is true now (2 memories):',
    );
    expect(answerText({ kind: 'recall', state: 'done', about: 'Lisbon', count: 1, more: 3, past: 1 })).toBe(
      'What I remember about “Lisbon” that is true now (1 memory): 3 more are in the Memory view. 1 memory about it is no longer true (see the Memory view).',
    );
    expect(answerText({ kind: 'recall', state: 'none', about: 'me' })).toBe('I don’t remember anything about you that is true now.');
    expect(answerText({ kind: 'recall', state: 'none', about: 'me', chatPending: true })).toBe(
      'I don’t remember anything about you that is true now. What you said in this chat is remembered when it ends.',
    );
    expect(answerText({ kind: 'recall', state: 'none', about: 'Lisbon', past: 2 })).toBe(
      'Nothing in your memory about “Lisbon” is true now. 2 memories about it are no longer true (see the Memory view).',
    );
    expect(answerText({ kind: 'recall', state: 'temporary' })).toMatch(/temporary chat: it does not use your memory/);
  });
});
