// Text labels over a drawing, in priority order, leaving out any that would cover one already
// placed or fall off the stage (a crowd of labels reads as none).

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
}

export interface LabelOptions {
  width: number;
  height: number;
  /** Gap between the point and the label. */
  offset?: number;
  charWidth?: number;
  lineHeight?: number;
}

/**
 * Candidates in priority order (most important first). Each goes right of its point, else left,
 * above or below it, whichever is free and on the stage; the first one is always shown (moved
 * onto the stage if it must), the others only where they fit.
 */
export function placeLabels<K>(candidates: readonly LabelCandidate<K>[], o: LabelOptions): PlacedLabel<K>[] {
  const offset = o.offset ?? 9;
  const charWidth = o.charWidth ?? 6.6;
  const lineHeight = o.lineHeight ?? 18;
  const placed: PlacedLabel<K>[] = [];
  const free = (left: number, top: number, w: number): boolean =>
    left >= 0 &&
    top >= 0 &&
    left + w <= o.width &&
    top + lineHeight <= o.height &&
    !placed.some((p) => left < p.left + p.width && p.left < left + w && top < p.top + p.height && p.top < top + lineHeight);
  candidates.forEach((c, i) => {
    const w = Math.min(c.text.length * charWidth + 10, o.width);
    // Above and below, the label slides sideways to stay on the stage.
    const centred = Math.max(0, Math.min(o.width - w, c.x - w / 2));
    const spots: [number, number][] = [
      [c.x + offset, c.y - lineHeight / 2],
      [c.x - offset - w, c.y - lineHeight / 2],
      [centred, c.y - offset - lineHeight],
      [centred, c.y + offset],
    ];
    let spot = spots.find(([left, top]) => free(left, top, w));
    if (!spot && i === 0) spot = [centred, Math.max(0, Math.min(o.height - lineHeight, c.y - offset - lineHeight))];
    if (spot) placed.push({ ...c, left: spot[0], top: spot[1], width: w, height: lineHeight });
  });
  return placed;
}
