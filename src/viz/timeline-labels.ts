// Where the timeline's memory labels go, and what a click at a point means. Labels are placed in
// priority order (the selection, search matches, each thread's newest memory, then the best
// connected and most recent), each right or left of its dot in the room its row leaves, else in a
// tier under or over the row joined to the dot by a line (drawn behind labels), with the longest form of its text that
// fits there (label-text.ts). No label covers another label or any
// dot's target, so every click target (a dot's 24×24 square, a label's box at least 24 px tall,
// WCAG 2.5.8) belongs to one memory. Placing left to right in time order instead lets the
// first dots take all the room and cut every label short.
import { fitLabel, labelForms } from './label-text';

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface TimelineLabelCandidate<K> {
  key: K;
  /** Screen position of the dot. */
  x: number;
  y: number;
  /** The memory's text as shown. */
  text: string;
}

export interface PlacedTimelineLabel<K> extends Box {
  key: K;
  text: string;
  /** In the dot's row, or in a tier under or over it (joined to the dot by a line). */
  side: 'right' | 'left' | 'below' | 'above';
  /** The text is shown whole (not a short title). */
  whole: boolean;
  /** The dot. */
  x: number;
  y: number;
}

export interface TimelineLabelOptions {
  width: number;
  height: number;
  /** Width of a string as drawn. */
  measure: (s: string) => number;
  /** Side of a dot's square target and least height of a label's box (WCAG 2.5.8: 24). */
  target?: number;
  /** Padding inside a label's box, each side. */
  pad?: number;
  /** Widest label. */
  maxWidth?: number;
  /** Tiers of labels tried under and over a row whose own room is taken. */
  tiers?: number;
  /** What else labels must not cover (e.g. the lanes' names). */
  obstacles?: readonly Box[];
}

/** A dot's square click target. */
export function dotBox(x: number, y: number, target = 24): Box {
  return { left: x - target / 2, top: y - target / 2, width: target, height: target };
}

const intersects = (a: Box, b: Box): boolean =>
  a.left < b.left + b.width && b.left < a.left + a.width && a.top < b.top + b.height && b.top < a.top + a.height;

/** Boxes bucketed by vertical band, so a label only looks at what shares its rows. */
class Bands {
  private readonly bands = new Map<number, Box[]>();
  constructor(private readonly size: number) {}
  private keys(b: Box): number[] {
    const out: number[] = [];
    for (let k = Math.floor(b.top / this.size); k <= Math.floor((b.top + b.height) / this.size); k++) out.push(k);
    return out;
  }
  add(b: Box): void {
    for (const k of this.keys(b)) {
      const list = this.bands.get(k);
      if (list) list.push(b);
      else this.bands.set(k, [b]);
    }
  }
  near(b: Box): Box[] {
    const out = new Set<Box>();
    for (const k of this.keys(b)) for (const x of this.bands.get(k) ?? []) out.add(x);
    return [...out];
  }
}

/**
 * Labels for the candidates, in priority order (most important first); `dots` are every dot on
 * screen (their targets are kept free). A label is left out where no form of its text fits.
 */
export function placeTimelineLabels<K>(
  candidates: readonly TimelineLabelCandidate<K>[],
  dots: readonly { x: number; y: number }[],
  o: TimelineLabelOptions,
): PlacedTimelineLabel<K>[] {
  const target = o.target ?? 24;
  const pad = o.pad ?? 3;
  const maxWidth = o.maxWidth ?? 300;
  const tiers = o.tiers ?? 6;
  const taken = new Bands(target);
  for (const d of dots) taken.add(dotBox(d.x, d.y, target));
  for (const b of o.obstacles ?? []) taken.add(b);
  /** Room in the band at `top` from `start` rightwards (dir 1) or leftwards (-1); 0 where something covers `start`. */
  const room = (top: number, start: number, dir: 1 | -1): number => {
    if (top < 0 || top + target > o.height) return 0;
    const band: Box = { left: -1e9, top, width: 2e9, height: target };
    let limit = dir > 0 ? Math.min(o.width, start + maxWidth) : Math.max(0, start - maxWidth);
    for (const b of taken.near(band)) {
      if (!intersects(b, band)) continue;
      if (dir > 0) {
        if (b.left >= start - 0.01) limit = Math.min(limit, b.left);
        else if (b.left + b.width > start + 0.01) return 0;
      } else if (b.left + b.width <= start + 0.01) limit = Math.max(limit, b.left + b.width);
      else if (b.left < start - 0.01) return 0;
    }
    return Math.max(0, (limit - start) * dir);
  };
  const placed: PlacedTimelineLabel<K>[] = [];
  for (const c of candidates) {
    const forms = labelForms(c.text);
    const measure = (s: string) => o.measure(s) + 2 * pad;
    const rowTop = c.y - target / 2;
    // In the row: right of the dot's target, else left; the longer text wins, right on a tie.
    const right = fitLabel(forms, room(rowTop, c.x + target / 2, 1), measure);
    const left = fitLabel(forms, room(rowTop, c.x - target / 2, -1), measure);
    const rank = (s: string | null) => (s === null ? Infinity : forms.indexOf(s));
    let spot: { side: PlacedTimelineLabel<K>['side']; text: string; left: number; top: number } | null = null;
    if (right !== null && rank(right) <= rank(left)) spot = { side: 'right', text: right, left: c.x + target / 2, top: rowTop };
    else if (left !== null) spot = { side: 'left', text: left, left: c.x - target / 2 - Math.max(target, measure(left)), top: rowTop };
    // Else in a tier below (then above) the row, its left end joined to its dot by a line.
    for (let k = 1; !spot && k <= tiers; k++) {
      for (const side of ['below', 'above'] as const) {
        const top = side === 'below' ? c.y + target / 2 + (k - 1) * target : c.y - target / 2 - k * target;
        const text = fitLabel(forms, room(top, c.x + 2, 1), measure);
        if (text !== null) {
          spot = { side, text, left: c.x + 2, top };
          break;
        }
      }
    }
    if (!spot) continue;
    const box: PlacedTimelineLabel<K> = {
      key: c.key,
      text: spot.text,
      side: spot.side,
      whole: spot.text === forms[0],
      x: c.x,
      y: c.y,
      left: spot.left,
      top: spot.top,
      width: Math.max(target, measure(spot.text)),
      height: target,
    };
    taken.add(box);
    placed.push(box);
  }
  return placed;
}

/** Who is at a point: a label's box, else the nearest dot whose square target holds the point. */
export function targetAt<K>(
  px: number,
  py: number,
  labels: readonly PlacedTimelineLabel<K>[],
  dots: readonly { key: K; x: number; y: number }[],
  target = 24,
): K | null {
  for (const l of labels) if (px >= l.left && px <= l.left + l.width && py >= l.top && py <= l.top + l.height) return l.key;
  let best: K | null = null;
  let bestD = Infinity;
  for (const d of dots) {
    const dx = Math.abs(d.x - px);
    const dy = Math.abs(d.y - py);
    if (dx > target / 2 || dy > target / 2) continue;
    const dd = dx * dx + dy * dy;
    if (dd < bestD) {
      best = d.key;
      bestD = dd;
    }
  }
  return best;
}

export interface PriorityInput<K> {
  /** Dots on screen. */
  nodes: readonly { id: K; lane: number; time: number }[];
  selected?: K | null;
  /** Search matches, best first. */
  hits?: readonly K[];
  /** Links of a memory. */
  degree: (id: K) => number;
}

/**
 * The order labels are placed in: the selection, search matches, the newest memory of each
 * thread, then the best connected, then the most recent.
 */
export function labelPriority<K>(p: PriorityInput<K>): K[] {
  const on = new Set(p.nodes.map((n) => n.id));
  const out: K[] = [];
  const seen = new Set<K>();
  const push = (id: K) => {
    if (on.has(id) && !seen.has(id)) {
      seen.add(id);
      out.push(id);
    }
  };
  if (p.selected != null) push(p.selected);
  for (const id of p.hits ?? []) push(id);
  const newest = new Map<number, { id: K; time: number }>();
  for (const n of p.nodes) {
    const cur = newest.get(n.lane);
    if (!cur || n.time > cur.time) newest.set(n.lane, n);
  }
  for (const n of [...newest.values()].sort((a, b) => b.time - a.time)) push(n.id);
  const rest = [...p.nodes].sort((a, b) => p.degree(b.id) - p.degree(a.id) || b.time - a.time);
  for (const n of rest) push(n.id);
  return out;
}

export interface ScreenLabelInput<K> extends Omit<PriorityInput<K>, 'nodes'> {
  /** Dots on screen, in layout coordinates. */
  nodes: readonly { id: K; x: number; y: number; lane: number; time: number }[];
  /** Screen x of a layout x; screen y is layout y + ty. */
  sx: (x: number) => number;
  ty: number;
  text: (id: K) => string;
}

/** The dots on screen and their labels: priority, then placement (above). */
export function labelScreen<K>(
  p: ScreenLabelInput<K>,
  o: TimelineLabelOptions,
): { dots: { key: K; x: number; y: number }[]; labels: PlacedTimelineLabel<K>[] } {
  const dots = p.nodes.map((n) => ({ key: n.id, x: p.sx(n.x), y: n.y + p.ty }));
  // Past this many dots a label would not be read anyway, and placing them costs a frame.
  if (o.width === 0 || dots.length > 700) return { dots, labels: [] };
  const at = new Map(dots.map((d) => [d.key, d] as const));
  const order = labelPriority(p);
  return {
    dots,
    labels: placeTimelineLabels(
      order.map((id) => ({ ...at.get(id)!, text: p.text(id) })),
      dots,
      o,
    ),
  };
}

/** The lanes' names over their bands (LaneLabels: at most 70% of the stage or 34rem), which labels keep clear of. */
export const laneNameBoxes = (lanes: readonly { y: number }[], ty: number, width: number): Box[] =>
  lanes.map((l) => ({ left: 0, top: l.y + ty, width: Math.min(width * 0.7, 544), height: 22 }));
