// Phase II-2: rewrite the raw timelines into short notes for the current dialogue. One call for
// all timelines (the paper makes one per timeline), cached by the set of timelines and the texts
// of their memories: while the dialogue stays on the same timelines, no further call is made.
// (The dialogue itself is deliberately not part of the key; that is what makes the cache hit.)
import { z } from '../zod';
import type { ChatMessage, JsonSchema, LanguageModel } from '../../ports';
import type { Id, Memory, Timeline } from '../types';
import { cleanText, extractJson, pickArray, readIndex } from '../llm-output';
import { formatTimeline, timelineKey } from './timelines';
import { pastNote } from '../past';

/** A small LRU of refined notes, keyed per timeline within a set of timelines. */
export class RefineCache {
  private readonly entries = new Map<string, string[]>();
  constructor(private readonly maxEntries = 32) {}

  get(key: string): string[] | undefined {
    const v = this.entries.get(key);
    if (v) {
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  set(key: string, notes: string[]): void {
    this.entries.delete(key);
    this.entries.set(key, notes);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}

function timelineSignature(t: Timeline, memoriesById: ReadonlyMap<Id, Memory>): string {
  const texts = t.memoryIds.map((id) => {
    const m = memoriesById.get(id);
    return m ? `${m.text}\u0001${pastNote(m, memoriesById)}` : '';
  });
  return `${timelineKey(t)}\u0002${texts.join('\u0003')}`;
}

/** Order-independent key of a set of timelines and the current texts of their memories. */
export function refineCacheKey(timelines: readonly Timeline[], memoriesById: ReadonlyMap<Id, Memory>): string {
  return timelines
    .map((t) => timelineSignature(t, memoriesById))
    .sort()
    .join('\u0004');
}

export function timelineNotesSchema(count: number): JsonSchema {
  return {
    title: 'timeline_notes',
    type: 'object',
    properties: {
      notes: {
        type: 'array',
        maxItems: count,
        items: {
          type: 'object',
          properties: { timeline: { type: 'integer', minimum: 1, maximum: count }, note: { type: 'string' } },
          required: ['timeline', 'note'],
        },
      },
    },
    required: ['notes'],
  };
}

export function refineMessages(dialogue: string, rawTimelines: readonly string[]): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        "You prepare background for the assistant's next reply. Each timeline below lists past memories in " +
        'time order, joined by how they relate. For every timeline write one short note (at most two ' +
        'sentences) keeping only what could help with the current conversation: what happened, when, and ' +
        'what changed since. Something marked as no longer true must be described as past. If nothing in a ' +
        'timeline helps, write an empty note. Answer with JSON only.',
    },
    {
      role: 'user',
      content: `Current conversation:\n${dialogue}\n\nTimelines:\n${rawTimelines.map((t, i) => `${i + 1}. ${t}`).join('\n')}`,
    },
  ];
}

const NoteEntry = z.object({ timeline: z.union([z.number(), z.string()]).optional(), note: z.string() });

/** One note per timeline; undefined where the model gave none (the caller falls back to raw). */
export function parseTimelineNotes(raw: unknown, count: number): { notes: Array<string | undefined>; problems: string[] } {
  const notes: Array<string | undefined> = Array.from({ length: count }, () => undefined);
  const ex = extractJson(raw);
  const problems = [...ex.problems];
  if (!ex.found) return { notes, problems };
  const list = pickArray(ex.value, ['notes', 'timelines', 'refined']) ?? [];
  list.forEach((entry, pos) => {
    const parsed =
      typeof entry === 'string' ? { success: true as const, data: { note: entry, timeline: pos + 1 } } : NoteEntry.safeParse(entry);
    if (!parsed.success) {
      problems.push('invalid note dropped');
      return;
    }
    const idx = readIndex(parsed.data.timeline) ?? pos + 1;
    if (idx < 1 || idx > count) {
      problems.push(`note for timeline ${idx} out of range`);
      return;
    }
    if (notes[idx - 1] !== undefined) return;
    notes[idx - 1] = cleanText(parsed.data.note, 800);
  });
  return { notes, problems };
}

export interface RefineInput {
  llm?: LanguageModel;
  /** The current dialogue, as text. */
  dialogue: string;
  timelines: readonly Timeline[];
  memoriesById: ReadonlyMap<Id, Memory>;
  cache: RefineCache;
  signal?: AbortSignal;
}

export interface RefineResult {
  /** One note per timeline, same order ('' = nothing relevant). */
  notes: string[];
  /** The raw timeline texts, same order. */
  raw: string[];
  fromCache: boolean;
  modelCalls: number;
  /** The messages sent (for token accounting), when a call was made. */
  messages?: ChatMessage[];
  problems: string[];
}

/** Refines all timelines in one call, or answers from the cache. A failed call yields raw timelines. */
export async function refineTimelines(input: RefineInput): Promise<RefineResult> {
  const raw = input.timelines.map((t) => formatTimeline(t, input.memoriesById));
  if (input.timelines.length === 0) return { notes: [], raw, fromCache: false, modelCalls: 0, problems: [] };
  const perTimeline = input.timelines.map((t) => timelineSignature(t, input.memoriesById));
  const key = refineCacheKey(input.timelines, input.memoriesById);
  const cached = input.cache.get(key);
  if (cached) {
    // Cached notes are stored in sorted-signature order; map back to this order.
    const sorted = [...perTimeline].sort();
    return { notes: perTimeline.map((s) => cached[sorted.indexOf(s)] ?? ''), raw, fromCache: true, modelCalls: 0, problems: [] };
  }
  if (!input.llm) return { notes: raw, raw, fromCache: false, modelCalls: 0, problems: ['no model: raw timelines used'] };
  const messages = refineMessages(input.dialogue, raw);
  let text: string;
  try {
    text = await input.llm.json(messages, timelineNotesSchema(raw.length), { signal: input.signal, temperature: 0 });
  } catch (err) {
    if (input.signal?.aborted) throw err;
    return { notes: raw, raw, fromCache: false, modelCalls: 1, messages, problems: [`refinement failed: ${String(err)}`] };
  }
  const parsed = parseTimelineNotes(text, raw.length);
  const notes = parsed.notes.map((n, i) => n ?? raw[i]);
  // Cache when the model answered at least partly; a total failure is tried again next turn.
  if (parsed.notes.some((n) => n !== undefined)) {
    const sorted = [...perTimeline].sort();
    input.cache.set(
      key,
      sorted.map((s) => notes[perTimeline.indexOf(s)]),
    );
  }
  return { notes, raw, fromCache: false, modelCalls: 1, messages, problems: parsed.problems };
}
