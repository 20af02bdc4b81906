// Text labels over a drawing, in priority order, leaving out any that would cover one already
// placed, a dot, or fall off the stage (a crowd of labels reads as none). A label that does not fit
// whole takes a shorter form of whole words (label-text.ts), never one cut inside a word.
import { fitLabel, labelForms } from './label-text';
import type { Box } from './timeline-labels';

export interface LabelCandidate<K> {
  key: K;
  /** Screen position of the point labelled. */
  x: number;
  y: number;
  text: string;
}

export interface PlacedLabel<K> extends LabelCandidate<K> {
  /** Top-left of the label box. */
  left: number;
  top: number;
  width: number;
  height: number;
  /** The text is shown whole. */
  whole: boolean;
}

export interface LabelOptions {
  width: number;
  height: number;
  /** Gap between the point and the label. */
  offset?: number;
  charWidth?: number;
  /** Width of a string as drawn (default: charWidth per character). */
  measure?: (s: string) => number;
  lineHeight?: number;
  /** Widest label (default: the stage). */
  maxWidth?: number;
  /** What labels must not cover (e.g. the dots' click targets). */
  obstacles?: readonly Box[];
  /** The first candidate is always shown, moved onto the stage if it must (the selection). */
  forceFirst?: boolean;
}

const intersects = (a: Box, left: number, top: number, w: number, h: number): boolean =>
  left < a.left + a.width && a.left < left + w && top < a.top + a.height && a.top < top + h;

/**
 * Candidates in priority order (most important first). Each goes right of its point, else left,
 * above or below it, whichever is free and on the stage, with the longest form of its text that
 * fits there; with `forceFirst` (default) the first one is always shown, the others only where
 * they fit.
 */
export function placeLabels<K>(candidates: readonly LabelCandidate<K>[], o: LabelOptions): PlacedLabel<K>[] {
  const offset = o.offset ?? 9;
  const charWidth = o.charWidth ?? 6.6;
  const measure = o.measure ?? ((s: string) => s.length * charWidth);
  const lineHeight = o.lineHeight ?? 18;
  const maxWidth = Math.min(o.maxWidth ?? o.width, o.width);
  const forceFirst = o.forceFirst ?? true;
  const placed: PlacedLabel<K>[] = [];
  const obstacles = o.obstacles ?? [];
  const free = (left: number, top: number, w: number, self: { x: number; y: number }): boolean =>
    left >= 0 &&
    top >= 0 &&
    left + w <= o.width &&
    top + lineHeight <= o.height &&
    !placed.some((p) => intersects(p, left, top, w, lineHeight)) &&
    // A point's own target does not count: its label sits beside it.
    !obstacles.some(
      (b) =>
        !(self.x >= b.left && self.x <= b.left + b.width && self.y >= b.top && self.y <= b.top + b.height) &&
        intersects(b, left, top, w, lineHeight),
    );
  const boxWidth = (s: string) => measure(s) + 10;
  candidates.forEach((c, i) => {
    const forms = labelForms(c.text);
    let spot: [number, number, string] | undefined;
    for (const text of forms) {
      const w = boxWidth(text);
      if (w > maxWidth) continue;
      // Above and below, the label slides sideways to stay on the stage.
      const centred = Math.max(0, Math.min(o.width - w, c.x - w / 2));
      const spots: [number, number][] = [
        [c.x + offset, c.y - lineHeight / 2],
        [c.x - offset - w, c.y - lineHeight / 2],
        [centred, c.y - offset - lineHeight],
        [centred, c.y + offset],
      ];
      const s = spots.find(([left, top]) => free(left, top, w, c));
      if (s) {
        spot = [s[0], s[1], text];
        break;
      }
    }
    if (!spot && i === 0 && forceFirst) {
      const text = fitLabel(forms, maxWidth, boxWidth) ?? forms[forms.length - 1] ?? '';
      const w = Math.min(boxWidth(text), o.width);
      spot = [
        Math.max(0, Math.min(o.width - w, c.x - w / 2)),
        Math.max(0, Math.min(o.height - lineHeight, c.y - offset - lineHeight)),
        text,
      ];
    }
    if (spot)
      placed.push({
        ...c,
        text: spot[2],
        whole: spot[2] === forms[0],
        left: spot[0],
        top: spot[1],
        width: Math.min(boxWidth(spot[2]), o.width),
        height: lineHeight,
      });
  });
  return placed;
}

/**
 * Which memories the graph labels when nothing is selected: the best connected and the most recent,
 * taken in turn (ties: the more recent), each once, at most `max`.
 */
export function overviewLabelOrder<K>(nodes: readonly { id: K; degree: number; time: number }[], max = 40): K[] {
  const connected = [...nodes].sort((a, b) => b.degree - a.degree || b.time - a.time);
  const recent = [...nodes].sort((a, b) => b.time - a.time);
  const out: K[] = [];
  const seen = new Set<K>();
  for (let i = 0; out.length < max && i < nodes.length; i++) {
    for (const n of [connected[i], recent[i]]) {
      if (out.length < max && !seen.has(n.id)) {
        seen.add(n.id);
        out.push(n.id);
      }
    }
  }
  return out;
}

/** The label under a point, if any. */
export function labelAt<K>(labels: readonly PlacedLabel<K>[], px: number, py: number): K | undefined {
  return labels.find((l) => px >= l.left && px <= l.left + l.width && py >= l.top && py <= l.top + l.height)?.key;
}
