// Embedding-free segmentation for when no model is loaded: TextTiling (Hearst 1997) over turns.
// Lexical cohesion between the window of turns before and after each gap; a boundary goes where
// cohesion dips deepest relative to the peaks around it, with segment lengths kept in bounds.
import { tokenize } from '../../retrieval/tokenize';
import type { TurnRange } from './parse';

export interface SplitterOptions {
  /** Turns on each side of a gap compared for cohesion. */
  window?: number;
  /** Fewest turns in a segment (the last segment of a short session may be shorter). */
  minTurns?: number;
  /** Most turns in a segment. */
  maxTurns?: number;
  /**
   * Boundary cutoff in standard deviations above the mean depth: TextTiling uses mean - sd/2
   * (liberal, -0.5); higher values give fewer, longer segments.
   */
  cutoff?: number;
}

export const DEFAULT_SPLITTER: Required<SplitterOptions> = { window: 3, minTurns: 3, maxTurns: 8, cutoff: -0.5 };

export function splitByCohesion(texts: readonly string[], options: SplitterOptions = {}): TurnRange[] {
  const { window, minTurns, maxTurns, cutoff } = { ...DEFAULT_SPLITTER, ...options };
  const n = texts.length;
  if (n === 0) return [];
  const min = Math.max(1, Math.min(minTurns, maxTurns));
  const max = Math.max(min, maxTurns);
  if (n <= min) return [{ first: 0, last: n - 1 }];
  const bags = texts.map((t) => bag(tokenize(t)));

  // sim[g]: cohesion across the gap before turn g (g = 1..n-1).
  const sim = new Float64Array(n);
  for (let g = 1; g < n; g++) {
    sim[g] = cosine(merge(bags.slice(Math.max(0, g - window), g)), merge(bags.slice(g, Math.min(n, g + window))));
  }
  const depth = new Float64Array(n);
  for (let g = 1; g < n; g++) {
    let left = sim[g]!;
    for (let i = g - 1; i >= 1 && sim[i]! >= left; i--) left = sim[i]!;
    let right = sim[g]!;
    for (let i = g + 1; i < n && sim[i]! >= right; i++) right = sim[i]!;
    depth[g] = left - sim[g]! + (right - sim[g]!);
  }
  const gaps = Array.from({ length: n - 1 }, (_, i) => i + 1);
  const mean = gaps.reduce((a, g) => a + depth[g]!, 0) / gaps.length;
  const sd = Math.sqrt(gaps.reduce((a, g) => a + (depth[g]! - mean) ** 2, 0) / gaps.length);
  const threshold = mean + cutoff * sd;

  // Deepest gaps first, each accepted only if both sides keep at least `min` turns.
  const bounds = new Set<number>();
  const ok = (g: number) => {
    const sorted = [0, ...[...bounds].sort((a, b) => a - b), n];
    for (let i = 0; i + 1 < sorted.length; i++) {
      const lo = sorted[i]!;
      const hi = sorted[i + 1]!;
      if (g > lo && g < hi) return g - lo >= min && hi - g >= min;
    }
    return false;
  };
  const byDepth = [...gaps].sort((a, b) => depth[b]! - depth[a]! || a - b);
  for (const g of byDepth) if (depth[g]! > 0 && depth[g]! >= threshold && ok(g)) bounds.add(g);

  // Overlong segments: split at their least cohesive allowed gap until all fit.
  let ranges = toRanges(bounds, n);
  for (let guard = 0; guard < n && ranges.some((r) => r.last - r.first + 1 > max); guard++) {
    const r = ranges.find((x) => x.last - x.first + 1 > max)!;
    let best = -1;
    for (let g = r.first + min; g <= r.last + 1 - min; g++) if (best < 0 || sim[g]! < sim[best]!) best = g;
    bounds.add(best > 0 ? best : r.first + max);
    ranges = toRanges(bounds, n);
  }
  return ranges;
}

function toRanges(bounds: ReadonlySet<number>, n: number): TurnRange[] {
  const starts = [0, ...[...bounds].sort((a, b) => a - b)];
  return starts.map((s, i) => ({ first: s, last: (starts[i + 1] ?? n) - 1 }));
}

function bag(tokens: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of tokens) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

function merge(bags: readonly Map<string, number>[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const b of bags) for (const [t, c] of b) m.set(t, (m.get(t) ?? 0) + c);
  return m;
}

function cosine(a: Map<string, number>, b: Map<string, number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (const [t, c] of a) {
    na += c * c;
    const d = b.get(t);
    if (d) dot += c * d;
  }
  for (const c of b.values()) nb += c * c;
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
