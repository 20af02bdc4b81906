// Does a text repeat a fact? A reply that had a forgotten fact in its prompt some other way than
// being asked about it (the persona bank, a passage, the chat it was said in) is forgotten with it
// only when its words repeat the fact: two of the fact's content words (all, for a fact of one).
// The candidates are few (replies that could have read the fact), so a loose test errs on the side
// of forgetting; what it takes is shown before and comes back with Undo.
import { tokenize } from '../retrieval/tokenize';

/** Words of the memories' own framing ("The user said: ..."), not of the fact. */
const FRAMING: ReadonlySet<string> = new Set(['user', 'said', 'assistant', 'tealeaf']);

export function factWords(fact: string): Set<string> {
  return new Set(tokenize(fact).filter((w) => !FRAMING.has(w)));
}

export function repeatsFact(text: string, facts: readonly string[]): boolean {
  const words = new Set(tokenize(text));
  return facts.some((fact) => {
    const wanted = factWords(fact);
    const need = Math.min(2, wanted.size);
    if (need === 0) return false;
    let shared = 0;
    for (const w of wanted) if (words.has(w)) shared++;
    return shared >= need;
  });
}
