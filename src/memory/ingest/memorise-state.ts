// What a memorise job carries between its steps (Job.state), read defensively: the record may come
// from an older version, a crash mid-write, or another tab.
import type { Id, Job, Turn } from '../types';
import { repairCover, type TurnRange } from './segments/parse';

export const MEMORISE_STEPS = ['summarise', 'embed', 'link', 'segment', 'done'] as const;
export type MemoriseStep = (typeof MEMORISE_STEPS)[number];

/** What the job carries between steps (Job.state). */
export interface MemoriseState {
  /** Ids of the memories the summary created, in summary order. */
  memoryIds: Id[];
  /** How many of them are linked (the link step resumes here). */
  linked: number;
  /** Summary items not stored because an identical memory exists. */
  duplicates: number;
  problems: string[];
  /**
   * The session's topics from the summarising call, by their first and last turn ids (ids, not
   * positions, so they still mean the same turns when the segment step runs after a reload).
   * Absent when the summary gave none usable: the segmenter falls back to its splitter.
   */
  topics?: Array<{ first: Id; last: Id }>;
  /** Chunked Phase 0's progress: parts summarised, of how many, items numbered so far (for ids). */
  summary?: SummaryProgress;
}

export interface SummaryProgress {
  done: number;
  total: number;
  items: number;
  /** How long turns were cut into lines when the parts were planned (summary-plan.ts). */
  lineChars: number;
  /** Where the planned parts start (line indexes): a resumed job keeps its plan. */
  starts: number[];
  /** Parts passed over: their answers could not be read. */
  skipped: number[];
}

function readSummary(raw: unknown): SummaryProgress | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const s = raw as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);
  const done = n(s.done);
  const total = n(s.total);
  const items = n(s.items);
  const lineChars = n(s.lineChars);
  if (done === undefined || total === undefined || items === undefined || lineChars === undefined || lineChars === 0) return undefined;
  const skipped = Array.isArray(s.skipped) ? s.skipped.filter((x): x is number => n(x) !== undefined) : [];
  const starts = Array.isArray(s.starts) ? s.starts.filter((x): x is number => n(x) !== undefined) : [];
  return { done, total, items, lineChars, starts, skipped };
}

function readTopics(raw: unknown): MemoriseState['topics'] {
  if (!Array.isArray(raw)) return undefined;
  const topics = raw.flatMap((t: unknown) => {
    if (!t || typeof t !== 'object') return [];
    const { first, last } = t as Record<string, unknown>;
    return typeof first === 'string' && typeof last === 'string' ? [{ first, last }] : [];
  });
  return topics.length > 0 ? topics : undefined;
}

/** Stored topics (turn ids) as a repaired cover of positions in `turns`; empty if none resolve. */
export function topicRanges(topics: MemoriseState['topics'], turns: readonly Turn[]): TurnRange[] {
  if (!topics || turns.length === 0) return [];
  const position = new Map(turns.map((t, i) => [t.id, i]));
  const pairs: Array<[number, number]> = [];
  for (const t of topics) {
    const first = position.get(t.first);
    const last = position.get(t.last);
    if (first !== undefined && last !== undefined) pairs.push([first, last]);
  }
  const cover = repairCover(pairs, turns.length);
  return cover.usable ? cover.ranges : [];
}

export function readState(job: Job): MemoriseState {
  const s = (job.state ?? {}) as Partial<MemoriseState>;
  const topics = readTopics(s.topics);
  const summary = readSummary(s.summary);
  return {
    memoryIds: Array.isArray(s.memoryIds) ? s.memoryIds.filter((x): x is Id => typeof x === 'string') : [],
    linked: typeof s.linked === 'number' ? s.linked : 0,
    duplicates: typeof s.duplicates === 'number' ? s.duplicates : 0,
    problems: Array.isArray(s.problems) ? s.problems.filter((x): x is string => typeof x === 'string').slice(-50) : [],
    ...(topics ? { topics } : {}),
    ...(summary ? { summary } : {}),
  };
}

export function isStep(step: string): step is MemoriseStep {
  return (MEMORISE_STEPS as readonly string[]).includes(step);
}
