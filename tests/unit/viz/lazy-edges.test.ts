// Timeline edges build their curves only when drawn (before, opening the Memory view
// with 100,000 links built 100,000 curves). The curves drawn are the ones the layout always made.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Edge, Memory } from '../../../src/memory/types';
import { RELATIONS } from '../../../src/memory/types';
import { layoutTimelines } from '../../../src/viz/lanes';
import { visibleEdges, type ScreenFrame } from '../../../src/viz/cull';
import { drawGraph, MAX_STROKED } from '../../../src/viz/canvas';
import * as curves from '../../../src/viz/curves';
import { edge, mem } from './fixtures';

// Counts the curves built; each still is the real one.
vi.mock('../../../src/viz/curves', async (actual) => {
  const real = await actual<typeof import('../../../src/viz/curves')>();
  return { ...real, edgeCurve: vi.fn(real.edgeCurve) };
});
const built = vi.mocked(curves.edgeCurve);
const { edgeCurve: realCurve } = await vi.importActual<typeof import('../../../src/viz/curves')>('../../../src/viz/curves');

const MIN = 60_000;
const LANE = 12;

/** One hub with `n` links (two come in from older memories), a lane of many rows. */
function hub(n: number): { memories: Memory[]; edges: Edge[] } {
  const memories = [mem('in-0', 0), mem('in-1', MIN), mem('hub', 2 * MIN)];
  const edges = [edge('e-in-0', 'in-0', 'hub'), edge('e-in-1', 'in-1', 'hub', 'React')];
  for (let i = 0; i < n - 2; i++) {
    memories.push(mem(`out-${i}`, (3 + i) * MIN));
    edges.push(edge(`e-out-${i}`, 'hub', `out-${i}`, RELATIONS[i % RELATIONS.length]));
  }
  return { memories, edges };
}

const layoutOf = (n: number) => {
  const { memories, edges } = hub(n);
  return layoutTimelines(memories, edges, { width: 300, laneHeight: LANE, nodeSpacing: 8 });
};
// Scrolled to the lane's last 200 px (the hub sits at its top): only links to memories there or
// below are on screen, a fraction of them.
const frameOf = (height: number): ScreenFrame => ({ k: 1, x: 0, ty: -(height - 200), width: 300, height: 200 });

/** A 2D context that draws nothing (the counts are what is tested). */
function nullContext(): CanvasRenderingContext2D {
  return new Proxy({} as Record<string | symbol, unknown>, {
    get: (t, k) => (k in t ? t[k] : () => undefined),
    set: (t, k, v) => ((t[k] = v), true),
  }) as unknown as CanvasRenderingContext2D;
}

// A block: a function returned from beforeEach would run as its cleanup.
beforeEach(() => {
  built.mockClear();
});

describe('timeline edges build their curves lazily', () => {
  it('laying out 2,000 links builds no curve', () => {
    const layout = layoutOf(2000);
    expect(layout.edges).toHaveLength(2000);
    expect(built).toHaveBeenCalledTimes(0);
  });

  it('culling reads the ends only and keeps what culling by the curves kept', () => {
    const layout = layoutOf(2000);
    const frame = frameOf(layout.height);
    const shown = visibleEdges(layout.edges, frame);
    expect(built).toHaveBeenCalledTimes(0);
    // By the curves' own end points (as culling read them before), built here from the real function.
    const byCurve = layout.edges.filter((e) => {
      const p = realCurve(layout.byId.get(e.from)!, layout.byId.get(e.to)!, LANE);
      const sx = (x: number) => frame.k * x + frame.x;
      const [a, b, ya, yb] = [sx(p[0][0]), sx(p[3][0]), p[0][1] + frame.ty, p[3][1] + frame.ty];
      const { width: W, height: H } = frame;
      return !(a < -20 && b < -20) && !(a > W + 20 && b > W + 20) && !(ya < -40 && yb < -40) && !(ya > H + 40 && yb > H + 40);
    });
    expect(shown.map((e) => e.id)).toEqual(byCurve.map((e) => e.id));
    // A real cut: some, not all (a fixture where keeping everything would pass is no test).
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.length).toBeLessThan(layout.edges.length / 2);
  });

  it('an edge read gives the curve between its nodes, built once', () => {
    const layout = layoutOf(300);
    for (const e of layout.edges) {
      const a = layout.byId.get(e.from)!;
      const b = layout.byId.get(e.to)!;
      expect(e.points).toEqual(realCurve(a, b, LANE));
      expect(e.points).toBe(e.points);
      expect(e.backward).toBe(a.x > b.x);
      expect([e.source, e.target]).toEqual([a, b]);
    }
    expect(built).toHaveBeenCalledTimes(300);
  });

  it('the canvas builds curves only for the edges it draws', () => {
    const layout = layoutOf(2000);
    const frame = frameOf(layout.height);
    const view = { kx: frame.k, ky: 1, tx: frame.x, ty: frame.ty, width: frame.width, height: frame.height, dpr: 1 };
    const emphasis = { nodes: null, edges: null, selected: null, hovered: null, hits: null };
    const stats = drawGraph(nullContext(), layout.nodes, layout.edges, view, emphasis, 3);
    expect(stats.edges).toBeGreaterThan(10);
    expect(stats.edges).toBeLessThan(layout.edges.length / 2);
    expect(stats.stroked).toBe(stats.edges);
    expect(built).toHaveBeenCalledTimes(stats.edges);
  });
});

/** A 2D context that counts the curves stroked and keeps their ends. */
function recordingContext(): { ctx: CanvasRenderingContext2D; ends: Set<string>; curves: () => number } {
  const ends = new Set<string>();
  let curves = 0;
  const curveTo = (...a: number[]) => {
    curves++;
    ends.add(`${a[4]},${a[5]}`);
  };
  const ctx = new Proxy({} as Record<string | symbol, unknown>, {
    get: (t, k) => (k in t ? t[k] : k === 'bezierCurveTo' ? curveTo : () => undefined),
    set: (t, k, v) => ((t[k] = v), true),
  }) as unknown as CanvasRenderingContext2D;
  return { ctx, ends, curves: () => curves };
}

describe('past MAX_STROKED edges on screen the canvas strokes a sample', () => {
  // 40,000 links of one memory, all on screen at once (the whole lane fits the view).
  const layout = layoutOf(40_000);
  const view = { kx: 1, ky: 1, tx: 0, ty: 0, width: 300, height: layout.height, dpr: 1 };
  const endOf = (id: string) => {
    const n = layout.byId.get(id)!;
    return `${n.x},${n.y}`;
  };

  it('draws at most MAX_STROKED of them, evenly, and builds only their curves', () => {
    const { ctx, ends, curves } = recordingContext();
    const emphasis = { nodes: null, edges: null, selected: null, hovered: null, hits: null };
    const stats = drawGraph(ctx, layout.nodes, layout.edges, view, emphasis, 3);
    expect(stats.edges).toBe(40_000);
    // A stride per relation list (7 lists): up to one more per list than the cap.
    expect(stats.stroked).toBeLessThanOrEqual(MAX_STROKED + RELATIONS.length);
    expect(stats.stroked).toBeGreaterThan(MAX_STROKED * 0.6);
    expect(built).toHaveBeenCalledTimes(stats.stroked);
    expect(curves()).toBe(stats.stroked);
    // Evenly: the newest and the oldest tenth of the links are both sampled, about as densely.
    const drawnOf = (ids: string[]) => ids.filter((id) => ends.has(endOf(id))).length;
    const ids = (from: number) => Array.from({ length: 4000 }, (_, i) => `out-${from + i}`);
    const [early, late] = [drawnOf(ids(0)), drawnOf(ids(35_000))];
    expect(early).toBeGreaterThan(4000 * 0.25);
    expect(Math.abs(early - late)).toBeLessThan(4000 * 0.05);
  });

  it('always draws the emphasised edges (a hover, a highlight), whatever the sample', () => {
    const { ctx, ends } = recordingContext();
    const wanted = ['e-out-1', 'e-out-2', 'e-out-3', 'e-out-4', 'e-out-5', 'e-out-6', 'e-out-7', 'e-out-8'];
    const emphasis = { nodes: null, edges: new Set(wanted), selected: null, hovered: null, hits: null };
    drawGraph(ctx, layout.nodes, layout.edges, view, emphasis, 3);
    for (const id of wanted) expect(ends.has(endOf(id.replace('e-', '')))).toBe(true);
  });
});
