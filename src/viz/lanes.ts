// The timeline layout, in two steps the d3 way (data in, layout out; no DOM): threads groups the
// memories into lanes (once per data change), layoutLanes places them for a width (per resize).
// Runs in Node, so its geometric promises (lanes never overlap, x follows time, edges point
// forward) are unit-tested.

import { RowPacker } from './row-packing';
import { compareChronological } from '../memory/order';
import type { Edge, Id, Memory, MemoryKind, Millis, Relation } from '../memory/types';
import { components } from './components';
import { edgeCurve, type CurveEnd, type Point } from './curves';

/** A session start, drawn as a tick on the time axis. */
export interface SessionMark {
  id: Id;
  startedAt: Millis;
  title: string;
}

/** One lane's memories: a thread (a connected component) or the shared lane of unlinked ones. */
export interface Thread {
  id: string;
  /** Oldest first (memory/order.ts). */
  members: Memory[];
  label: string;
  /** Time of the most recent member. */
  last: Millis;
  singletons: boolean;
}

/** The lanes of a timeline and the edges drawn in them (those whose two ends are known). */
export interface Threads {
  threads: Thread[];
  edges: Edge[];
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
  /** Horizontal room (at zoom 1) after the previous node of the same row; Infinity when first. */
  gapBefore: number;
  /** The next node of the same row is the row's last (whose label may take half of the gap). */
  nextIsLast: boolean;
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
  /** Its two nodes: culling reads the ends here without building the curve. */
  readonly source: CurveEnd;
  readonly target: CurveEnd;
  /** Cubic Bezier: start, control 1, control 2, end (built on first read, see LazyEdge). */
  readonly points: [Point, Point, Point, Point];
  /** The data has the "older" end newer than the "newer" end (a hand-made edge); drawn anyway. */
  backward: boolean;
}

/**
 * A layout edge whose curve is built when first read: only the edges drawn need one, and building
 * all of them (100,000 around one memory) took about a third of a second on opening the view.
 */
class LazyEdge implements LayoutEdge {
  readonly id: Id;
  readonly from: Id;
  readonly to: Id;
  readonly relation: Relation;
  readonly backward: boolean;
  // Private: not an own enumerable property, so an edge compares equal whether or not it was drawn.
  #points: [Point, Point, Point, Point] | undefined;

  constructor(
    e: Edge,
    readonly source: LayoutNode,
    readonly target: LayoutNode,
    private readonly laneHeight: number,
  ) {
    this.id = e.id;
    this.from = e.from;
    this.to = e.to;
    this.relation = e.relation;
    this.backward = source.x > target.x;
  }

  get points(): [Point, Point, Point, Point] {
    return (this.#points ??= edgeCurve(this.source, this.target, this.laneHeight));
  }
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

function truncate(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max - 1).trimEnd()}…`;
}

/**
 * Threads: connected components, most recently active first; with `groupSingletons` (default)
 * unlinked memories share one lane at the bottom. Edges to unknown memories are left out.
 */
export function threads(memories: readonly Memory[], edges: readonly Edge[], groupSingletons = true): Threads {
  const byMemory = new Map<Id, Memory>();
  for (const m of memories) byMemory.set(m.id, m);
  const validEdges = edges.filter((e) => byMemory.has(e.from) && byMemory.has(e.to));
  const degree = new Map<Id, number>();
  for (const e of validEdges) {
    degree.set(e.from, (degree.get(e.from) ?? 0) + 1);
    degree.set(e.to, (degree.get(e.to) ?? 0) + 1);
  }
  const out: Thread[] = [];
  const singles: Memory[] = [];
  for (const ids of components(memories, validEdges)) {
    const members = ids.map((id) => byMemory.get(id)!).sort(compareChronological);
    if (groupSingletons && members.length === 1) singles.push(members[0]);
    else {
      out.push({
        id: `thread:${members[0].id}`,
        members,
        label: laneLabel(members, degree),
        last: members[members.length - 1].time,
        singletons: false,
      });
    }
  }
  out.sort((a, b) => b.last - a.last || (a.id < b.id ? -1 : 1));
  if (singles.length > 0) {
    singles.sort(compareChronological);
    out.push({ id: 'unlinked', members: singles, label: 'Unlinked memories', last: singles[singles.length - 1].time, singletons: true });
  }
  return { threads: out, edges: validEdges };
}

/** The time domain of the data (memories and session starts); [0, 0] when empty. */
function dataDomain(groups: readonly Thread[], sessions: readonly SessionMark[]): [Millis, Millis] {
  let t0 = Infinity;
  let t1 = -Infinity;
  for (const g of groups) {
    for (const m of g.members) {
      if (m.time < t0) t0 = m.time;
      if (m.time > t1) t1 = m.time;
    }
  }
  for (const s of sessions) {
    if (s.startedAt < t0) t0 = s.startedAt;
    if (s.startedAt > t1) t1 = s.startedAt;
  }
  return Number.isFinite(t0) ? [t0, t1] : [0, 0];
}

/** Places threads for a width: x by time, a lane per thread, sub-rows where nodes would overlap. */
export function layoutLanes(data: Threads, options: TimelineLayoutOptions): TimelineLayout {
  const width = options.width ?? 960;
  const laneHeight = options.laneHeight;
  const marginLeft = options.marginLeft ?? 24;
  const marginRight = options.marginRight ?? 24;
  const laneGap = options.laneGap ?? 12;
  const laneHeader = options.laneHeader ?? 20;
  const spacing = options.nodeSpacing ?? 14;
  const sessions = options.sessions ?? [];

  const [t0, t1] = options.timeDomain ?? dataDomain(data.threads, sessions);
  const x0 = marginLeft;
  const x1 = Math.max(marginLeft, width - marginRight);
  const span = t1 - t0;
  const xOf = (time: Millis): number => (span > 0 ? x0 + ((time - t0) / span) * (x1 - x0) : (x0 + x1) / 2);
  const timeOf = (x: number): Millis => (x1 > x0 ? t0 + ((x - x0) / (x1 - x0)) * span : t0);

  const nodes: LayoutNode[] = [];
  const lanes: LayoutLane[] = [];
  const byId = new Map<Id, LayoutNode>();
  let y = 0;
  for (const [index, g] of data.threads.entries()) {
    // First-fit row packing in time order: a node goes to the lowest row whose last node is at
    // least `spacing` to the left, so two nodes of one row never overlap.
    const packer = new RowPacker(spacing);
    const rowLast: LayoutNode[] = [];
    const rowPrev: (LayoutNode | undefined)[] = [];
    const laneNodes: LayoutNode[] = [];
    for (const m of g.members) {
      const x = xOf(m.time);
      const row = packer.place(x);
      const node: LayoutNode = {
        id: m.id,
        x,
        y: 0,
        lane: index,
        row,
        kind: m.kind,
        superseded: m.supersededBy !== undefined || m.endedAt !== undefined,
        time: m.time,
        gapAfter: Infinity,
        gapBefore: Infinity,
        nextIsLast: false,
      };
      const prev = rowLast[row];
      if (prev) {
        prev.gapAfter = x - prev.x;
        node.gapBefore = prev.gapAfter;
      }
      rowPrev[row] = prev;
      rowLast[row] = node;
      laneNodes.push(node);
    }
    for (const prev of rowPrev) if (prev) prev.nextIsLast = true;
    const rows = Math.max(1, packer.rows);
    const height = laneHeader + rows * laneHeight;
    for (const n of laneNodes) {
      n.y = y + laneHeader + n.row * laneHeight + laneHeight / 2;
      nodes.push(n);
      byId.set(n.id, n);
    }
    lanes.push({
      id: g.id,
      index,
      y,
      height,
      rows,
      label: g.label,
      memoryIds: g.members.map((m) => m.id),
      lastActivity: g.last,
      singletons: g.singletons,
    });
    y += height + laneGap;
  }
  const height = lanes.length ? y - laneGap : 0;

  const edges: LayoutEdge[] = data.edges.map((e) => new LazyEdge(e, byId.get(e.from)!, byId.get(e.to)!, laneHeight));

  const ticks: SessionTick[] = sessions
    .map((s) => ({ id: s.id, x: xOf(s.startedAt), time: s.startedAt, title: s.title }))
    .sort((a, b) => a.time - b.time);

  return { nodes, lanes, edges, ticks, width, height, domain: [t0, t1], xOf, timeOf, byId };
}

/** Both steps at once, for callers that lay out a given data set only once. */
export function layoutTimelines(memories: readonly Memory[], edges: readonly Edge[], options: TimelineLayoutOptions): TimelineLayout {
  return layoutLanes(threads(memories, edges, options.groupSingletons ?? true), options);
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
