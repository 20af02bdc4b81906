// The faults mode: what 1-3B models are reported to write in JSON calls, injected into a scripted
// answer at a set rate. Each fault is a pure transform of the answer text (its randomness comes
// from the context), so each is unit tested alone; which one fires is drawn from a seeded
// generator, so a run with the same seed and the same calls fails the same way.
import type { JsonSchema } from '../../../src/ports';

export const FAULT_NAMES = ['schema-echo', 'cut-json', 'wrong-relation', 'repeated-item', 'empty-notes', 'whitespace'] as const;
export type FaultName = (typeof FAULT_NAMES)[number];

export interface FaultConfig {
  /** Share of JSON calls that get a fault, 0 to 1. */
  rate: number;
  /** Seed of the generator (default 1). */
  seed?: number;
  /** Only these faults (default: every one that applies to the answer). */
  only?: FaultName[];
}

export interface FaultContext {
  /** The schema's title: which call this is. */
  title: string;
  schema: JsonSchema;
  /** Numbers in [0, 1) for the transform's choices. */
  random: () => number;
  /** How long a runaway output grows (the enforcing wrapper makes it longer than the output cap). */
  fillChars: number;
}

export interface Fault {
  /** Whether the fault makes sense for this answer (e.g. a wrong relation label needs labels). */
  applies(answer: string, title: string): boolean;
  apply(answer: string, ctx: FaultContext): string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function parse(answer: string): Json | undefined {
  try {
    return JSON.parse(answer) as Json;
  } catch {
    return undefined;
  }
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first non-empty list of the answer, by key order, not looking inside lists. */
function firstList(v: Json | undefined): Json[] | undefined {
  if (Array.isArray(v)) return v.length > 0 ? v : undefined;
  if (!isObject(v)) return undefined;
  for (const child of Object.values(v)) {
    const found = firstList(child);
    if (found) return found;
  }
  return undefined;
}

function labelsOf(v: Json | undefined): Array<{ [key: string]: Json }> {
  const labels = isObject(v) ? v.labels : undefined;
  return Array.isArray(labels) ? labels.filter(isObject) : [];
}

function notesOf(v: Json | undefined): Array<{ [key: string]: Json }> {
  const notes = isObject(v) ? v.notes : undefined;
  return Array.isArray(notes) ? notes.filter(isObject) : [];
}

/** Offsets just after a `{`, `[`, `,` or `:` that is not inside a string. */
function structuralGaps(text: string): number[] {
  const at: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[' || c === ',' || c === ':') at.push(i + 1);
  }
  return at;
}

const pick = <T>(list: readonly T[], random: () => number): T => list[Math.floor(random() * list.length)];

export const FAULTS: Record<FaultName, Fault> = {
  /** The schema written back instead of an answer. */
  'schema-echo': {
    applies: () => true,
    apply: (_answer, ctx) => JSON.stringify(ctx.schema),
  },
  /** The JSON stops somewhere in its middle (10 % to 90 % of its length). */
  'cut-json': {
    applies: (answer) => answer.length >= 2,
    apply: (answer, ctx) => answer.slice(0, Math.max(1, Math.floor(answer.length * (0.1 + 0.8 * ctx.random())))),
  },
  /** One relation label turned into "Changed": a false change retires a trait that is still true. */
  'wrong-relation': {
    applies: (answer, title) => title === 'relation_labels' && labelsOf(parse(answer)).some((l) => l.relation !== 'Changed'),
    apply: (answer, ctx) => {
      const v = parse(answer);
      const label = pick(
        labelsOf(v).filter((l) => l.relation !== 'Changed'),
        ctx.random,
      );
      label.relation = 'Changed';
      return JSON.stringify(v);
    },
  },
  /** The last item of the first list written again and again, past the output cap. */
  'repeated-item': {
    applies: (answer) => firstList(parse(answer)) !== undefined,
    apply: (answer, ctx) => {
      const v = parse(answer);
      const list = firstList(v)!;
      const item = list[list.length - 1];
      const each = JSON.stringify(item).length + 1;
      const more = Math.max(1, Math.ceil((ctx.fillChars - answer.length) / each));
      for (let i = 0; i < more; i++) list.push(item);
      return JSON.stringify(v);
    },
  },
  /** Every timeline note left empty. */
  'empty-notes': {
    applies: (answer) => notesOf(parse(answer)).some((n) => typeof n.note === 'string' && n.note !== ''),
    apply: (answer) => {
      const v = parse(answer);
      for (const n of notesOf(v)) n.note = '';
      return JSON.stringify(v);
    },
  },
  /**
   * Runs of blank lines and spaces before the JSON and between its parts (still valid JSON, but
   * tokens spent); one time in four a runaway run of newlines at one spot, until the output cap.
   */
  whitespace: {
    applies: (answer) => answer.length > 0,
    apply: (answer, ctx) => {
      const gaps = structuralGaps(answer);
      if (ctx.random() < 0.25) {
        const at = pick([0, ...gaps], ctx.random);
        return answer.slice(0, at) + '\n'.repeat(ctx.fillChars) + answer.slice(at);
      }
      const run = () => '\n'.repeat(1 + Math.floor(ctx.random() * 4)) + ' '.repeat(Math.floor(ctx.random() * 12));
      let out = run();
      let from = 0;
      for (const at of gaps) {
        if (ctx.random() < 0.5) continue;
        out += answer.slice(from, at) + run();
        from = at;
      }
      return out + answer.slice(from);
    },
  },
};

/** A small seeded generator (mulberry32): the same seed gives the same numbers. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fires faults at the configured rate, with one seeded generator for every choice. */
export class FaultInjector {
  readonly counts: Record<FaultName, number> = Object.fromEntries(FAULT_NAMES.map((n) => [n, 0])) as Record<FaultName, number>;
  /** JSON answers seen. */
  answers = 0;
  private readonly random: () => number;

  constructor(readonly config: FaultConfig) {
    this.random = seeded(config.seed ?? 1);
  }

  /** The answer, with a fault in it when one fires. */
  apply(answer: string, ctx: Omit<FaultContext, 'random'>): { text: string; fault?: FaultName } {
    this.answers++;
    if (!(this.random() < this.config.rate)) return { text: answer };
    const names = (this.config.only ?? FAULT_NAMES).filter((n) => FAULTS[n].applies(answer, ctx.title));
    if (names.length === 0) return { text: answer };
    const fault = pick(names, this.random);
    this.counts[fault]++;
    return { text: FAULTS[fault].apply(answer, { ...ctx, random: this.random }), fault };
  }
}
