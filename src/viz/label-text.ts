// What a memory's label says where there is room for only part of it: the text whole, else a
// short title made of whole words. The lead that every scripted or imported memory shares
// ("You said: ...") goes first, since it tells one label from another nothing; a label is never cut
// inside a word ("You said: I'm th…" reads as nothing), and one that would say too little is
// better not shown at all (the full text is on hover and focus).

/** Leads that say who spoke, not what about. */
const LEAD = /^(?:you|the user)\s+(?:said|mentioned|told me|told tealeaf|shared|noted|asked(?: about)?)(?:\s+that)?\s*[:,-]?\s+/i;
/** Words a short title does not end on ("I'm thinking about a…"). */
const DANGLING = new Set(
  "a an the and or but of to in on at for with about from by as is are was were be been that this than my your his her its our their i i'm you we they it so if".split(
    ' ',
  ),
);
/** A short title has at least this many words (or the whole text, when it has fewer). */
const MIN_WORDS = 3;
/** Most words tried: a title, not a paragraph. */
const MAX_WORDS = 12;

const clean = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The text without its lead ("You said: "), first letter upper case. */
export function labelCore(text: string): string {
  const t = clean(text);
  const core = t.replace(LEAD, '');
  if (!core || core === t) return t;
  return core[0].toUpperCase() + core.slice(1);
}

/**
 * The forms a label may take, longest first: the text without its lead, its first clause, then whole-word titles of fewer and fewer words ending in "…" (never on a word such as
 * "the" or "about"), down to MIN_WORDS.
 */
export function labelForms(text: string): string[] {
  const whole = clean(text);
  if (!whole) return [];
  // The lead is left out even where the whole text would fit: labels side by side read as a list
  // of what was said, not as a column of "You said:".
  const core = labelCore(whole);
  const forms = [core];
  const clause = /^(.+?)[.;:!?—](?:\s|$)/.exec(core)?.[1]?.trim();
  if (clause && clause !== core && clause.split(' ').length >= MIN_WORDS) forms.push(clause);
  const words = (clause ?? core).split(' ');
  for (let n = Math.min(words.length - 1, MAX_WORDS); n >= MIN_WORDS; n--) {
    const title = words.slice(0, n);
    while (title.length >= MIN_WORDS && DANGLING.has(title[title.length - 1].toLowerCase().replace(/[^a-z']/g, ''))) title.pop();
    if (title.length < MIN_WORDS) continue;
    const s = `${title.join(' ').replace(/[,;:]$/, '')}…`;
    if (!forms.includes(s)) forms.push(s);
  }
  return forms;
}

/** The longest form no wider than `room`, or null when none fits (then no label is shown). */
export function fitLabel(forms: readonly string[], room: number, measure: (s: string) => number): string | null {
  for (const f of forms) if (measure(f) <= room) return f;
  return null;
}

/** A width estimate for tests and for a stage with no canvas to measure on. */
export const estimateWidth =
  (charWidth = 6.6) =>
  (s: string): number =>
    s.length * charWidth;

/** Remembers the width of each string measured (measuring text is the costly part of a frame). */
export function cachedMeasure(measure: (s: string) => number, max = 5000): (s: string) => number {
  const cache = new Map<string, number>();
  return (s) => {
    let w = cache.get(s);
    if (w === undefined) {
      if (cache.size >= max) cache.clear();
      w = measure(s);
      cache.set(s, w);
    }
    return w;
  };
}
