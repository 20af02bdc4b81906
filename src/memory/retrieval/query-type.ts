// Query routing. A hypothetical question ("Would Melanie prefer a national park or a theme park?",
// "What would Caroline's political leaning likely be?") asks for an inference from who someone
// is, not for something that was said: its content words name the hypothesis ("theme park"), which
// the conversation seldom contains, and the evidence is the person's own preferences, habits and
// values. So it is answered from the memories (short facts about the person, many of them fit in
// the budget) before raw excerpts, which would match the hypothesis words by chance.

export type QueryType = 'hypothetical' | 'other';

/** Modal words that mark a question as asking what would or might be, not what was. */
const MODAL = /\b(would|wouldn't|might|likely|unlikely|probably|possibly)\b/i;

export function queryType(query: string): QueryType {
  return MODAL.test(query) ? 'hypothetical' : 'other';
}
