// Small text helpers shared by duplicate detection, similarity-only linking and the fallbacks.

/** Lower-case, collapse whitespace, drop surrounding quotes and final punctuation. */
export function normaliseMemoryText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^["'\s]+|["'\s.!?;:,]+$/g, '');
}

/** Two memories are exact duplicates when kind, subject and normalised text agree. */
export function duplicateKey(kind: string, subject: string | undefined, text: string): string {
  return `${kind}\u0000${(subject ?? '').toLowerCase()}\u0000${normaliseMemoryText(text)}`;
}

const STOPWORDS = new Set(
  (
    'a an the and or but if of to in on at for with from by about as is are was were be been being ' +
    'it its this that these those i you he she we they me him her us them my your his our their ' +
    'has have had do does did not no so very just really also than then there here what when ' +
    'who how which would could should can will shall may might up out into over s t user assistant'
  ).split(' '),
);

export function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9']+/g) ?? [])
    .map((w) => w.replace(/'s$/, '').replace(/'/g, ''))
    .filter((w) => w.length > 1 && !STOPWORDS.has(w));
}

/** Dice coefficient over distinct content words: 0 (nothing shared) .. 1 (same words). */
export function wordOverlap(a: string, b: string): number {
  const sa = new Set(contentWords(a));
  const sb = new Set(contentWords(b));
  if (sa.size === 0 || sb.size === 0) return 0;
  let shared = 0;
  for (const w of sa) if (sb.has(w)) shared++;
  return (2 * shared) / (sa.size + sb.size);
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0,
    na = 0,
    nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Rough prompt size: characters / 4 (the usual English BPE average). */
export function approxTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** A memory's date as prompts show it (YYYY-MM-DD); a time outside the Date range never throws. */
export function promptDate(time: number): string {
  const d = new Date(time);
  return Number.isNaN(d.getTime()) ? 'unknown date' : d.toISOString().slice(0, 10);
}
