// Force layout for the graph view. Ticked synchronously (no timers) so tests and the view get the
// same positions for the same data and seed; the view may tick in chunks between frames.

import {
  forceCenter,
  forceLink,
  forceManyBody,
  forceSimulation,
  forceX,
  forceY,
  type Simulation,
  type SimulationLinkDatum,
  type SimulationNodeDatum,
} from 'd3';
import type { Edge, Id, Memory, MemoryKind, Millis, Relation } from '../memory/types';

export interface ForceNode extends SimulationNodeDatum {
  id: Id;
  kind: MemoryKind;
  superseded: boolean;
  time: Millis;
  x: number;
  y: number;
}

export interface ForceLink extends SimulationLinkDatum<ForceNode> {
  id: Id;
  from: Id;
  to: Id;
  relation: Relation;
  source: ForceNode;
  target: ForceNode;
}

export interface ForceOptions {
  width: number;
  height: number;
  /** Steps to run now; 0 leaves the simulation for the caller to tick. */
  ticks?: number;
  seed?: number;
  /** Pull toward x-by-time (0..1), so the graph still reads left (old) to right (new). */
  timePull?: number;
  /**
   * Where memories were before (e.g. the previous layout when a few memories come in or go):
   * they start there instead of near their time position, so the picture does not reshuffle.
   * New memories start next to a placed neighbour when they have one.
   */
  initial?: ReadonlyMap<Id, { x: number; y: number }>;
  /** Starting heat (d3's alpha, 0..1); lower when most memories are already placed. */
  alpha?: number;
}

export interface ForceLayout {
  nodes: ForceNode[];
  links: ForceLink[];
  simulation: Simulation<ForceNode, ForceLink>;
}

/** Small deterministic PRNG (d3-force's own jiggle uses the random source we give it). */
function lcg(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => (s = (Math.imul(1664525, s) + 1013904223) >>> 0) / 4294967296;
}

export function runForceLayout(memories: readonly Memory[], edges: readonly Edge[], options: ForceOptions): ForceLayout {
  const { width, height } = options;
  const ticks = options.ticks ?? 300;
  const timePull = options.timePull ?? 0.08;
  let t0 = Infinity;
  let t1 = -Infinity;
  for (const m of memories) {
    t0 = Math.min(t0, m.time);
    t1 = Math.max(t1, m.time);
  }
  const span = t1 > t0 ? t1 - t0 : 1;
  const timeX = (t: Millis): number => width * 0.1 + ((t - t0) / span) * width * 0.8;
  const rand = lcg(options.seed ?? 1);

  // Start near the time position with a little noise: converges faster than d3's phyllotaxis.
  const nodes: ForceNode[] = memories.map((m) => ({
    id: m.id,
    kind: m.kind,
    superseded: m.supersededBy !== undefined || m.endedAt !== undefined,
    time: m.time,
    x: timeX(m.time) + (rand() - 0.5) * 20,
    y: height / 2 + (rand() - 0.5) * height * 0.6,
  }));
  const byId = new Map(nodes.map((n) => [n.id, n] as const));
  const links: ForceLink[] = [];
  for (const e of edges) {
    const source = byId.get(e.from);
    const target = byId.get(e.to);
    if (source && target) links.push({ id: e.id, from: e.from, to: e.to, relation: e.relation, source, target });
  }
  const initial = options.initial;
  if (initial && initial.size > 0) {
    const placed = new Set<Id>();
    for (const node of nodes) {
      const p = initial.get(node.id);
      if (!p) continue;
      node.x = p.x;
      node.y = p.y;
      placed.add(node.id);
    }
    for (const l of links) {
      const [a, b] = placed.has(l.source.id) ? [l.source, l.target] : [l.target, l.source];
      if (placed.has(a.id) && !placed.has(b.id)) {
        b.x = a.x + (rand() - 0.5) * 30;
        b.y = a.y + (rand() - 0.5) * 30;
        placed.add(b.id);
      }
    }
  }
  // Repulsion shrinks with size so large graphs stay inside the viewport.
  const n = Math.max(1, nodes.length);
  const charge = -Math.max(4, Math.min(60, (width * height) / n / 40));
  const simulation = forceSimulation<ForceNode, ForceLink>(nodes)
    .randomSource(rand)
    .force(
      'link',
      forceLink<ForceNode, ForceLink>(links)
        .distance(n > 1500 ? 12 : 36)
        .strength(0.6),
    )
    .force(
      'charge',
      forceManyBody<ForceNode>()
        .strength(charge)
        .distanceMax(Math.max(width, height) / 3),
    )
    .force('x', forceX<ForceNode>((d) => timeX(d.time)).strength(timePull))
    .force('y', forceY<ForceNode>(height / 2).strength(0.04))
    .force('center', forceCenter(width / 2, height / 2))
    .stop();
  if (options.alpha !== undefined) simulation.alpha(options.alpha);
  for (let i = 0; i < ticks; i++) simulation.tick();
  return { nodes, links, simulation };
}
