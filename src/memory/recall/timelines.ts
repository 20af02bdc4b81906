// Phase II-1: untangle the component of a retrieved memory into one timeline through it: a
// directed path from a memory with no incoming edge to one with no outgoing edge. The number of
// such paths can grow exponentially, so we never enumerate them: a seeded random walk goes
// backwards to a source and forwards to a sink (cost: the path's length), a bounded number of
// walks is tried to find a path not already chosen for another retrieved memory, and each side
// of the walk stops after maxSteps memories (a very long timeline would not fit a prompt anyway).
import type { Edge, Id, Memory, Relation, Timeline } from '../types';
import type { MemoryGraph } from '../graph';
import { seededRng, type Rng } from '../rng';
import { promptDate } from '../text';
import { pastNote } from '../past';

export interface UntangleOptions {
  rng?: Rng;
  seed?: number;
  /** Keys (timelineKey) of timelines already chosen: avoided when another path exists. */
  avoid?: ReadonlySet<string>;
  /** Memories walked at most on each side of the retrieved one. */
  maxSteps?: number;
  /** Walks tried to find an unchosen timeline. */
  samples?: number;
}

export function timelineKey(t: Pick<Timeline, 'memoryIds'>): string {
  return t.memoryIds.join('>');
}

function pick<T>(items: readonly T[], rng: Rng): T {
  return items[Math.min(items.length - 1, Math.floor(rng() * items.length))];
}

function walk(graph: MemoryGraph, through: Id, rng: Rng, maxSteps: number): Timeline {
  const back: Id[] = [];
  const backRel: Relation[] = [];
  const seen = new Set<Id>([through]);
  let cur = through;
  for (let step = 0; step < maxSteps; step++) {
    const options = graph.incoming(cur).filter((e: Edge) => !seen.has(e.from));
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
  let first: Timeline | undefined;
  for (let i = 0; i < samples; i++) {
    const t = walk(graph, throughId, rng, maxSteps);
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
