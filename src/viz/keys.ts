// Keyboard navigation over the timeline layout: which memory an arrow key moves to.

import type { Id } from '../memory/types';
import type { TimelineLayout } from './lanes';

export type NavDirection = 'prev' | 'next' | 'up' | 'down' | 'first' | 'last';

/** Key names (KeyboardEvent.key) to directions. */
export const NAV_KEYS: Readonly<Record<string, NavDirection>> = {
  ArrowLeft: 'prev',
  ArrowRight: 'next',
  ArrowUp: 'up',
  ArrowDown: 'down',
  Home: 'first',
  End: 'last',
};

/**
 * The memory to select after a key press: prev/next along time within the lane, up/down to the
 * nearest-in-time memory of the neighbouring lane, first/last of the lane.
 * With nothing selected, any key starts at the most recent memory of the top lane.
 */
export function navigate(layout: Pick<TimelineLayout, 'lanes' | 'byId'>, current: Id | null, dir: NavDirection): Id | null {
  const lanes = layout.lanes;
  if (lanes.length === 0) return null;
  const node = current ? layout.byId.get(current) : undefined;
  if (!node) {
    const ids = lanes[0].memoryIds;
    return ids[ids.length - 1] ?? null;
  }
  const lane = lanes[node.lane];
  const i = lane.memoryIds.indexOf(node.id);
  switch (dir) {
    case 'prev':
      return lane.memoryIds[Math.max(0, i - 1)];
    case 'next':
      return lane.memoryIds[Math.min(lane.memoryIds.length - 1, i + 1)];
    case 'first':
      return lane.memoryIds[0];
    case 'last':
      return lane.memoryIds[lane.memoryIds.length - 1];
    case 'up':
    case 'down': {
      const target = lanes[node.lane + (dir === 'up' ? -1 : 1)];
      if (!target) return node.id;
      let best = target.memoryIds[0];
      let bestD = Infinity;
      for (const id of target.memoryIds) {
        const d = Math.abs(layout.byId.get(id)!.time - node.time);
        if (d < bestD) {
          best = id;
          bestD = d;
        }
      }
      return best;
    }
  }
}

/** A memory placed on a plane (the graph view's force layout). */
export interface PlacedNode {
  id: Id;
  x: number;
  y: number;
  time: number;
}

/**
 * Keyboard navigation over the graph: the arrow keys move to the nearest memory in that
 * direction (within 60 degrees either side of it, nearer to the axis preferred); Home and End
 * to the oldest and the newest. With nothing selected, any key starts at the newest memory.
 * Returns the current memory when nothing lies that way.
 */
export function navigatePlane(nodes: readonly PlacedNode[], current: Id | null, dir: NavDirection): Id | null {
  if (nodes.length === 0) return null;
  const newest = (): Id => nodes.reduce((a, b) => (b.time > a.time || (b.time === a.time && b.id > a.id) ? b : a)).id;
  const from = current ? nodes.find((n) => n.id === current) : undefined;
  if (!from) return newest();
  if (dir === 'first') return nodes.reduce((a, b) => (b.time < a.time || (b.time === a.time && b.id < a.id) ? b : a)).id;
  if (dir === 'last') return newest();
  const [ux, uy] = dir === 'prev' ? [-1, 0] : dir === 'next' ? [1, 0] : dir === 'up' ? [0, -1] : [0, 1];
  let best: Id = from.id;
  let bestScore = Infinity;
  for (const n of nodes) {
    if (n.id === from.id) continue;
    const dx = n.x - from.x;
    const dy = n.y - from.y;
    const along = dx * ux + dy * uy;
    const across = Math.abs(dx * uy - dy * ux);
    // Inside the cone: along > 0 and across < along * tan(60 degrees).
    if (along <= 0 || across > along * 1.732) continue;
    const score = along + 2 * across;
    if (score < bestScore) {
      best = n.id;
      bestScore = score;
    }
  }
  return best;
}
