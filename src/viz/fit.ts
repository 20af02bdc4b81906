// The zoom and pan that show every node of a layout in a stage, with a margin: the force graph's
// "Fit", and its first view once the layout has settled.
export interface FitOptions {
  /** Margin in screen pixels on every side. */
  pad?: number;
  minK?: number;
  maxK?: number;
}

export function fitTransform(
  nodes: ReadonlyArray<{ x: number; y: number }>,
  width: number,
  height: number,
  { pad = 48, minK = 0.05, maxK = 3 }: FitOptions = {},
): { k: number; x: number; y: number } {
  if (nodes.length === 0 || width === 0 || height === 0) return { k: 1, x: 0, y: 0 };
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const n of nodes) {
    x0 = Math.min(x0, n.x);
    x1 = Math.max(x1, n.x);
    y0 = Math.min(y0, n.y);
    y1 = Math.max(y1, n.y);
  }
  // A single node (or a line of them) has no extent on an axis: do not zoom in without bound.
  const k = Math.min(maxK, Math.max(minK, Math.min((width - 2 * pad) / Math.max(1, x1 - x0), (height - 2 * pad) / Math.max(1, y1 - y0))));
  return { k, x: width / 2 - (k * (x0 + x1)) / 2, y: height / 2 - (k * (y0 + y1)) / 2 };
}
