// Phase II-1: untangle the component of a retrieved memory into one timeline through it: a
// directed path from a start to a memory with no outgoing edge. As in the paper (eq. 9-10) the
// timeline starts at the oldest memory that leads to the retrieved one (timelineStart); with the
// timelineFromOldest switch off, at whichever memory with no incoming edge a backward walk reaches.
// The number of such paths can grow exponentially, so we never enumerate them: a seeded random walk
// goes backwards to the start and forwards to a sink (cost: the path's length), a bounded number of
// walks is tried to find a path not already chosen for another retrieved memory, and each side of
// the walk stops after maxSteps memories (a very long timeline would not fit a prompt anyway).
import type { Edge, Id, Memory, Relation, Timeline } from '../types';
import type { MemoryGraph } from '../graph';
import { seededRng, type Rng } from '../rng';
import { promptDate } from '../text';
import { pastNote } from '../past';
import { compareChronological, type Dated } from '../order';
import { DEFAULT_MEMORY_SETTINGS } from '../settings';

export interface UntangleOptions {
  rng?: Rng;
  seed?: number;
  /** Keys (timelineKey) of timelines already chosen: avoided when another path exists. */
  avoid?: ReadonlySet<string>;
  /** Memories walked at most on each side of the retrieved one. */
  maxSteps?: number;
  /** Walks tried to find an unchosen timeline. */
  samples?: number;
  /** Start at the oldest memory leading to the retrieved one (the paper; settings.timelineFromOldest). */
  fromOldest?: boolean;
}

/** Ancestors looked at, at most, when finding where a timeline starts (bounds the cost per timeline). */
export const MAX_ANCESTORS = 4096;

/** Where the timelines through a memory start, and how far each memory on the way is from there. */
export interface TimelineOrigin {
  start: Id;
  /** Fewest edges from `start` to each memory that lies on a path from it to the retrieved one. */
  hops: ReadonlyMap<Id, number>;
}

function older(a: Dated | undefined, b: Dated | undefined): Dated | undefined {
  if (!a) return b;
  if (!b) return a;
  return compareChronological(a, b) <= 0 ? a : b;
}

/**
 * The paper's m_start (eq. 9) is the oldest memory of the component. Edges run older -> newer, so
 * it has no incoming edge, but it need not lead to the retrieved memory (two older branches that
 * meet later); the paper's set of timelines (eq. 10) is then empty. Tealeaf starts at the oldest
 * memory that does lead to it (within maxSteps edges): the same memory whenever the paper's set is
 * not empty.
 */
export function timelineStart(graph: MemoryGraph, through: Id, maxSteps: number): TimelineOrigin {
  // Backwards, breadth first: the ancestors within maxSteps edges.
  const ancestors = new Set<Id>([through]);
  let frontier: Id[] = [through];
  let start = graph.dated(through);
  for (let depth = 0; depth < maxSteps && frontier.length > 0 && ancestors.size < MAX_ANCESTORS; depth++) {
    const next: Id[] = [];
    for (const id of frontier)
      for (const e of graph.incoming(id)) {
        if (ancestors.has(e.from) || ancestors.size >= MAX_ANCESTORS) continue;
        ancestors.add(e.from);
        next.push(e.from);
        start = older(start, graph.dated(e.from));
      }
    frontier = next;
  }
  // Forwards from the start, among those ancestors: how many edges each lies from it.
  const from = start?.id ?? through;
  const hops = new Map<Id, number>([[from, 0]]);
  frontier = [from];
  while (frontier.length > 0) {
    const next: Id[] = [];
    for (const id of frontier)
      for (const e of graph.outgoing(id)) {
        if (!ancestors.has(e.to) || hops.has(e.to)) continue;
        hops.set(e.to, hops.get(id)! + 1);
        next.push(e.to);
      }
    frontier = next;
  }
  return { start: from, hops };
}

export function timelineKey(t: Pick<Timeline, 'memoryIds'>): string {
  return t.memoryIds.join('>');
}

function pick<T>(items: readonly T[], rng: Rng): T {
  return items[Math.min(items.length - 1, Math.floor(rng() * items.length))];
}

function walk(graph: MemoryGraph, through: Id, rng: Rng, maxSteps: number, origin?: TimelineOrigin): Timeline {
  const back: Id[] = [];
  const backRel: Relation[] = [];
  const seen = new Set<Id>([through]);
  let cur = through;
  for (let step = 0; step < maxSteps; step++) {
    // Towards the origin: only memories it reaches within the steps left (one always qualifies).
    const options = graph
      .incoming(cur)
      .filter((e: Edge) => !seen.has(e.from) && (!origin || (origin.hops.get(e.from) ?? Infinity) < maxSteps - step));
    if (options.length === 0) break;
    const e = pick(options, rng);
    back.push(e.from);
    backRel.push(e.relation);
    seen.add(e.from);
    cur = e.from;
  }
  const fwd: Id[] = [];
  const fwdRel: Relation[] = [];
  cur = through;
  for (let step = 0; step < maxSteps; step++) {
    const options = graph.outgoing(cur).filter((e: Edge) => !seen.has(e.to));
    if (options.length === 0) break;
    const e = pick(options, rng);
    fwd.push(e.to);
    fwdRel.push(e.relation);
    seen.add(e.to);
    cur = e.to;
  }
  return {
    memoryIds: [...back.reverse(), through, ...fwd],
    relations: [...backRel.reverse(), ...fwdRel],
    through,
  };
}

/** One timeline through `throughId`; a memory with no edges (or unknown) is a timeline of one. */
export function untangleTimelines(graph: MemoryGraph, throughId: Id, options: UntangleOptions = {}): Timeline {
  if (!graph.has(throughId)) return { memoryIds: [throughId], relations: [], through: throughId };
  const rng = options.rng ?? seededRng(options.seed ?? 1);
  const maxSteps = options.maxSteps ?? 24;
  const samples = Math.max(1, options.samples ?? 8);
  const avoid = options.avoid;
  const origin = (options.fromOldest ?? DEFAULT_MEMORY_SETTINGS.timelineFromOldest) ? timelineStart(graph, throughId, maxSteps) : undefined;
  let first: Timeline | undefined;
  for (let i = 0; i < samples; i++) {
    const t = walk(graph, throughId, rng, maxSteps, origin);
    if (!avoid || !avoid.has(timelineKey(t))) return t;
    first ??= t;
  }
  return first!;
}

/**
 * n = 1 timeline per retrieved memory, in retrieval order, preferring timelines not chosen for an
 * earlier retrieved memory. An exact repeat of an already chosen timeline is left out.
 */
export function timelinesForRetrieved(
  graph: MemoryGraph,
  retrievedIds: readonly Id[],
  seed: number,
  options: Omit<UntangleOptions, 'rng' | 'seed' | 'avoid'> = {},
): Timeline[] {
  const rng = seededRng(seed);
  const chosen = new Set<string>();
  const out: Timeline[] = [];
  for (const id of retrievedIds) {
    const t = untangleTimelines(graph, id, { ...options, rng, avoid: chosen });
    const key = timelineKey(t);
    if (chosen.has(key)) continue;
    chosen.add(key);
    out.push(t);
  }
  return out;
}

function describeMemory(m: Memory | undefined, id: Id, memoriesById: ReadonlyMap<Id, Memory>): string {
  if (!m) return `[missing memory ${id}]`;
  return `[${promptDate(m.time)}: ${m.text}${pastNote(m, memoriesById)}]`;
}

/** "[2023-05-08: event A] -(Cause)-> [2023-06-01: event B] ..." */
export function formatTimeline(timeline: Timeline, memoriesById: ReadonlyMap<Id, Memory>): string {
  let out = describeMemory(memoriesById.get(timeline.memoryIds[0]), timeline.memoryIds[0], memoriesById);
  for (let i = 1; i < timeline.memoryIds.length; i++) {
    const id = timeline.memoryIds[i];
    out += ` -(${timeline.relations[i - 1] ?? 'SameTopic'})-> ${describeMemory(memoriesById.get(id), id, memoriesById)}`;
  }
  return out;
}
