// Runs a force layout for the graph view without blocking the page: small graphs at once, larger
// ones in a worker (viz/force.worker.ts) that posts positions as it goes, or, where no worker can
// start, in slices of at most ~12 ms per frame on the main thread. The nodes returned are the
// ones drawn: their x/y are updated in place as the layout settles.

import type { Edge, Memory } from '../memory/types';
import { runForceLayout, type ForceLayout, type ForceOptions } from './force';
import type { ForceProgress, ForceStart, ForceStop } from './force.worker';

export interface ForceRun extends ForceLayout {
  /** Stop updating positions (a newer run, the view closed). */
  stop(): void;
}

export interface RunOptions extends Omit<ForceOptions, 'ticks'> {
  ticks: number;
  /** At most this many memories are laid out synchronously (default 400). */
  syncLimit?: number;
  /** Called after positions changed; `done` once the layout has settled. */
  onProgress: (done: boolean) => void;
}

let worker: Worker | null | undefined;
let runs = 0;
const listeners = new Map<number, (p: ForceProgress) => void>();

function sharedWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(new URL('./force.worker.ts', import.meta.url), { type: 'module', name: 'tealeaf-force' });
    worker.onmessage = (e: MessageEvent<ForceProgress>) => listeners.get(e.data.run)?.(e.data);
    worker.onerror = () => {
      // A worker that fails to load: every later run falls back to the main thread.
      worker?.terminate();
      worker = null;
      for (const l of listeners.values()) l({ type: 'tick', run: -1, xy: new Float64Array(0), done: -1, total: 0 });
    };
  } catch {
    worker = null;
  }
  return worker;
}

export function startForceLayout(memories: readonly Memory[], edges: readonly Edge[], options: RunOptions): ForceRun {
  const { ticks, onProgress, syncLimit = 400, ...rest } = options;
  // Built here too, untouched by ticks: the first frame draws the starting positions at once
  // (the worker starts from the same ones), and hit tests use its quadtree-free find.
  const layout = runForceLayout(memories, edges, { ...rest, ticks: memories.length <= syncLimit ? ticks : 0 });
  if (memories.length <= syncLimit) {
    queueMicrotask(() => onProgress(true));
    return { ...layout, stop: () => {} };
  }

  let stopped = false;
  let raf = 0;
  const onMain = (from: number): void => {
    let done = from;
    const step = (): void => {
      if (stopped) return;
      const t0 = performance.now();
      while (done < ticks && performance.now() - t0 < 12) {
        layout.simulation.tick();
        done++;
      }
      onProgress(done >= ticks);
      if (done < ticks) raf = requestAnimationFrame(step);
    };
    raf = requestAnimationFrame(step);
  };

  const w = sharedWorker();
  if (!w) {
    onMain(0);
    return {
      ...layout,
      stop: () => {
        stopped = true;
        cancelAnimationFrame(raf);
      },
    };
  }
  const run = ++runs;
  const nodes = layout.nodes;
  listeners.set(run, (p) => {
    if (stopped) return;
    if (p.done < 0) {
      // The worker died: carry on here from where the positions are.
      listeners.delete(run);
      onMain(0);
      return;
    }
    for (let i = 0; i < nodes.length && 2 * i + 1 < p.xy.length; i++) {
      nodes[i].x = p.xy[2 * i];
      nodes[i].y = p.xy[2 * i + 1];
    }
    const done = p.done >= p.total;
    if (done) listeners.delete(run);
    onProgress(done);
  });
  const msg: ForceStart = {
    type: 'start',
    run,
    memories: memories.map((m) => ({ id: m.id, kind: m.kind, time: m.time, supersededBy: m.supersededBy, endedAt: m.endedAt })),
    edges: edges.map((e) => ({ id: e.id, from: e.from, to: e.to, relation: e.relation })),
    options: { ...rest, ticks, initial: rest.initial ? new Map(rest.initial) : undefined },
  };
  w.postMessage(msg);
  return {
    ...layout,
    stop: () => {
      stopped = true;
      cancelAnimationFrame(raf);
      listeners.delete(run);
      worker?.postMessage({ type: 'stop', run } satisfies ForceStop);
    },
  };
}
