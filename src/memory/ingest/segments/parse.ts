// Defensive parsing of the segmentation call: never throws, always returns a contiguous cover.
//
// Small models truncate JSON, number turns from 1, overlap or skip turns, or answer nonsense.
// Repair keeps what is usable: sort, clip to the session, fill gaps with their own segment, cut
// overlaps at the previous end. If nothing usable is found, `usable` is false and the caller
// falls back to the embedding-free splitter.

export interface TurnRange {
  /** Inclusive turn indexes within the session. */
  first: number;
  last: number;
}

export interface ParsedSegmentation {
  ranges: TurnRange[];
  /** Whether the model's answer held at least one usable range. */
  usable: boolean;
  /** Whether anything had to be changed to make a valid cover. */
  repaired: boolean;
}

const START_KEYS = ['start', 'first', 'from', 'start_turn', 'startTurn', 'begin'];
const END_KEYS = ['end', 'last', 'to', 'end_turn', 'endTurn', 'stop'];

export function parseSegmentation(raw: unknown, turnCount: number): ParsedSegmentation {
  const n = Math.max(0, Math.floor(turnCount));
  if (n === 0) return { ranges: [], usable: false, repaired: false };
  let candidates: Array<[number, number]>;
  let repaired = false;
  try {
    const parsed = typeof raw === 'string' ? parseLoose(raw) : { value: raw, loose: false };
    repaired = parsed.loose;
    candidates = extractPairs(parsed.value);
  } catch {
    candidates = [];
  }
  if (candidates.length === 0) return { ranges: [{ first: 0, last: n - 1 }], usable: false, repaired: true };

  // One-based numbering: nothing starts at 0 and something ends exactly at n.
  const minStart = Math.min(...candidates.map(([s, e]) => Math.min(s, e)));
  const maxEnd = Math.max(...candidates.map(([s, e]) => Math.max(s, e)));
  if (minStart >= 1 && maxEnd === n) {
    candidates = candidates.map(([s, e]) => [s - 1, e - 1]);
    repaired = true;
  }
  const cover = repairCover(candidates, n);
  return { ranges: cover.ranges, usable: cover.usable, repaired: repaired || cover.repaired };
}

/**
 * Inclusive (first, last) position pairs, in any order and quality, made into a contiguous cover
 * of positions 0..n-1: swapped ends fixed, clipped to the session, sorted, gaps become their own
 * range, overlaps cut at the previous end. Shared by the segmentation call and the summary's topics.
 * `usable` is false (and the cover is one whole range) when no pair touches the session.
 */
export function repairCover(candidates: ReadonlyArray<readonly [number, number]>, turnCount: number): ParsedSegmentation {
  const n = Math.max(0, Math.floor(turnCount));
  if (n === 0) return { ranges: [], usable: false, repaired: false };
  let repaired = false;
  const clipped: TurnRange[] = [];
  for (const pair of candidates) {
    if (!Number.isFinite(pair[0]) || !Number.isFinite(pair[1])) {
      repaired = true;
      continue;
    }
    // `|| 0` turns -0 (a model can write it) into 0: positions are compared with Object.is downstream.
    let [s, e] = [Math.round(pair[0]) || 0, Math.round(pair[1]) || 0];
    if (s > e) {
      [s, e] = [e, s];
      repaired = true;
    }
    if (e < 0 || s > n - 1) {
      repaired = true;
      continue;
    }
    const first = Math.max(0, s);
    const last = Math.min(n - 1, e);
    if (first !== s || last !== e) repaired = true;
    clipped.push({ first, last });
  }
  if (clipped.length === 0) return { ranges: [{ first: 0, last: n - 1 }], usable: false, repaired: true };
  clipped.sort((a, b) => a.first - b.first || b.last - a.last);

  const ranges: TurnRange[] = [];
  let next = 0;
  for (const r of clipped) {
    if (r.last < next) {
      repaired = true; // wholly inside what is already covered
      continue;
    }
    if (r.first > next) {
      ranges.push({ first: next, last: r.first - 1 }); // a gap becomes its own segment
      repaired = true;
    } else if (r.first < next) {
      repaired = true; // overlap: cut at the previous end
    }
    ranges.push({ first: Math.max(r.first, next), last: r.last });
    next = r.last + 1;
  }
  if (next < n) {
    ranges.push({ first: next, last: n - 1 });
    repaired = true;
  }
  return { ranges, usable: true, repaired };
}

/** JSON.parse, else the same text cut back to its last complete element and closed. */
function parseLoose(text: string): { value: unknown; loose: boolean } {
  const trimmed = text
    .trim()
    .replace(/^```(?:json)?/i, '')
    .replace(/```$/, '');
  try {
    return { value: JSON.parse(trimmed), loose: false };
  } catch {
    // fall through to salvage
  }
  // Salvage every flat {...} object and every [a, b] integer pair in order.
  const objects: unknown[] = [];
  for (const m of trimmed.matchAll(/\{[^{}]*\}/g)) {
    try {
      objects.push(JSON.parse(m[0]));
    } catch {
      const s = matchNumber(m[0], START_KEYS);
      const e = matchNumber(m[0], END_KEYS);
      if (s !== undefined && e !== undefined) objects.push({ start: s, end: e });
    }
  }
  if (objects.length > 0) return { value: objects, loose: true };
  const pairs: unknown[] = [];
  for (const m of trimmed.matchAll(/\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]/g)) pairs.push([Number(m[1]), Number(m[2])]);
  return { value: pairs, loose: true };
}

function matchNumber(text: string, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    const m = new RegExp(`"?${k}"?\\s*:\\s*"?(-?\\d+)`).exec(text);
    if (m) return Number(m[1]);
  }
  return undefined;
}

function toInt(v: unknown): number | undefined {
  const x = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof x === 'number' && Number.isFinite(x) ? Math.round(x) || 0 : undefined;
}

function pick(o: Record<string, unknown>, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    const v = toInt(o[k]);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** Finds (start, end) pairs in whatever shape the model used. */
function extractPairs(value: unknown, depth = 0): Array<[number, number]> {
  if (depth > 4 || value === null || value === undefined) return [];
  if (Array.isArray(value)) {
    // [[s, e], ...] or [{start, end}, ...]
    const out: Array<[number, number]> = [];
    for (const item of value) {
      if (Array.isArray(item) && item.length >= 2) {
        const s = toInt(item[0]);
        const e = toInt(item[1]);
        if (s !== undefined && e !== undefined) out.push([s, e]);
      } else if (item && typeof item === 'object') {
        const o = item as Record<string, unknown>;
        const s = pick(o, START_KEYS);
        const e = pick(o, END_KEYS);
        if (s !== undefined && e !== undefined) out.push([s, e]);
        else if (s !== undefined) out.push([s, s]);
      }
    }
    return out;
  }
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const key of ['segments', 'segment', 'ranges', 'result', 'data']) {
      if (key in o) {
        const found = extractPairs(o[key], depth + 1);
        if (found.length > 0) return found;
      }
    }
    const s = pick(o, START_KEYS);
    const e = pick(o, END_KEYS);
    if (s !== undefined && e !== undefined) return [[s, e]];
  }
  return [];
}
