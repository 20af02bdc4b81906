// What a change does to the memory it changes (docs/METHOD.md, section 4): a newer memory that
// changes an older one retires it (supersededBy: true until the newer one's time), whatever kinds
// the two are, when the labeller and the words agree; when only one of them says so, the user is
// asked (the edge carries askEnded, the memory notice asks) and nothing is retired until they answer.
// A false "Changed" retires a true fact, and small models label wrongly, so the rule is
// conservative and reads only what the labelling call gives (a label, no confidence) and the words.
import type { Memory, MemoryKind, RelationLabel } from '../types';
import { contentWords } from '../text';
import { isPast } from '../past';

/** retire: the older memory ends now; ask: the user is asked; keep: nothing changes. */
export type ChangeDecision = 'retire' | 'ask' | 'keep';

/** Kinds that say how things are (a state), not that something happened. */
const STATES: ReadonlySet<MemoryKind> = new Set(['user-trait', 'assistant-trait', 'note', 'instruction']);
/** A newer trait is itself how things are now; anything else must tell the change in words. */
const TRAITS: ReadonlySet<MemoryKind> = new Set(['user-trait', 'assistant-trait']);

/**
 * Words by which a memory tells a change ("You moved from Oslo to Bergen", "You no longer eat
 * meat", "You quit your job"). Stems: "mov" matches moved, moving, moves.
 */
const CHANGE_WORDS =
  /\b(mov(e|ed|es|ing)|relocat\w*|no longer|any ?more|stopp(ed|ing)|stops?|quit(s|ting)?|left|leav(e|es|ing)|switch(ed|es|ing)?|chang(e|ed|es|ing)|gave up|give up|giving up|instead|now|started|became|become|retir(ed|es|ing)|sold|broke up|divorced|cancell?ed|resigned|fired|replac(ed|es|ing)|used to|again)\b/i;

/** Whether the words tell that something changed. */
export function readsAsChange(text: string): boolean {
  return CHANGE_WORDS.test(text);
}

/** A text's content words, lightly stemmed as `sharedWords` compares them. */
export function contentStems(text: string): Set<string> {
  return new Set(contentWords(text).map(stemOf));
}

/** Content words the two share (stopwords, "you", "user" and one-letter words left out). */
export function sharedWords(a: string, b: string): string[] {
  const mine = new Set(contentWords(a).map(stemOf));
  return [...new Set(contentWords(b).map(stemOf))].filter((w) => mine.has(w) && !IGNORED.has(w));
}

/** Words too common in memories to say two are about the same thing. */
const IGNORED = new Set([
  'tealeaf',
  'now',
  'new',
  'again',
  'like',
  'said',
  'say',
  'told',
  'tell',
  'thing',
  'time',
  'today',
  'day',
  'week',
  'year',
]);

/** A light stem, so "answers" meets "answer" and "moved" meets "move". */
function stemOf(w: string): string {
  return w.replace(/(ies|es|s|ed|ing)$/, '').slice(0, 12) || w;
}

const SUBJECTS = new Set(['user', 'assistant']);

/** Two memories about different people (the user and Tealeaf) never change one another. */
function samePerson(a: Memory, b: Memory): boolean {
  const sa = a.subject?.toLowerCase();
  const sb = b.subject?.toLowerCase();
  if (a.kind === 'user-trait' && b.kind === 'assistant-trait') return false;
  if (a.kind === 'assistant-trait' && b.kind === 'user-trait') return false;
  return !(sa && sb && SUBJECTS.has(sa) && SUBJECTS.has(sb) && sa !== sb);
}

/**
 * What a labelled pair does to the older memory:
 * - labelled Changed: retired when the two share a content word and, unless the newer one is a
 *   trait, it reads as a change ("moved", "no longer", "quit", "again": an event that only
 *   mentions the same thing ends nothing, nor does a second instruction about answers); asked
 *   otherwise (a Changed whose pair shares no word is the small model's typical false label).
 * - labelled otherwise (not None): asked when the older one is a state, the newer reads as a
 *   change and they share a word (a conflict the labeller missed); else nothing.
 * Never for an older memory already past, or for memories about different people.
 */
export function changeDecision(older: Memory, newer: Memory, label: RelationLabel): ChangeDecision {
  if (label === 'None' || isPast(older) || !samePerson(older, newer)) return 'keep';
  const shared = sharedWords(older.text, newer.text).length > 0;
  const told = readsAsChange(newer.text);
  if (label === 'Changed') return shared && (TRAITS.has(newer.kind) || told) ? 'retire' : 'ask';
  return STATES.has(older.kind) && shared && told ? 'ask' : 'keep';
}
