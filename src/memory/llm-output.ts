// Defensive reading of model output. Small in-browser models wrap JSON in prose or code fences,
// stop mid-object when they hit the token limit, and invent relation names. Nothing here throws:
// every reader returns what could be salvaged plus a list of problems for the logs and the UI.
import { RELATIONS, type RelationLabel } from './types';

export interface Extracted {
  /** The parsed JSON value, or undefined when none could be recovered. */
  value: unknown;
  /** True when a JSON value was recovered (possibly after repair). */
  found: boolean;
  repaired: boolean;
  problems: string[];
}

const MAX_REPAIR_TRIES = 64;
/**
 * Our schemas nest four deep. Garbage nested thousands deep parses (JSON.parse does not recurse)
 * but then overflows the stack of whatever walks it next (JSON.stringify, structured cloning into
 * IndexedDB; a browser thread's stack is about 1 MB): it is refused here instead.
 */
const MAX_DEPTH = 32;

interface ScanState {
  stack: string[];
  /** The deepest nesting seen. */
  depth: number;
  inString: boolean;
  escaped: boolean;
  stringStart: number;
  /** Index just past the end of the first complete top-level value, or -1. */
  end: number;
  /** Positions (outside strings) where a truncated text may be cut back to. */
  cuts: number[];
}

function scan(text: string, start: number): ScanState {
  const s: ScanState = { stack: [], depth: 0, inString: false, escaped: false, stringStart: -1, end: -1, cuts: [] };
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (s.inString) {
      if (s.escaped) s.escaped = false;
      else if (c === '\\') s.escaped = true;
      else if (c === '"') s.inString = false;
      continue;
    }
    if (c === '"') {
      s.inString = true;
      s.stringStart = i;
    } else if (c === '{' || c === '[') {
      s.stack.push(c === '{' ? '}' : ']');
      s.depth = Math.max(s.depth, s.stack.length);
      s.cuts.push(i + 1);
    } else if (c === '}' || c === ']') {
      s.stack.pop();
      if (s.stack.length === 0) {
        s.end = i + 1;
        return s;
      }
    } else if (c === ',') {
      s.cuts.push(i);
    }
  }
  return s;
}

/** Closes whatever a prefix left open; the result may still be invalid (then cut further back). */
function closePrefix(prefix: string, start: number): string {
  const st = scan(prefix, start);
  let out = prefix;
  if (st.inString) out += st.escaped ? '\\"' : '"';
  out = out.replace(/[\s,]+$/, '');
  if (out.endsWith(':')) out += 'null';
  return out + [...st.stack].reverse().join('');
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Light fixes for near-JSON: trailing commas, smart quotes. */
function tidy(text: string): string {
  return text.replace(/[\u201c\u201d]/g, '"').replace(/,\s*([}\]])/g, '$1');
}

function stripFences(text: string): string {
  const open = text.indexOf('```');
  if (open < 0) return text;
  const afterTag = text.indexOf('\n', open);
  const bodyStart = afterTag < 0 ? open + 3 : afterTag + 1;
  const close = text.indexOf('```', bodyStart);
  return close < 0 ? text.slice(bodyStart) : text.slice(bodyStart, close);
}

/** Finds the first JSON object or array in a model's text and parses it, repairing truncation. */
export function extractJson(raw: unknown): Extracted {
  const problems: string[] = [];
  if (typeof raw !== 'string' || raw.trim() === '') {
    return { value: undefined, found: false, repaired: false, problems: ['empty output'] };
  }
  const text = stripFences(raw);
  const start = text.search(/[{[]/);
  if (start < 0) return { value: undefined, found: false, repaired: false, problems: ['no JSON in output'] };
  if (start > 0 && text.slice(0, start).trim() !== '') problems.push('text before JSON ignored');

  const st = scan(text, start);
  if (st.depth > MAX_DEPTH) return { value: undefined, found: false, repaired: false, problems: [...problems, 'JSON nested too deeply'] };
  if (st.end > 0) {
    const slice = text.slice(start, st.end);
    const direct = tryParse(slice);
    if (direct.ok) {
      if (text.slice(st.end).trim() !== '') problems.push('text after JSON ignored');
      return { value: direct.value, found: true, repaired: false, problems };
    }
    const tidied = tryParse(tidy(slice));
    if (tidied.ok) return { value: tidied.value, found: true, repaired: true, problems: [...problems, 'invalid JSON tidied'] };
    problems.push('invalid JSON');
  } else {
    problems.push('truncated JSON');
  }

  // Truncated (or broken) text: close what is open; if that fails, cut back to an earlier comma
  // or bracket and close again. A value cut inside a string is dropped rather than kept half-written.
  const body = st.end > 0 ? text.slice(0, st.end) : text;
  const limit = st.inString && st.end < 0 ? st.stringStart : body.length;
  const candidates = [limit, ...st.cuts.filter((c) => c < limit).reverse()];
  for (const cut of candidates.slice(0, MAX_REPAIR_TRIES)) {
    const attempt = tryParse(tidy(closePrefix(body.slice(0, cut), start)));
    if (attempt.ok) return { value: attempt.value, found: true, repaired: true, problems: [...problems, 'JSON repaired'] };
  }
  return { value: undefined, found: false, repaired: false, problems: [...problems, 'JSON could not be repaired'] };
}

const RELATION_ALIASES: Record<string, RelationLabel> = {
  changed: 'Changed',
  change: 'Changed',
  changes: 'Changed',
  changedinto: 'Changed',
  updated: 'Changed',
  cause: 'Cause',
  causes: 'Cause',
  caused: 'Cause',
  causedby: 'Reason',
  reason: 'Reason',
  reasons: 'Reason',
  because: 'Reason',
  becauseof: 'Reason',
  hinderedby: 'HinderedBy',
  hindered: 'HinderedBy',
  hinders: 'HinderedBy',
  hinder: 'HinderedBy',
  react: 'React',
  reacts: 'React',
  reaction: 'React',
  reacted: 'React',
  want: 'Want',
  wants: 'Want',
  wanted: 'Want',
  xwant: 'Want',
  sametopic: 'SameTopic',
  topic: 'SameTopic',
  similartopic: 'SameTopic',
  sametopics: 'SameTopic',
  none: 'None',
  norelation: 'None',
  unrelated: 'None',
  null: 'None',
  no: 'None',
  na: 'None',
};

/**
 * A relation name as the model wrote it -> our label. Case, spaces, underscores and hyphens are
 * ignored ("same topic", "hindered_by"). Anything unrecognised is None: no edge beats a wrong one.
 */
export function normaliseRelation(raw: unknown): { label: RelationLabel; recognised: boolean } {
  if (typeof raw !== 'string') return { label: 'None', recognised: raw === null };
  const key = raw.toLowerCase().replace(/[^a-z]/g, '');
  // Own keys only: "constructor" or "tostring" must not reach Object.prototype.
  const alias = Object.hasOwn(RELATION_ALIASES, key) ? RELATION_ALIASES[key] : undefined;
  if (alias) return { label: alias, recognised: true };
  const exact = RELATIONS.find((r) => r.toLowerCase() === key);
  return exact ? { label: exact, recognised: true } : { label: 'None', recognised: false };
}

/** The first array found under any of `keys` (or the value itself when it is an array). */
export function pickArray(value: unknown, keys: readonly string[]): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    for (const k of keys) {
      const v = obj[k];
      if (Array.isArray(v)) return v;
    }
    // Case-insensitive, punctuation-insensitive key match ("user_traits" for "userTraits").
    const wanted = new Set(keys.map((k) => k.toLowerCase().replace(/[^a-z]/g, '')));
    for (const [k, v] of Object.entries(obj)) {
      if (Array.isArray(v) && wanted.has(k.toLowerCase().replace(/[^a-z]/g, ''))) return v;
    }
  }
  return undefined;
}

/** A 1-based index as a model may write it: 2, "2", "#2", "[2]", "candidate 2". */
export function readIndex(raw: unknown): number | undefined {
  if (typeof raw === 'number' && Number.isInteger(raw)) return raw;
  if (typeof raw === 'string') {
    const m = /(\d+)/.exec(raw);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** Collapses whitespace and trims; returns '' for non-strings. */
export function cleanText(raw: unknown, maxLength = 600): string {
  if (typeof raw !== 'string') return '';
  return raw.replace(/\s+/g, ' ').trim().slice(0, maxLength);
}

/**
 * A small model sometimes answers with the JSON schema it was given instead of an answer
 * ({"type": "object", "properties": {...}}): readable JSON that holds nothing. Read as no answer.
 */
export function isSchemaEcho(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  return (o.type === 'object' || o.$schema !== undefined) && typeof o.properties === 'object' && o.properties !== null;
}
