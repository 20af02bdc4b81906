// Memories read to the user in the second person ("You love running"). New summaries are written
// that way (ingest/summarise.ts); older ones said "The user ...". `secondPerson` rewrites those for
// display only, and only where the rewrite is safe: the stored text never changes, and a sentence
// whose "their"/"them"/"they" could mean someone else is left as it is.

import type { Memory } from './types';

const ADVERBS = new Set([
  'now',
  'also',
  'still',
  'often',
  'usually',
  'really',
  'always',
  'never',
  'sometimes',
  'just',
  'recently',
  'no',
  'longer',
  'actually',
  'already',
  'finally',
  'rarely',
  'mostly',
]);
/** Words after which "the user" is the subject of a clause. */
const CLAUSE = new Set([
  'if',
  'when',
  'that',
  'and',
  'because',
  'how',
  'why',
  'so',
  'while',
  'but',
  'as',
  'since',
  'until',
  'before',
  'after',
  'where',
  'which',
  'whether',
  'though',
  'although',
  'once',
]);
const IRREGULAR: Record<string, string> = {
  is: 'are',
  was: 'were',
  has: 'have',
  does: 'do',
  goes: 'go',
  "isn't": "aren't",
  "wasn't": "weren't",
  "hasn't": "haven't",
  "doesn't": "don't",
};
/** Other people whom a plural pronoun could mean: then pronouns are not touched (nor the text). */
const OTHERS =
  /\b(they|they're|they've|parents|friends|children|kids|family|colleagues|team|people|others|everyone|both)\b|\b(?!the user\b)\w+ and (his|her|their) \w+/i;

/** "loves" -> "love", "tries" -> "try", "watches" -> "watch"; undefined when not a third-person verb. */
function baseForm(word: string): string | undefined {
  const lower = word.toLowerCase();
  if (IRREGULAR[lower]) return IRREGULAR[lower];
  if (!/^[a-z]+s$/.test(lower) || /(ss|us|is)$/.test(lower) || lower.length < 3) return undefined;
  if (/[^aeiou]ies$/.test(lower)) return `${lower.slice(0, -3)}y`;
  if (/(ch|sh|x|z|o)es$/.test(lower)) return lower.slice(0, -2);
  return lower.slice(0, -1);
}

/**
 * The memory as the user reads it: "The user's sister" -> "Your sister", "The user loves running" ->
 * "You love running". Text that does not mention the user, or that cannot be rewritten safely, is
 * returned unchanged.
 */
export function secondPerson(text: string): string {
  let s = text.replace(/^User\b(?!')/, 'The user');
  if (!/\bthe user\b/i.test(s)) return text;
  const pronouns = /\b(their|theirs|them|themselves|themself)\b/i.test(s);
  if (pronouns && OTHERS.test(s.replace(/\bthe user and\b/gi, ''))) return text;
  if (/\bthey\b/i.test(s)) return text;

  s = s.replace(/\bthe user's\b/gi, (m) => (m[0] === 'T' ? 'Your' : 'your'));
  // "the user" followed by a verb in the present tense (maybe after adverbs): conjugate for "you".
  const words = s.split(/(\s+)/);
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^the$/i.test(w) && /^user\b/i.test(words[i + 2] ?? '') && !/^user'/i.test(words[i + 2] ?? '')) {
      const prev = (out.filter((x) => x.trim()).at(-1) ?? '').toLowerCase().replace(/[^a-z']/g, '');
      const atStart = out.every((x) => !x.trim()) || /[.!?:;]$/.test(out.filter((x) => x.trim()).at(-1) ?? '');
      const subject = atStart || CLAUSE.has(prev) || /,$/.test(out.filter((x) => x.trim()).at(-1) ?? '');
      const userWord = words[i + 2]!;
      const rest = userWord.slice(4); // punctuation after "user"
      out.push(w[0] === 'T' && atStart ? 'You' : w[0] === 'T' ? 'You' : 'you', rest);
      i += 2;
      if (subject && rest === '') {
        // Skip adverbs, then fix the verb.
        let j = i + 1;
        while (j + 1 < words.length && ADVERBS.has((words[j + 1] ?? '').toLowerCase())) j += 2;
        const verb = words[j + 1];
        if (verb !== undefined) {
          const m = /^([A-Za-z']+)(.*)$/.exec(verb);
          const base = m ? baseForm(m[1]!) : undefined;
          if (m && base) words[j + 1] = base + m[2];
        }
      }
      continue;
    }
    out.push(w);
  }
  s = out.join('');
  if (pronouns) {
    s = s
      .replace(/\bthemselves\b|\bthemself\b/gi, (m) => (m[0] === 'T' ? 'Yourself' : 'yourself'))
      .replace(/\btheirs\b/gi, (m) => (m[0] === 'T' ? 'Yours' : 'yours'))
      .replace(/\btheir\b/gi, (m) => (m[0] === 'T' ? 'Your' : 'your'))
      .replace(/\bthem\b/gi, (m) => (m[0] === 'T' ? 'You' : 'you'));
  }
  return s;
}

/**
 * What the views show for a memory: notes and standing instructions are addressed to Tealeaf and
 * stay as written. The one
 * wording of a memory: every place that shows one (explorer, toasts, notices, "why these") goes
 * through here, so a memory reads the same everywhere.
 */
export function displayText(m: Pick<Memory, 'kind' | 'text'>): string {
  return m.kind === 'note' || m.kind === 'instruction' ? m.text : secondPerson(m.text);
}

/** A display copy of the memory, its text as displayText words it (the stored record is untouched). */
export function shownMemory<M extends Pick<Memory, 'kind' | 'text'>>(m: M): M {
  const text = displayText(m);
  return text === m.text ? m : { ...m, text };
}

// Display copies by stored record: records are replaced, never changed, when a memory changes, so
// a graph change re-words only the memories it touched (not all 100,000 on every edit).
const shownCopies = new WeakMap<object, { kind: string; text: string; shown: unknown }>();

/** shownMemory, the same copy for the same record (re-made if the record's words changed after all). */
export function shownMemoryOf<M extends Pick<Memory, 'kind' | 'text'>>(m: M): M {
  const hit = shownCopies.get(m);
  if (hit && hit.kind === m.kind && hit.text === m.text) return hit.shown as M;
  const shown = shownMemory(m);
  shownCopies.set(m, { kind: m.kind, text: m.text, shown });
  return shown;
}
