// TEST DOUBLE of the memory search model (an Embedder) whose vectors encode meaning explicitly: a
// word stands for one or more concepts (a table below, e.g. "kid", "daughter", "girl" all for a
// child), and a text's vector is the normalised sum of its concepts' vectors (a fixed Gaussian draw
// per concept, seeded by its name). Words outside the table are their own concept, so texts that
// share words are close too. The static test embedder (scripts/make-test-assets.mjs) hashes each
// word to its own vector and so cannot say that "my kid" means "my daughter": this double is how the
// tests express synonymy, and they say so.
//
// It holds the real engine's limits (src/models/embed-worker-core.ts with bge-small-en-v1.5):
// 384 dimensions, unit vectors, a text cut at 512 tokens ([CLS] and [SEP] included; a word counted
// as one WordPiece per 8 letters, punctuation one each), inference in batches of 32, and one call
// at a time (the worker answers requests in order). `calls`, `texts` and `batches` count the work;
// `gate` holds a call before it answers (tests hold the background to show a reply does not wait).
import type { Embedder } from '../../src/ports';

export const CONCEPT_DIM = 384;
const MAX_TOKENS = 512;
const BATCH = 32;

/** Words that mean the same here; every other word is a concept of its own. */
export const SYNONYMS: Record<string, string[]> = {
  daughter: ['child'],
  kid: ['child'],
  kids: ['child'],
  child: ['child'],
  girl: ['child'],
  son: ['child'],
  little: ['child'],
  peanut: ['food', 'allergy'],
  peanuts: ['food', 'allergy'],
  nuts: ['food', 'allergy'],
  snack: ['food'],
  snacks: ['food'],
  eat: ['food'],
  eating: ['food'],
  food: ['food'],
  lunch: ['food'],
  allergic: ['allergy'],
  allergy: ['allergy'],
  avoid: ['allergy'],
  away: ['allergy'],
};

const STOP = new Set(
  'a an the and or but if of to in on at for with from by is are was were be it its this that i you my your we our me what which can should could would do does did has have had so as not no'.split(
    ' ',
  ),
);

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const cache = new Map<string, Float32Array>();
function conceptVector(name: string): Float32Array {
  let v = cache.get(name);
  if (v) return v;
  const rand = seeded(hash(name));
  v = new Float32Array(CONCEPT_DIM);
  for (let i = 0; i < CONCEPT_DIM; i++) v[i] = Math.sqrt(-2 * Math.log(Math.max(rand(), 1e-12))) * Math.cos(2 * Math.PI * rand());
  cache.set(name, v);
  return v;
}

/** The words the engine would read of a text: what fits 512 tokens. */
export function readWords(text: string): string[] {
  const out: string[] = [];
  let used = 2; // [CLS] and [SEP]
  for (const m of text.toLowerCase().matchAll(/[a-z0-9]+|[^\sa-z0-9]/g)) {
    const w = m[0];
    const cost = /[a-z0-9]/.test(w) ? 1 + Math.floor((w.length - 1) / 8) : 1;
    if (used + cost > MAX_TOKENS) break;
    used += cost;
    if (/[a-z0-9]/.test(w)) out.push(w);
  }
  return out;
}

export function conceptEmbedding(text: string): Float32Array {
  const v = new Float32Array(CONCEPT_DIM);
  for (const w of readWords(text)) {
    const weight = STOP.has(w) ? 0.05 : 1;
    for (const c of SYNONYMS[w] ?? [w.replace(/(es|s)$/, '')]) {
      const cv = conceptVector(c);
      for (let i = 0; i < CONCEPT_DIM; i++) v[i] += weight * cv[i]!;
    }
  }
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  // An empty text still has a direction, as the real model's [CLS] gives one.
  if (n === 0) return conceptEmbedding('[empty]');
  for (let i = 0; i < CONCEPT_DIM; i++) v[i] /= n;
  return v;
}

export class ConceptEmbedder implements Embedder {
  readonly modelId = 'test/concept-embedder';
  readonly dimension = CONCEPT_DIM;
  calls = 0;
  texts = 0;
  batches = 0;
  /** The texts of each call, in order. */
  readonly log: string[][] = [];
  /** Awaited before a call answers (a test holds a call there). */
  gate?: (texts: readonly string[]) => Promise<void>;
  private last: Promise<unknown> = Promise.resolve();

  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const run = async () => {
      signal?.throwIfAborted();
      this.calls++;
      this.texts += texts.length;
      this.log.push([...texts]);
      await this.gate?.(texts);
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        this.batches++;
        for (const t of texts.slice(i, i + BATCH)) out.push(conceptEmbedding(t));
      }
      return out;
    };
    // One request at a time, in the order asked, as the worker answers them.
    const next = this.last.then(run, run);
    this.last = next.catch(() => undefined);
    return next;
  }
}
