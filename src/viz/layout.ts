// Pure layout for the memory explorer (no DOM): the timeline view, graph queries and keyboard
// navigation. Runs in Node so the geometric promises (lanes never overlap, x follows time, edges
// point forward) are unit-tested.

import type { Edge, Id, Memory, MemoryKind, Millis, Relation, Timeline } from '../memory/types';

export type Point = readonly [number, number];

/** A session start, drawn as a tick on the time axis. */
export interface SessionMark {
  id: Id;
  startedAt: Millis;
  title: string;
}

export interface TimelineLayoutOptions {
  /** Total drawing width in px. */
  width?: number;
  /** Height of one sub-row inside a lane. */
  laneHeight: number;
  marginLeft?: number;
  marginRight?: number;
  /** Vertical space between lanes. */
  laneGap?: number;
  /** Space at the top of each lane for its label. */
  laneHeader?: number;
  /** Minimum horizontal distance between two nodes of the same row (node diameter + air). */
  nodeSpacing?: number;
  sessions?: readonly SessionMark[];
  /** Put memories with no edges in one shared lane at the bottom instead of a lane each. */
  groupSingletons?: boolean;
  /** Fix the time domain (e.g. to keep positions stable while filtering); default: the data's. */
  timeDomain?: readonly [Millis, Millis];
}

export interface LayoutNode {
  id: Id;
  x: number;
  y: number;
  /** Index into TimelineLayout.lanes. */
  lane: number;
  row: number;
  kind: MemoryKind;
  superseded: boolean;
  time: Millis;
  /** Horizontal room (at zoom 1) before the next node of the same row; Infinity when last. */
  gapAfter: number;
}

export interface LayoutLane {
  id: string;
  index: number;
  /** Top edge. */
  y: number;
  height: number;
  label: string;
  rows: number;
  /** Memory ids in the lane, in time order. */
  memoryIds: Id[];
  lastActivity: Millis;
  /** The shared lane of unlinked memories. */
  singletons: boolean;
}

export interface LayoutEdge {
  id: Id;
  from: Id;
  to: Id;
  relation: Relation;
  /** Cubic Bezier: start, control 1, control 2, end. */
  points: [Point, Point, Point, Point];
  /** The data has the "older" end newer than the "newer" end (a hand-made edge); drawn anyway. */
  backward: boolean;
}

export interface SessionTick {
  id: Id;
  x: number;
  time: Millis;
  title: string;
}

export interface TimelineLayout {
  nodes: LayoutNode[];
  lanes: LayoutLane[];
  edges: LayoutEdge[];
  ticks: SessionTick[];
  width: number;
  height: number;
  domain: [Millis, Millis];
  /** The time scale used for x (monotonic, non-decreasing). */
  xOf: (time: Millis) => number;
  /** Inverse of xOf, for brushes and axes. */
  timeOf: (x: number) => Millis;
  byId: Map<Id, LayoutNode>;
}

/** Time order with a stable tie-break, so equal times still give one fixed order. */
function chronological(a: Memory, b: Memory): number {
  return a.time - b.time || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function truncate(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max - 1).trimEnd()}…`;
}

/** Connected components ignoring direction (union-find). Edges to unknown ids are ignored. */
export function components(memories: readonly Memory[], edges: readonly Edge[]): Id[][] {
  const parent = new Map<Id, Id>();
  for (const m of memories) parent.set(m.id, m.id);
  const find = (id: Id): Id => {
    let root = id;
    while (parent.get(root) !== root) root = parent.get(root)!;
    // Path compression keeps 10k-edge graphs linear in practice.
    let cur = id;
    while (cur !== root) {
      const next = parent.get(cur)!;
      parent.set(cur, root);
      cur = next;
    }
    return root;
  };
  for (const e of edges) {
    if (!parent.has(e.from) || !parent.has(e.to)) continue;
    const a = find(e.from);
    const b = find(e.to);
    if (a !== b) parent.set(a, b);
  }
  const groups = new Map<Id, Id[]>();
  for (const m of memories) {
    const r = find(m.id);
    const g = groups.get(r);
    if (g) g.push(m.id);
    else groups.set(r, [m.id]);
  }
  return [...groups.values()];
}

export function layoutTimelines(
  memories: readonly Memory[],
  edges: readonly Edge[],
  options: TimelineLayoutOptions,
): TimelineLayout {
  const width = options.width ?? 960;
  const laneHeight = options.laneHeight;
  const marginLeft = options.marginLeft ?? 24;
  const marginRight = options.marginRight ?? 24;
  const laneGap = options.laneGap ?? 12;
  const laneHeader = options.laneHeader ?? 20;
  const spacing = options.nodeSpacing ?? 14;
  const groupSingletons = options.groupSingletons ?? true;
  const sessions = options.sessions ?? [];

  const byMemory = new Map<Id, Memory>();
  for (const m of memories) byMemory.set(m.id, m);
  const validEdges = edges.filter((e) => byMemory.has(e.from) && byMemory.has(e.to));

  // Time scale.
  let t0 = Infinity;
  let t1 = -Infinity;
  if (options.timeDomain) [t0, t1] = options.timeDomain;
  else {
    for (const m of memories) {
      if (m.time < t0) t0 = m.time;
      if (m.time > t1) t1 = m.time;
    }
    for (const s of sessions) {
      if (s.startedAt < t0) t0 = s.startedAt;
      if (s.startedAt > t1) t1 = s.startedAt;
    }
    if (!Number.isFinite(t0)) t0 = t1 = 0;
  }
  const x0 = marginLeft;
  const x1 = Math.max(marginLeft, width - marginRight);
  const span = t1 - t0;
  const xOf = (time: Millis): number =>
    span > 0 ? x0 + ((time - t0) / span) * (x1 - x0) : (x0 + x1) / 2;
  const timeOf = (x: number): Millis => (x1 > x0 ? t0 + ((x - x0) / (x1 - x0)) * span : t0);

  // Threads: connected components, most recently active first; unlinked memories share a lane.
  const degree = new Map<Id, number>();
  for (const e of validEdges) {
    degree.set(e.from, (degree.get(e.from) ?? 0) + 1);
    degree.set(e.to, (degree.get(e.to) ?? 0) + 1);
  }
  interface Group { id: string; members: Memory[]; last: Millis; singletons: boolean }
  const groups: Group[] = [];
  const singles: Memory[] = [];
  for (const ids of components(memories, validEdges)) {
    const members = ids.map((id) => byMemory.get(id)!).sort(chronological);
    if (groupSingletons && members.length === 1) singles.push(members[0]);
    else groups.push({ id: `thread:${members[0].id}`, members, last: members[members.length - 1].time, singletons: false });
  }
  groups.sort((a, b) => b.last - a.last || (a.id < b.id ? -1 : 1));
  if (singles.length > 0) {
    singles.sort(chronological);
    groups.push({ id: 'unlinked', members: singles, last: singles[singles.length - 1].time, singletons: true });
  }

  const nodes: LayoutNode[] = [];
  const lanes: LayoutLane[] = [];
  const byId = new Map<Id, LayoutNode>();
  let y = 0;
  for (const [index, g] of groups.entries()) {
    // First-fit row packing in time order: a node goes to the lowest row whose last node is at
    // least `spacing` to the left, so two nodes of one row never overlap.
    const rowEnds: number[] = [];
    const rowLast: LayoutNode[] = [];
    const laneNodes: LayoutNode[] = [];
    for (const m of g.members) {
      const x = xOf(m.time);
      let row = rowEnds.findIndex((end) => x - end >= spacing);
      if (row === -1) {
        row = rowEnds.length;
        rowEnds.push(x);
      } else rowEnds[row] = x;
      const node: LayoutNode = {
        id: m.id, x, y: 0, lane: index, row, kind: m.kind,
        superseded: m.supersededBy !== undefined || m.endedAt !== undefined, time: m.time, gapAfter: Infinity,
      };
      const prev = rowLast[row];
      if (prev) prev.gapAfter = x - prev.x;
      rowLast[row] = node;
      laneNodes.push(node);
    }
    const rows = Math.max(1, rowEnds.length);
    const height = laneHeader + rows * laneHeight;
    for (const n of laneNodes) {
      n.y = y + laneHeader + n.row * laneHeight + laneHeight / 2;
      nodes.push(n);
      byId.set(n.id, n);
    }
    lanes.push({
      id: g.id, index, y, height, rows,
      label: g.singletons ? 'Unlinked memories' : laneLabel(g.members, degree),
      memoryIds: g.members.map((m) => m.id), lastActivity: g.last, singletons: g.singletons,
    });
    y += height + laneGap;
  }
  const height = lanes.length ? y - laneGap : 0;

  const layoutEdges: LayoutEdge[] = validEdges.map((e) => {
    const a = byId.get(e.from)!;
    const b = byId.get(e.to)!;
    return { id: e.id, from: e.from, to: e.to, relation: e.relation, points: edgeCurve(a, b, laneHeight), backward: a.x > b.x };
  });

  const ticks: SessionTick[] = sessions
    .map((s) => ({ id: s.id, x: xOf(s.startedAt), time: s.startedAt, title: s.title }))
    .sort((a, b) => a.time - b.time);

  return { nodes, lanes, edges: layoutEdges, ticks, width, height, domain: [t0, t1], xOf, timeOf, byId };
}

/** A thread is named after its best-connected memory (ties: the most recent). */
function laneLabel(members: readonly Memory[], degree: ReadonlyMap<Id, number>): string {
  let best = members[members.length - 1];
  let bestDegree = -1;
  for (let i = members.length - 1; i >= 0; i--) {
    const d = degree.get(members[i].id) ?? 0;
    if (d > bestDegree) {
      best = members[i];
      bestDegree = d;
    }
  }
  return truncate(best.text, 60);
}

/** Bezier between two nodes: an S-curve across rows, a shallow arc within a row. */
function edgeCurve(a: LayoutNode, b: LayoutNode, laneHeight: number): [Point, Point, Point, Point] {
  const dx = b.x - a.x;
  if (a.y === b.y) {
    // Arcs bulge upward, but never further than most of a row so they stay inside the lane.
    const lift = Math.min(laneHeight * 0.8, 4 + Math.abs(dx) * 0.12);
    return [[a.x, a.y], [a.x + dx * 0.25, a.y - lift], [b.x - dx * 0.25, b.y - lift], [b.x, b.y]];
  }
  if (Math.abs(dx) < 12) {
    // Nearly the same time: bow out to the right so the arrow has a clear direction.
    const bow = 14 - Math.abs(dx) / 2;
    return [[a.x, a.y], [a.x + bow, a.y], [b.x + bow, b.y], [b.x, b.y]];
  }
  return [[a.x, a.y], [a.x + dx * 0.5, a.y], [b.x - dx * 0.5, b.y], [b.x, b.y]];
}

/** SVG path data for a layout edge with x mapped through a zoom (x' = k x + tx). */
export function edgePathD(points: readonly Point[], k = 1, tx = 0, ty = 0): string {
  const [p0, c1, c2, p3] = points;
  const X = (p: Point): number => k * p[0] + tx;
  const Y = (p: Point): number => p[1] + ty;
  return `M${X(p0)},${Y(p0)}C${X(c1)},${Y(c1)} ${X(c2)},${Y(c2)} ${X(p3)},${Y(p3)}`;
}

// ---------------------------------------------------------------------------------------------
// Graph queries

export interface Highlight {
  memoryIds: Id[];
  /** Directed pairs; matched against edges by (from, to). */
  edges: { from: Id; to: Id }[];
}

/** Incoming and outgoing adjacency, built once per data change. */
export class GraphIndex {
  readonly memories = new Map<Id, Memory>();
  private readonly inc = new Map<Id, Edge[]>();
  private readonly out = new Map<Id, Edge[]>();
  private readonly pair = new Map<string, Edge>();

  constructor(memories: readonly Memory[], edges: readonly Edge[]) {
    for (const m of memories) this.memories.set(m.id, m);
    for (const e of edges) {
      if (!this.memories.has(e.from) || !this.memories.has(e.to)) continue;
      push(this.out, e.from, e);
      push(this.inc, e.to, e);
      this.pair.set(pairKey(e.from, e.to), e);
    }
  }

  incoming(id: Id): readonly Edge[] {
    return this.inc.get(id) ?? [];
  }

  outgoing(id: Id): readonly Edge[] {
    return this.out.get(id) ?? [];
  }

  edgeBetween(from: Id, to: Id): Edge | undefined {
    return this.pair.get(pairKey(from, to));
  }

  neighbours(id: Id): Set<Id> {
    const s = new Set<Id>();
    for (const e of this.incoming(id)) s.add(e.from);
    for (const e of this.outgoing(id)) s.add(e.to);
    return s;
  }

  /**
   * Linear timelines through `id` (docs/METHOD.md, Phase II-1, section 1.4):
   * source -> ... -> id -> ... -> sink.
   * Bounded: at most `limit` paths each way and `budget` visited steps, never all paths.
   */
  timelinesThrough(id: Id, limit = 3, budget = 5000): Timeline[] {
    if (!this.memories.has(id)) return [];
    const back = this.walk(id, 'back', limit, budget);
    const fwd = this.walk(id, 'forward', limit, budget);
    const count = Math.min(limit, Math.max(back.length, fwd.length));
    const out: Timeline[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < count; i++) {
      const b = back[i % back.length];
      const f = fwd[i % fwd.length];
      const ids = [...b.ids.slice().reverse(), ...f.ids.slice(1)];
      const key = ids.join('\u0000');
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ memoryIds: ids, relations: [...b.rels.slice().reverse(), ...f.rels], through: id });
    }
    return out;
  }

  /** DFS to sources (back) or sinks (forward); most recent neighbour first, cycle-safe. */
  private walk(start: Id, dir: 'back' | 'forward', limit: number, budget: number): { ids: Id[]; rels: Relation[] }[] {
    const paths: { ids: Id[]; rels: Relation[] }[] = [];
    let steps = 0;
    const next = (id: Id): { id: Id; rel: Relation }[] => {
      const es = dir === 'back' ? this.incoming(id) : this.outgoing(id);
      return es
        .map((e) => ({ id: dir === 'back' ? e.from : e.to, rel: e.relation }))
        .sort((a, b) => (this.memories.get(b.id)!.time - this.memories.get(a.id)!.time) || (a.id < b.id ? -1 : 1));
    };
    const ids: Id[] = [start];
    const rels: Relation[] = [];
    const onPath = new Set<Id>([start]);
    const visit = (id: Id): void => {
      if (paths.length >= limit || steps++ > budget) return;
      const ns = next(id).filter((n) => !onPath.has(n.id));
      if (ns.length === 0) {
        paths.push({ ids: ids.slice(), rels: rels.slice() });
        return;
      }
      for (const n of ns) {
        if (paths.length >= limit || steps > budget) return;
        ids.push(n.id);
        rels.push(n.rel);
        onPath.add(n.id);
        visit(n.id);
        onPath.delete(n.id);
        ids.pop();
        rels.pop();
      }
    };
    visit(start);
    // The budget ran out before reaching an end: keep the partial walk rather than nothing.
    if (paths.length === 0) paths.push({ ids: [start], rels: [] });
    return paths;
  }
}

function push(map: Map<Id, Edge[]>, key: Id, e: Edge): void {
  const list = map.get(key);
  if (list) list.push(e);
  else map.set(key, [e]);
}

function pairKey(from: Id, to: Id): string {
  return `${from}\u0000${to}`;
}

export function neighbours(index: GraphIndex, id: Id): Set<Id> {
  return index.neighbours(id);
}

/** What to highlight for a set of timelines (e.g. the ones a reply used). */
export function timelineFocus(timelines: readonly Timeline[]): Highlight {
  const ids = new Set<Id>();
  const pairs = new Map<string, { from: Id; to: Id }>();
  for (const t of timelines) {
    for (const id of t.memoryIds) ids.add(id);
    for (let i = 0; i + 1 < t.memoryIds.length; i++) {
      const from = t.memoryIds[i];
      const to = t.memoryIds[i + 1];
      pairs.set(pairKey(from, to), { from, to });
    }
  }
  return { memoryIds: [...ids], edges: [...pairs.values()] };
}

/** Resolve a highlight to node and edge id sets for the renderers. */
export function resolveHighlight(
  h: Highlight | null | undefined,
  edges: readonly Edge[],
): { nodes: Set<Id>; edges: Set<Id> } | null {
  if (!h) return null;
  const wanted = new Set(h.edges.map((p) => pairKey(p.from, p.to)));
  const edgeIds = new Set<Id>();
  for (const e of edges) if (wanted.has(pairKey(e.from, e.to))) edgeIds.add(e.id);
  return { nodes: new Set(h.memoryIds), edges: edgeIds };
}

/** Memory ids whose text (or subject) contains every word of the query, case-insensitive. */
export function searchMemories(memories: readonly Memory[], query: string): Set<Id> {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const hits = new Set<Id>();
  if (words.length === 0) return hits;
  for (const m of memories) {
    const hay = `${m.text} ${m.subject ?? ''} ${m.context ?? ''}`.toLowerCase();
    if (words.every((w) => hay.includes(w))) hits.add(m.id);
  }
  return hits;
}

// ---------------------------------------------------------------------------------------------
// Keyboard navigation over the timeline layout

export type NavDirection = 'prev' | 'next' | 'up' | 'down' | 'first' | 'last';

/**
 * The memory to select after a key press: prev/next along time within the lane, up/down to the
 * nearest-in-time memory of the neighbouring lane, first/last of the lane.
 * With nothing selected, any key starts at the most recent memory of the top lane.
 */
export function navigate(layout: TimelineLayout, current: Id | null, dir: NavDirection): Id | null {
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

export { runForceLayout, type ForceLayout, type ForceLink, type ForceNode, type ForceOptions } from './force';
