// Phase II-2 and self-reflection in one call. Theanine rewrites each retrieved timeline in the light
// of the current dialogue (one call per timeline); conditional memory (seed 002) has the model judge
// whether what was retrieved is enough to answer and, if not, write keywords for another search.
// Tealeaf asks both in one JSON call for all timelines (docs/METHOD.md 1.5). A note is written for
// one dialogue, so the cache key is the whole input of the call: the dialogue as sent, every
// timeline as sent (memory texts, dates, relations, "no longer true" marks), what else was found,
// and the questions asked. A note that calls a timeline irrelevant is therefore reused only for
// the very same input (the same turn asked again), never for a later turn.
import { z } from '../zod';
import type { ChatMessage, JsonSchema, LanguageModel } from '../../ports';
import type { Id, Memory, Timeline } from '../types';
import { cleanText, extractJson, pickArray, readIndex } from '../llm-output';
import { estimateMessages, fittedJson, type PromptBuilder } from '../fit';
import { formatTimeline } from './timelines';

/** What the self-reflection answered: is the memory found enough, and if not, what to look for. */
export interface Reflection {
  enough: boolean;
  /** Search keywords for what is missing (none when enough). */
  keywords: string[];
}

interface CachedCheck {
  notes: string[];
  reflection?: Reflection;
}

/** A small LRU of answers, keyed by the call's whole input (refineCacheKey). */
export class RefineCache {
  private readonly entries = new Map<string, CachedCheck>();
  constructor(private readonly maxEntries = 32) {}

  get(key: string): CachedCheck | undefined {
    const v = this.entries.get(key);
    if (v) {
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  set(key: string, value: CachedCheck): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Everything the answer depends on: the messages as sent and the schema (the questions asked). */
export function refineCacheKey(messages: readonly ChatMessage[], schema: JsonSchema): string {
  return JSON.stringify([messages.map((m) => [m.role, m.content]), schema]);
}

export const MAX_KEYWORDS = 8;
/** A note is at most two sentences: the schema says so in characters, the output cap in tokens. */
const NOTE_CHARS = 400;
/** The dialogue the call reads: its last turns, each cut to its first words (the gist is enough to judge). */
export const REFINE_TURNS = 6;
const REFINE_TURN_WORDS = 150;

export interface DialogueLine {
  role: string;
  text: string;
}

/** The dialogue as the call shows it, each turn cut to REFINE_TURN_WORDS words. */
export function dialogueText(turns: readonly DialogueLine[]): string {
  return turns
    .map((t) => {
      const words = t.text.trim().split(/\s+/);
      const text = words.length > REFINE_TURN_WORDS ? `${words.slice(0, REFINE_TURN_WORDS).join(' ')} …` : t.text.trim();
      return `${t.role}: ${text}`;
    })
    .join('\n');
}

/** Tokens the answer may take: a short note per timeline, the judgement and its keywords. */
export function refineOutputTokens(timelines: number, reflect: boolean): number {
  return 16 + 110 * timelines + (reflect ? 80 : 0);
}

/** Notes for `count` timelines (none: no notes asked) and, with `reflect`, the judgement and keywords. */
export function timelineNotesSchema(count: number, reflect = false): JsonSchema {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  if (count > 0) {
    properties.notes = {
      type: 'array',
      maxItems: count,
      items: {
        type: 'object',
        properties: { timeline: { type: 'integer', minimum: 1, maximum: count }, note: { type: 'string', maxLength: NOTE_CHARS } },
        required: ['timeline', 'note'],
      },
    };
    required.push('notes');
  }
  if (reflect) {
    properties.enough = { type: 'boolean' };
    properties.keywords = { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: MAX_KEYWORDS };
    required.push('enough', 'keywords');
  }
  return { title: count > 0 ? 'timeline_notes' : 'memory_reflection', type: 'object', properties, required };
}

/**
 * The call's messages. `rawTimelines` get a note each; `others` (raw lines: timelines when notes
 * are not asked, memories and passages found beside them) are shown for the judgement only.
 */
export function refineMessages(
  dialogue: string,
  rawTimelines: readonly string[],
  others: readonly string[] = [],
  reflect = false,
): ChatMessage[] {
  const steps: string[] = [];
  if (rawTimelines.length > 0)
    steps.push(
      'Each numbered timeline below lists past memories in time order, joined by how they relate. For every ' +
        'timeline write one short note (at most two sentences) keeping only what could help with the current ' +
        'conversation: what happened, when, and what changed since. Something marked as no longer true must be ' +
        'described as past. If nothing in a timeline helps now, write an empty note.',
    );
  if (reflect)
    steps.push(
      "Decide whether what was found in memory is enough to reply to the person's last message (enough: true " +
        'or false). If it is not enough, write up to 8 short search keywords (people, places, activities, ' +
        'objects, events) for the missing information that memories answering it would contain; if it is ' +
        'enough, write no keywords.',
    );
  const parts = [`Current conversation:\n${dialogue}`];
  if (rawTimelines.length > 0) parts.push(`Timelines:\n${rawTimelines.map((t, i) => `${i + 1}. ${t}`).join('\n')}`);
  if (others.length > 0)
    parts.push(`${rawTimelines.length > 0 ? 'Also found' : 'Found in memory'}:\n${others.map((o) => `- ${o}`).join('\n')}`);
  else if (rawTimelines.length === 0) parts.push('Found in memory: nothing.');
  return [
    {
      role: 'system',
      content: `You prepare background for the assistant's next reply from what it remembers of earlier conversations with this person. ${steps.join(' Then: ')} Answer with JSON only.`,
    },
    { role: 'user', content: parts.join('\n\n') },
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

function readEnough(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (['true', 'yes', 'enough'].includes(s)) return true;
    if (['false', 'no', 'not enough'].includes(s)) return false;
  }
  return undefined;
}

/** The judgement and keywords of an answer; undefined when the judgement cannot be read. */
export function parseReflection(raw: unknown): Reflection | undefined {
  const ex = extractJson(raw);
  if (!ex.found || typeof ex.value !== 'object' || ex.value === null) return undefined;
  const value = ex.value as Record<string, unknown>;
  const enough = readEnough(value.enough ?? value.sufficient);
  if (enough === undefined) return undefined;
  const given = typeof value.keywords === 'string' ? value.keywords.split(',') : (pickArray(value, ['keywords', 'queries']) ?? []);
  const keywords = given
    .filter((k): k is string => typeof k === 'string')
    .map((k) => k.trim())
    .filter((k) => k.length > 0 && k.length < 60)
    .slice(0, MAX_KEYWORDS);
  return { enough, keywords: enough ? [] : keywords };
}

export interface RefineInput {
  llm?: LanguageModel;
  /** The current dialogue: its turns (the last REFINE_TURNS are shown), or text as it is to be shown. */
  dialogue: string | readonly DialogueLine[];
  /** Timelines to write notes for (none: no notes asked). */
  timelines: readonly Timeline[];
  /** Further material shown for the judgement only, as prompt lines. */
  others?: readonly string[];
  /** Ask the self-reflection too. */
  reflect?: boolean;
  memoriesById: ReadonlyMap<Id, Memory>;
  cache: RefineCache;
  signal?: AbortSignal;
}

export interface RefineResult {
  /** One note per timeline, same order ('' = nothing relevant). */
  notes: string[];
  /** The raw timeline texts, same order. */
  raw: string[];
  /** The self-reflection's answer; undefined when not asked, or not readable. */
  reflection?: Reflection;
  fromCache: boolean;
  modelCalls: number;
  /** The messages sent (for token accounting), when a call was made. */
  messages?: ChatMessage[];
  /** Tokens of the call's prompt as counted when it was fitted, and of its answer (estimated). */
  tokens?: { prompt: number; output: number };
  problems: string[];
}

/**
 * The call's prompt under a token budget: what gives way first is the other material shown for
 * the judgement (from the least relevant), then the dialogue from its oldest turn; the
 * instructions, the timelines to refine and the last message always stay (fitPrompt says so in
 * words when even they do not fit, and the caller falls back to raw timelines).
 */
function refineBuilder(input: RefineInput, raw: readonly string[], reflect: boolean): PromptBuilder {
  const turns = typeof input.dialogue === 'string' ? undefined : input.dialogue.slice(-REFINE_TURNS);
  return (tokens) => {
    let shown = turns;
    let others = [...(input.others ?? [])];
    const build = () => refineMessages(shown ? dialogueText(shown) : (input.dialogue as string), raw, others, reflect);
    let messages = build();
    while (estimateMessages(messages) > tokens) {
      if (others.length > 0) others = others.slice(0, -1);
      else if (shown && shown.length > 1) shown = shown.slice(1);
      else break;
      messages = build();
    }
    return messages;
  };
}

/** Refines the timelines and/or reflects in one call, or answers from the cache. A failed call yields raw timelines. */
export async function refineTimelines(input: RefineInput): Promise<RefineResult> {
  const raw = input.timelines.map((t) => formatTimeline(t, input.memoriesById));
  const reflect = input.reflect === true;
  if (raw.length === 0 && !reflect) return { notes: [], raw, fromCache: false, modelCalls: 0, problems: [] };
  if (!input.llm) return { notes: raw, raw, fromCache: false, modelCalls: 0, problems: ['no model: raw timelines used'] };
  const schema = timelineNotesSchema(raw.length, reflect);
  const build = refineBuilder(input, raw, reflect);
  // The cache is keyed by the prompt as laid out for the whole window: the same input, the same key.
  const key = refineCacheKey(build(Number.MAX_SAFE_INTEGER), schema);
  const cached = input.cache.get(key);
  if (cached) return { notes: [...cached.notes], raw, reflection: cached.reflection, fromCache: true, modelCalls: 0, problems: [] };
  let text: string;
  let messages: ChatMessage[];
  let promptTokens: number;
  try {
    const call = await fittedJson({
      llm: input.llm,
      build,
      output: refineOutputTokens(raw.length, reflect),
      schema,
      temperature: 0,
      signal: input.signal,
    });
    text = call.text;
    messages = call.prompt.messages;
    promptTokens = call.prompt.promptTokens;
  } catch (err) {
    if (input.signal?.aborted) throw err;
    return { notes: raw, raw, fromCache: false, modelCalls: 1, problems: [`refinement failed: ${String(err)}`] };
  }
  const tokens = { prompt: promptTokens, output: estimateMessages([{ role: 'assistant', content: text }]) };
  const parsed = parseTimelineNotes(text, raw.length);
  const notes = parsed.notes.map((n, i) => n ?? raw[i]!);
  const reflection = reflect ? parseReflection(text) : undefined;
  const problems = raw.length > 0 ? parsed.problems : [];
  if (reflect && !reflection) problems.push('self-reflection unreadable: no second search');
  // Cache when the model answered at least partly; a total failure is tried again next time.
  if (parsed.notes.some((n) => n !== undefined) || reflection) input.cache.set(key, { notes, reflection });
  return { notes, raw, reflection, fromCache: false, modelCalls: 1, messages, tokens, problems };
}
