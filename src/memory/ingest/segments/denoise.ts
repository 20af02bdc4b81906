// The index copy of a segment (SeCom indexes a compressed copy, the prompt gets the original).
// SeCom compresses with a learned model; here, without one, the noise removed is what BM25
// would otherwise reward or be diluted by: greetings and sign-offs, filler-only turns
// ("haha yes!", "thanks!"), and addressing the other speaker by name.
import { STOPWORDS, tokenize } from '../../retrieval/tokenize';

/** Openers and closers that say nothing about the topic. */
const BOILERPLATE = new Set([
  'hey',
  'hi',
  'hello',
  'bye',
  'goodbye',
  'thanks',
  'thank',
  'cheers',
  'wow',
  'awesome',
  'great',
  'cool',
  'nice',
  'amazing',
  'glad',
  'sounds',
  'good',
  'sure',
  'totally',
  'definitely',
  'absolutely',
  'congrats',
  'congratulations',
  'agreed',
  'right',
  'true',
  'see',
  'soon',
  'later',
  'take',
  'care',
  'catch',
  'talk',
  'chat',
  'awesome',
  'love',
  'sweet',
  'fun',
  'exciting',
  'happy',
  'hear',
  'meant',
  'lot',
  'much',
  'way',
  'well',
]);

/** True if the turn has no word that is neither a stopword nor boilerplate. */
export function isFillerTurn(text: string): boolean {
  return tokenize(text, { stem: false }).every((w) => BOILERPLATE.has(w) || /^\d{1,2}$/.test(w));
}

/**
 * Strips a leading greeting/address ("Hey Mel!", "Wow, Caroline,") and the names of the
 * participants from a turn: every turn of a segment has the same speakers, so their names only
 * dilute the segment's term statistics.
 */
export function denoiseTurnText(text: string, names: readonly string[] = []): string {
  let t = text;
  // Leading interjection clause: a short run of boilerplate words ending in ! , or . Words are
  // separated by at least one space or comma, so a long word cannot be split every way there is
  // (that backtracking froze memorising for a message starting with a long unbroken string).
  t = t.replace(/^\s*(?:[A-Za-z']+[\s,]+){0,3}[A-Za-z']+[\s,]*[!,.]\s*/, (m) => {
    const words = m.toLowerCase().match(/[a-z']+/g) ?? [];
    const lowerNames = names.map((n) => n.toLowerCase());
    return words.every((w) => BOILERPLATE.has(w) || STOPWORDS.has(w) || lowerNames.includes(w)) ? '' : m;
  });
  for (const name of names) {
    if (name.length < 2) continue;
    t = t.replace(new RegExp(`\\b${escapeRegExp(name)}\\b`, 'gi'), ' ');
  }
  return t.replace(/\s+/g, ' ').trim();
}

/** The index text for a run of turns: filler turns dropped, the rest denoised. */
export function denoiseForIndex(texts: readonly string[], names: readonly string[] = []): string {
  const kept = texts.filter((t) => !isFillerTurn(t)).map((t) => denoiseTurnText(t, names));
  return kept.filter((t) => t.length > 0).join('\n');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
