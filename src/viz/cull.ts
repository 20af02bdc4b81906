// What of a timeline layout is on screen (with a margin), so the SVG renderer draws only that
// while zoomed in. Data in, subsets out; the frame is the view's zoom, pan and size.
import type { LayoutEdge, LayoutLane, LayoutNode } from './lanes';

export interface ScreenFrame {
  /** Zoom of the time axis. */
  k: number;
  /** Horizontal pan (screen x of layout x 0). */
  x: number;
  /** Vertical pan. */
  ty: number;
  width: number;
  height: number;
}

const sx = (f: ScreenFrame, x: number): number => f.k * x + f.x;

export function visibleNodes(nodes: readonly LayoutNode[], f: ScreenFrame): LayoutNode[] {
  return nodes.filter((n) => {
    const x = sx(f, n.x);
    const y = n.y + f.ty;
    return x > -40 && x < f.width + 40 && y > -30 && y < f.height + 30;
  });
}

/** Edges with at least one end near the screen on each axis. */
export function visibleEdges(edges: readonly LayoutEdge[], f: ScreenFrame): LayoutEdge[] {
  return edges.filter((e) => {
    // The ends, not the curve: reading `points` would build a curve for every edge.
    const a = sx(f, e.source.x);
    const b = sx(f, e.target.x);
    const ya = e.source.y + f.ty;
    const yb = e.target.y + f.ty;
    const W = f.width;
    const H = f.height;
    return !(a < -20 && b < -20) && !(a > W + 20 && b > W + 20) && !(ya < -40 && yb < -40) && !(ya > H + 40 && yb > H + 40);
  });
}

export function visibleLanes(lanes: readonly LayoutLane[], f: Pick<ScreenFrame, 'ty' | 'height'>): LayoutLane[] {
  return lanes.filter((l) => l.y + l.height + f.ty > 0 && l.y + f.ty < f.height);
}
