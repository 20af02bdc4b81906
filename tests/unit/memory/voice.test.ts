import { describe, expect, it } from 'vitest';
import { displayText, secondPerson, shownMemory } from '../../../src/memory/voice';

describe('secondPerson: memories read as "you", for display only', () => {
  it.each([
    ['The user loves running early in the morning.', 'You love running early in the morning.'],
    ['The user is a tea person.', 'You are a tea person.'],
    ['The user now drinks coffee: a small espresso after swimming.', 'You now drink coffee: a small espresso after swimming.'],
    ['The user hurt their left knee on a long run, around kilometre 14.', 'You hurt your left knee on a long run, around kilometre 14.'],
    [
      "The user's sister Ana is getting married, and the user is giving the speech.",
      'Your sister Ana is getting married, and you are giving the speech.',
    ],
    [
      "A physiotherapist diagnosed runner's knee and told the user not to run for six weeks.",
      "A physiotherapist diagnosed runner's knee and told you not to run for six weeks.",
    ],
    ['If the user wants to run early, they should rest.', 'If the user wants to run early, they should rest.'],
    [
      "Tealeaf keeps the user's training encouraging and reminds them that rest days count.",
      'Tealeaf keeps your training encouraging and reminds you that rest days count.',
    ],
    ['The user and Miguel booked a trip to Lisbon.', 'You and Miguel booked a trip to Lisbon.'],
    // Known limit: only the verb right after "the user" is conjugated.
    ['The user watches films and tries new recipes.', 'You watch films and tries new recipes.'],
    ['User is afraid of cruise ships', 'You are afraid of cruise ships'],
    ['Running was how the user dealt with stress at work.', 'Running was how you dealt with stress at work.'],
    ['The user has a 30-day streak in the Portuguese app.', 'You have a 30-day streak in the Portuguese app.'],
    ['The user goes swimming.', 'You go swimming.'],
  ])('%s', (from, to) => {
    expect(secondPerson(from)).toBe(to);
  });

  it('leaves text alone where a pronoun could mean someone else, or the user is not named', () => {
    for (const t of [
      "The user's parents sold their house.",
      'The user knows they will be tempted to start running again too soon.',
      'Ana and her husband are spending their honeymoon in Lisbon.',
      'Caroline went to a support group.',
      'You love swimming.',
      '',
    ])
      expect(secondPerson(t)).toBe(t);
  });
});

describe('displayText', () => {
  it('rewrites events and traits, never notes (they are instructions to Tealeaf)', () => {
    const note = 'If the user wants to run before the six weeks are over, remind them of the advice.';
    expect(displayText({ kind: 'note', text: note })).toBe(note);
    expect(displayText({ kind: 'user-trait', text: 'The user loves tea.' })).toBe('You love tea.');
  });
});

describe('one wording of a memory everywhere', () => {
  it('the scripted model\'s "The user said: ..." reads "You said: ..."', () => {
    expect(displayText({ kind: 'event', text: 'The user said: My favourite tree is the ginkgo' })).toBe(
      'You said: My favourite tree is the ginkgo',
    );
  });

  it('shownMemory is a display copy worded by displayText; the stored record is not changed', () => {
    const stored = { id: 'm1', kind: 'user-trait' as const, text: 'The user loves tea.', sessionId: 's1' };
    const shown = shownMemory(stored);
    expect(shown).toEqual({ ...stored, text: displayText(stored) });
    expect(shown.text).toBe('You love tea.');
    expect(stored.text).toBe('The user loves tea.');
    // Nothing to rewrite (a note, or words already in the second person): the same object.
    const note = { kind: 'note' as const, text: 'If the user asks, remind them of the advice.' };
    expect(shownMemory(note)).toBe(note);
    const already = { kind: 'event' as const, text: 'You love swimming.' };
    expect(shownMemory(already)).toBe(already);
  });
});
