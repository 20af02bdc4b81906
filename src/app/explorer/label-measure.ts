// The width of a label's text as the browser draws it (11.5 px in the element's font), measured
// once per string: the placement (viz/labels.ts, viz/timeline-labels.ts) must know real widths for
// its promise that no two labels overlap to hold on screen.
import { cachedMeasure, estimateWidth } from '../../viz/label-text';

export function labelMeasure(el: Element | undefined, px = 11.5): (s: string) => number {
  const ctx = el ? document.createElement('canvas').getContext('2d') : null;
  if (!el || !ctx) return estimateWidth(px * 0.6);
  ctx.font = `${px}px ${getComputedStyle(el).fontFamily}`;
  return cachedMeasure((s) => ctx.measureText(s).width);
}
