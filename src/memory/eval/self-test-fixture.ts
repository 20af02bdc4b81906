// The fixed material of the model self-test (self-test.ts): a short chat with four clear facts
// about the user, one of them a change, and a new memory with two earlier ones to label, one an
// obvious change and one obviously unrelated. Fixed times and texts: the same model answers the
// same way every time (temperature 0), so a verdict can be remembered per model.
import type { TranscriptTurn } from '../ingest/summary-prompt';
import type { LabelledEvent, LabellingCandidate } from '../ingest/labelling';

const DAY = 86_400_000;
/** 6 May 2024, 18:00 UTC: any fixed date will do. */
const AT = Date.UTC(2024, 4, 6, 18, 0);

const line = (i: number, role: 'user' | 'assistant', text: string): TranscriptTurn => ({
  id: `self-test-${i}`,
  role,
  text,
  time: AT + i * 60_000,
});

export const SELF_TEST_TURNS: readonly TranscriptTurn[] = [
  line(1, 'user', "Hi! I moved to Lisbon last week for a new job at the children's hospital."),
  line(2, 'assistant', 'Welcome to Lisbon! How is the new job going so far?'),
  line(3, 'user', 'Busy, but good. My sister Ana lives nearby and helps me settle in.'),
  line(4, 'assistant', 'It is lovely to have family close by. What do you two like to do?'),
  line(5, 'user', 'I was vegetarian for ten years, but last month I started eating fish again. Ana and I cook together.'),
  line(6, 'assistant', 'That is quite a change. Are there fish dishes you enjoy?'),
  line(7, 'user', 'Grilled sardines! Also, I am training for my first half marathon in June.'),
  line(8, 'assistant', 'Good luck with the training. Sardines sound like good fuel for it.'),
];

/** A fact of the chat: found when a memory holds any of these words (or a longer form of one). */
export interface ExpectedFact {
  /** In words, for the reasons the user reads. */
  about: string;
  anyOf: readonly string[];
  /** This fact replaced an earlier one (the chat says it changed). */
  change?: boolean;
}

export const SELF_TEST_FACTS: readonly ExpectedFact[] = [
  { about: 'the move to Lisbon', anyOf: ['lisbon'] },
  { about: 'the sister Ana', anyOf: ['ana', 'sister'] },
  { about: 'eating fish again', anyOf: ['fish', 'pescatarian', 'sardines'], change: true },
  { about: 'the half marathon', anyOf: ['marathon'] },
];

/** The new memory of the labelling call, and its candidates with the label each should get. */
export const SELF_TEST_NEW_MEMORY: LabelledEvent = {
  text: 'You started eating fish again last month.',
  time: AT,
  excerpt: 'I was vegetarian for ten years, but last month I started eating fish again.',
};

/** Unrelated first, the change second: a model that calls the first candidate a change is caught. */
export const SELF_TEST_CANDIDATES: ReadonlyArray<LabellingCandidate & { expected: 'None' | 'Changed' }> = [
  {
    text: 'You are learning to play the cello.',
    time: AT - 40 * DAY,
    excerpt: 'I have started cello lessons on Tuesday evenings.',
    earlier: true,
    expected: 'None',
  },
  {
    text: 'You are vegetarian: you eat no meat and no fish.',
    time: AT - 90 * DAY,
    excerpt: 'I have been vegetarian for years, so no meat and no fish for me.',
    earlier: true,
    expected: 'Changed',
  },
];
