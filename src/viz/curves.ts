// Edge geometry of the timeline: one cubic Bezier per edge, and its SVG path under a zoom.

export type Point = readonly [number, number];

/** A node's position and its row's height: all a curve needs. */
export interface CurveEnd {
  x: number;
  y: number;
}

/** Bezier between two nodes: an S-curve across rows, a shallow arc within a row. */
export function edgeCurve(a: CurveEnd, b: CurveEnd, laneHeight: number): [Point, Point, Point, Point] {
  const dx = b.x - a.x;
  if (a.y === b.y) {
    // Arcs bulge upward, but never further than most of a row so they stay inside the lane.
    const lift = Math.min(laneHeight * 0.8, 4 + Math.abs(dx) * 0.12);
    return [
      [a.x, a.y],
      [a.x + dx * 0.25, a.y - lift],
      [b.x - dx * 0.25, b.y - lift],
      [b.x, b.y],
    ];
  }
  if (Math.abs(dx) < 12) {
    // Nearly the same time: bow out to the right so the arrow has a clear direction.
    const bow = 14 - Math.abs(dx) / 2;
    return [
      [a.x, a.y],
      [a.x + bow, a.y],
      [b.x + bow, b.y],
      [b.x, b.y],
    ];
  }
  return [
    [a.x, a.y],
    [a.x + dx * 0.5, a.y],
    [b.x - dx * 0.5, b.y],
    [b.x, b.y],
  ];
}

/** SVG path data for a layout edge with x mapped through a zoom (x' = k x + tx). */
export function edgePathD(points: readonly Point[], k = 1, tx = 0, ty = 0): string {
  const [p0, c1, c2, p3] = points;
  const X = (p: Point): number => k * p[0] + tx;
  const Y = (p: Point): number => p[1] + ty;
  return `M${X(p0)},${Y(p0)}C${X(c1)},${Y(c1)} ${X(c2)},${Y(c2)} ${X(p3)},${Y(p3)}`;
}
