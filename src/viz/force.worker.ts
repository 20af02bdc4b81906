// Runs the graph view's force layout off the main thread (viz/force-runner.ts starts it): the same
// runForceLayout, ticked in batches, positions posted back after each batch. A newer run (or a
// stop) abandons the current one between batches.

import { runForceLayout, type ForceOptions } from './force';
import type { Edge, Memory } from '../memory/types';

export interface ForceStart {
  type: 'start';
  run: number;
  /** Only id, kind, time and supersededBy are read. */
  memories: Pick<Memory, 'id' | 'kind' | 'time' | 'supersededBy' | 'endedAt'>[];
  edges: Pick<Edge, 'id' | 'from' | 'to' | 'relation'>[];
  options: Omit<ForceOptions, 'ticks'> & { ticks: number };
}

export interface ForceStop {
  type: 'stop';
  run: number;
}

export interface ForceProgress {
  type: 'tick';
  run: number;
  /** x0, y0, x1, y1, ... in the order of the memories sent. */
  xy: Float64Array;
  done: number;
  total: number;
}

/** Work per batch before posting positions: the main thread redraws a few times a second while
 * the layout settles, not every frame (a full redraw of thousands of memories is not free). */
const BATCH_MS = 200;

let current = 0;

function start(msg: ForceStart): void {
  current = msg.run;
  const { ticks, ...options } = msg.options;
  const { nodes, simulation } = runForceLayout(msg.memories as Memory[], msg.edges as Edge[], { ...options, ticks: 0 });
  let done = 0;
  const batch = (): void => {
    if (current !== msg.run) return;
    const t0 = performance.now();
    while (done < ticks && performance.now() - t0 < BATCH_MS) {
      simulation.tick();
      done++;
    }
    const xy = new Float64Array(nodes.length * 2);
    for (let i = 0; i < nodes.length; i++) {
      xy[2 * i] = nodes[i].x;
      xy[2 * i + 1] = nodes[i].y;
    }
    const progress: ForceProgress = { type: 'tick', run: msg.run, xy, done, total: ticks };
    (self as unknown as Worker).postMessage(progress, [xy.buffer]);
    // A timer between batches lets a newer run's message in.
    if (done < ticks) setTimeout(batch, 0);
  };
  batch();
}

self.onmessage = (e: MessageEvent<ForceStart | ForceStop>): void => {
  if (e.data.type === 'start') start(e.data);
  else if (e.data.run === current) current = 0;
};
