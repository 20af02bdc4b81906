// Text processing shared by the lexical index, the budget and the segment splitter.
// Deliberately small and deterministic: the same function runs over documents and queries.

/** English function words and conversational filler that carry no topic. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are aren as at be because been before being below ' +
    'between both but by can could couldn did didn do does doesn doing don down during each else ever few for from ' +
    'further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it ' +
    'its itself just let me more most much must my myself no nor not now of off on once only or other our ours ' +
    'ourselves out over own same shall she should shouldn so some such than that the their theirs them themselves ' +
    'then there these they this those through to too under until up upon us very was wasn we were weren what when ' +
    'where which while who whom whose why will with won would wouldn you your yours yourself yourselves ' +
    // contractions split by the tokenizer ("i'm" -> "i", "m")
    's t m re ve ll d ' +
    // conversational filler
    'yeah yes yep ok okay oh hey hi hello wow really thanks thank lol haha hmm um uh ah gonna wanna got get gets ' +
    'getting go going goes went im ive id youre thats its dont cant wont didnt doesnt isnt'
  )
    .split(/\s+/)
    .filter(Boolean),
);

/**
 * A light suffix stripper (not Porter): folds the common inflections (plural, -ing, -ed,
 * possessive) so that "painting", "painted" and "paints" meet. Applied to documents and queries
 * alike, so its occasional odd stem ("lov") does no harm.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  // Plural first, so "paintings" and "painting" meet at "paint".
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('es') && w.length > 4 && /(?:ch|sh|x|z|ss)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 4) w = undouble(w.slice(0, -2));
  // A final silent e: "love"/"loved"/"loving" all end as "lov".
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  const n = w.length;
  if (n >= 3 && w[n - 1] === w[n - 2] && !'lsz'.includes(w[n - 1]!)) return w.slice(0, -1);
  return w;
}

export interface TokenizeOptions {
  /** Fold inflections (default true). */
  stem?: boolean;
  /** Words to drop (default STOPWORDS); pass an empty set to keep everything. */
  stopwords?: ReadonlySet<string>;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Lowercased word tokens, stopwords removed, optionally stemmed. */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const stops = options.stopwords ?? STOPWORDS;
  const doStem = options.stem ?? true;
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if (stops.has(w)) continue;
    out.push(doStem ? stem(w) : w);
  }
  return out;
}

/** Words as the context budget counts them: whitespace-separated runs. */
export function countWords(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || c === 10 || c === 9 || c === 13;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}
