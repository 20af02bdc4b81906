// Ticks of the timeline's time axis for the time range on screen.

import { scaleTime } from 'd3';
import type { Millis } from '../memory/types';

export interface AxisTick {
  /** Screen x. */
  x: number;
  label: string;
}

/** Ticks for [t0, t1] drawn over `width` px, about one per 120 px, none within 22 px of an end. */
export function timeTicks(t0: Millis, t1: Millis, width: number): AxisTick[] {
  if (width <= 0) return [];
  const s = scaleTime().domain([new Date(t0), new Date(t1 > t0 ? t1 : t0 + 1)]).range([0, width]);
  const fmt = s.tickFormat();
  return s
    .ticks(Math.max(2, Math.floor(width / 120)))
    .map((d) => ({ x: s(d), label: fmt(d) }))
    .filter((t) => t.x >= 22 && t.x <= width - 22);
}
