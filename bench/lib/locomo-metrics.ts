// The two LoCoMo retrieval metrics (bench/locomo.ts), pure so they can be unit tested.
// - evidence recall: share of a question's evidence turns among the source turns of the prompt;
// - answer hit: for a question whose gold answer is short, whether that answer appears in the
//   remembered text of the prompt. Stricter than recall: a turn can be "found" through a memory
//   that summarises it without the detail asked for, and a long segment can carry the turn while
//   the budget cuts nothing; the answer's words must actually be in what the model would read.

/** Gold answers longer than this (after normalising) are not scored by answer hit. */
export const SHORT_ANSWER_WORDS = 5;

const ARTICLES = new Set(['a', 'an', 'the']);
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** Lower case, punctuation to spaces, articles dropped, whitespace collapsed (SQuAD-style). */
export function normaliseAnswerText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/'s\b/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .split(' ')
    .filter((w) => w !== '' && !ARTICLES.has(w))
    .join(' ');
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * A gold answer that is exactly a calendar date ("7 May 2023", "May 7, 2023") also counts when the
 * prompt shows that date the way the app writes dates (ISO, YYYY-MM-DD, normalised to "2023 05 07").
 */
function isoForm(normalised: string): string | undefined {
  const monthOf = (w: string) => MONTHS.findIndex((m) => w.length >= 3 && m.startsWith(w));
  let m = /^(\d{1,2}) ([a-z]+) (\d{4})$/.exec(normalised);
  let day: number, month: number, year: number;
  if (m) [day, month, year] = [Number(m[1]), monthOf(m[2]!), Number(m[3])];
  else if ((m = /^([a-z]+) (\d{1,2}) (\d{4})$/.exec(normalised))) [day, month, year] = [Number(m[2]), monthOf(m[1]!), Number(m[3])];
  else return undefined;
  if (month < 0 || day < 1 || day > 31) return undefined;
  return `${year} ${pad2(month + 1)} ${pad2(day)}`;
}

/**
 * The forms a short gold answer is looked for in, or undefined when the answer is missing, empty
 * or longer than SHORT_ANSWER_WORDS words after normalising.
 */
export function shortAnswerForms(answer: string | undefined): string[] | undefined {
  if (answer === undefined) return undefined;
  const n = normaliseAnswerText(answer);
  if (n === '' || n.split(' ').length > SHORT_ANSWER_WORDS) return undefined;
  const iso = isoForm(n);
  return iso ? [n, iso] : [n];
}

/** True when one of the answer's forms appears, as whole words, in the normalised text. */
export function answerHit(forms: readonly string[], rememberedText: string): boolean {
  const text = ` ${normaliseAnswerText(rememberedText)} `;
  return forms.some((f) => text.includes(` ${f} `));
}

/** Means of values added under keys, with their counts. */
export class Tally {
  private readonly sums = new Map<string, number>();
  private readonly counts = new Map<string, number>();

  add(key: string, value: number): void {
    this.sums.set(key, (this.sums.get(key) ?? 0) + value);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Mean rounded to 3 decimals; undefined when nothing was added under the key. */
  mean(key: string): number | undefined {
    const n = this.count(key);
    return n === 0 ? undefined : Math.round((this.sums.get(key)! / n) * 1000) / 1000;
  }
}
