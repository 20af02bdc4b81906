// Phase 0 (its prompt and schema: summary-prompt.ts): one schema-constrained call turns a finished session into memory sentences (events),
// user and assistant traits (LD-Agent's persona banks, extracted at session end instead of per
// utterance) and optional notes (docs/METHOD.md, section 3: context + knowledge) and standing
// instructions (for every later reply, recall/instructions.ts), each with its source
// turns. Turns are shown to the model as short labels (T1, T2, ...) to save tokens; the parser
// maps them back and drops anything that is not a turn of this session.
// The same call also splits the session into topics (SeCom segments, docs/METHOD.md, section 5): it
// already reads the whole transcript, so a separate segmentation call would only repeat it.
import { z } from '../zod';
import type { Id, MemoryKind, Millis } from '../types';
import { cleanText, extractJson, isSchemaEcho, pickArray } from '../llm-output';
import { duplicateKey, wordOverlap } from '../text';
import { repairCover, type TurnRange } from './segments/parse';
import { ITEM_CHARS, turnLabel, type TranscriptTurn } from './summary-prompt';

/** Items of one kind read from an answer before it is taken to be looping. */
const REPEATS_TOLERATED = 2;

export interface SummaryItem {
  kind: MemoryKind;
  text: string;
  subject?: string;
  context?: string;
  sourceTurnIds: Id[];
  time: Millis;
  /** True when the model gave no valid source turn and one was guessed by word overlap. */
  sourceGuessed: boolean;
  /**
   * Whether a source is a user message the call judged worth remembering (conditional memory,
   * docs/METHOD.md, section 3); absent when the call gave no judgement.
   */
  worthRemembering?: boolean;
}

export interface SummaryResult {
  items: SummaryItem[];
  /** False when the output held no recoverable JSON at all (the step should be retried). */
  parsed: boolean;
  /**
   * False when the answer stopped short (JSON cut off, a list looping): what was read is kept,
   * but an answer asked again may hold more.
   */
  complete?: boolean;
  /**
   * The session's topics as a contiguous cover of positions in the turns given to the parser (no
   * gaps, no overlaps, repaired); absent when the model gave none usable (use the fallback splitter).
   */
  topics?: TurnRange[];
  /** The user messages judged worth remembering; absent when the call gave no judgement. */
  worthTurnIds?: Id[];
  problems: string[];
}

const SourceSchema = z.array(z.union([z.string(), z.number()])).catch([]);
const TextItem = z.object({
  text: z.string().min(1),
  about: z.string().optional().catch(undefined),
  turns: SourceSchema.optional(),
});
const NoteItem = z.object({
  context: z.string().catch(''),
  knowledge: z.string().min(1),
  turns: SourceSchema.optional(),
});

/** Maps what the model wrote as a source (label, number, real id, external id) to real turn ids. */
function resolveSources(raw: ReadonlyArray<string | number>, turns: readonly TranscriptTurn[], offset = 0): Id[] {
  const byKey = new Map<string, Id>();
  // Ids first, labels last: a label the prompt showed wins over a turn whose id happens to read
  // like one ("t1" is turn T2's id in some imports).
  turns.forEach((t) => {
    if (t.externalId) byKey.set(t.externalId.toLowerCase(), t.id);
    byKey.set(t.id.toLowerCase(), t.id);
  });
  turns.forEach((t, i) => byKey.set(String(offset + i + 1), t.id));
  turns.forEach((t, i) => byKey.set(turnLabel(offset + i).toLowerCase(), t.id));
  const ids: Id[] = [];
  for (const r of raw) {
    const key = String(r)
      .trim()
      .replace(/^\[|\]$/g, '')
      .toLowerCase();
    const id = byKey.get(key);
    if (id && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** No valid source: guess the single turn sharing the most words (honest provenance, no inflation). */
function guessSource(text: string, turns: readonly TranscriptTurn[]): Id[] {
  let best: TranscriptTurn | undefined;
  let bestScore = -1;
  for (const t of turns) {
    const s = wordOverlap(text, t.text);
    if (s > bestScore) {
      best = t;
      bestScore = s;
    }
  }
  return best ? [best.id] : [];
}

function subjectFor(kind: MemoryKind, about: string | undefined, turns: readonly TranscriptTurn[]): string | undefined {
  if (kind === 'user-trait' || kind === 'note' || kind === 'instruction') return 'user';
  if (kind === 'assistant-trait') return 'assistant';
  const a = about?.trim().toLowerCase();
  if (!a) return undefined;
  if (a === 'user' || a === 'assistant') return a;
  const named = turns.find((t) => t.speaker && t.speaker.toLowerCase() === a);
  return named?.speaker ?? about?.trim().slice(0, 60);
}

const FIRST_KEYS = ['first', 'start', 'from', 'begin', 'firstTurn', 'first_turn', 'startTurn', 'start_turn'];
const LAST_KEYS = ['last', 'end', 'to', 'stop', 'lastTurn', 'last_turn', 'endTurn', 'end_turn'];
/** "T1-T6", "T1 to T6", "T1..T6", "T1 – T6"; a lone label is read as a start. */
const RANGE_TEXT = /^\s*\[?\s*([^\s,\-–—.]+)\s*(?:-|–|—|\.\.\.?|to|,)\s*([^\s,\]]+)\s*\]?\s*$/i;

/** Position (0-based) of a turn from what the model wrote: label, 1-based number, id, external id. */
function positionLookup(turns: readonly TranscriptTurn[], offset = 0): (raw: unknown) => number | undefined {
  const byKey = new Map<string, number>();
  turns.forEach((t, i) => {
    if (t.externalId) byKey.set(t.externalId.toLowerCase(), i);
    byKey.set(t.id.toLowerCase(), i);
  });
  turns.forEach((t, i) => byKey.set(String(offset + i + 1), i));
  turns.forEach((t, i) => byKey.set(turnLabel(offset + i).toLowerCase(), i));
  return (raw) => {
    if (typeof raw !== 'string' && typeof raw !== 'number') return undefined;
    return byKey.get(
      String(raw)
        .trim()
        .replace(/^\[|\]$/g, '')
        .toLowerCase(),
    );
  };
}

function pickKey(o: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) return o[k];
  return undefined;
}

/**
 * The summary's topics as a repaired contiguous cover of the session (positions), or undefined
 * when none could be read. Accepts {first, last} (or start/end, from/to), [first, last], a list
 * of a topic's turns, and "T1-T6" strings; a topic without a readable end runs to the next start.
 */
function parseTopics(value: unknown, turns: readonly TranscriptTurn[], problems: string[], offset = 0): TurnRange[] | undefined {
  if (turns.length === 0 || Array.isArray(value)) return undefined;
  const list = pickArray(value, ['topics', 'segments', 'topicRanges']);
  if (!list || list.length === 0) {
    problems.push('summary gave no topics (fallback splitter)');
    return undefined;
  }
  const pos = positionLookup(turns, offset);
  const starts: Array<{ first: number; last?: number }> = [];
  let dropped = 0;
  for (const entry of list) {
    let first: number | undefined;
    let last: number | undefined;
    if (typeof entry === 'string' || typeof entry === 'number') {
      // A whole label or id first: real ids may themselves hold a dash or a dot.
      first = pos(entry);
      const m = first === undefined && typeof entry === 'string' ? RANGE_TEXT.exec(entry) : null;
      if (m) {
        first = pos(m[1]);
        last = pos(m[2]);
      }
    } else if (Array.isArray(entry)) {
      // [first, last], or every turn of the topic.
      const found = entry.map(pos).filter((x): x is number => x !== undefined);
      if (found.length > 0) {
        first = Math.min(...found);
        last = found.length > 1 ? Math.max(...found) : undefined;
      }
    } else if (entry && typeof entry === 'object') {
      const o = entry as Record<string, unknown>;
      first = pos(pickKey(o, FIRST_KEYS));
      last = pos(pickKey(o, LAST_KEYS));
      const listed = Array.isArray(o.turns) ? o.turns.map(pos).filter((x): x is number => x !== undefined) : [];
      if (first === undefined && listed.length > 0) first = Math.min(...listed);
      if (last === undefined && listed.length > 1) last = Math.max(...listed);
    }
    if (first === undefined) {
      dropped++;
      continue;
    }
    starts.push(last === undefined ? { first } : { first, last });
  }
  if (dropped > 0) problems.push(`${dropped} unreadable topic(s) dropped`);
  if (starts.length === 0) {
    problems.push('no usable topics in the summary (fallback splitter)');
    return undefined;
  }
  // An open-ended topic runs up to the next topic's start (or the session's end).
  const sortedStarts = [...new Set(starts.map((t) => t.first))].sort((a, b) => a - b);
  const pairs = starts.map((t): [number, number] => {
    if (t.last !== undefined) return [t.first, t.last];
    const next = sortedStarts.find((x) => x > t.first);
    return [t.first, next === undefined ? turns.length - 1 : next - 1];
  });
  const cover = repairCover(pairs, turns.length);
  if (!cover.usable) {
    problems.push('no usable topics in the summary (fallback splitter)');
    return undefined;
  }
  if (cover.repaired || starts.some((t) => t.last === undefined)) problems.push('topics repaired into a contiguous cover');
  return cover.ranges;
}

/** The user messages the call judged worth remembering, or undefined when it gave no list. */
function parseWorth(value: unknown, turns: readonly TranscriptTurn[], offset = 0): Id[] | undefined {
  if (Array.isArray(value)) return undefined;
  const list = pickArray(value, ['remember', 'worthRemembering', 'worth_remembering']);
  if (!list) return undefined;
  const raw = list.filter((x): x is string | number => typeof x === 'string' || typeof x === 'number');
  const users = new Set(turns.filter((t) => t.role === 'user').map((t) => t.id));
  return resolveSources(raw, turns, offset).filter((id) => users.has(id));
}

/**
 * Conditional memory: a note is made only from a message judged worth remembering (the paper
 * writes its records only for those); events and traits, the session's summary, are all kept.
 * Every item carries the judgement of its sources.
 */
function judgeWorth(items: SummaryItem[], worth: ReadonlySet<Id>, problems: string[]): SummaryItem[] {
  const out: SummaryItem[] = [];
  for (const item of items) {
    const worthRemembering = item.sourceTurnIds.some((id) => worth.has(id));
    // A standing instruction is held to the same judgement: it goes into every reply after it.
    if ((item.kind === 'note' || item.kind === 'instruction') && !worthRemembering) {
      problems.push(`${item.kind} "${item.text.slice(0, 40)}" dropped: not from a message judged worth remembering`);
      continue;
    }
    out.push({ ...item, worthRemembering });
  }
  return out;
}

/**
 * Reads the summarising call's output against the session's real turns (`offset`: the position of
 * the first of them in the session, for a part of a long one). Never throws. Items repeated within
 * the answer are read once; past a few repeats a list is taken to be looping and read no further.
 */
export function parseSummary(raw: unknown, turns: readonly TranscriptTurn[], offset = 0): SummaryResult {
  const ex = extractJson(raw);
  const problems = [...ex.problems];
  if (!ex.found) return { items: [], parsed: false, problems };
  if (isSchemaEcho(ex.value)) return { items: [], parsed: false, problems: [...problems, 'the answer was the schema, echoed back'] };
  const lastTime = turns.reduce((t, x) => Math.max(t, x.time), 0);
  const timeById = new Map(turns.map((t) => [t.id, t.time]));
  const items: SummaryItem[] = [];

  const seen = new Set<string>();
  let repeats = 0;
  /** False once the answer looks like a loop: the caller stops reading that list. */
  const fresh = (kind: MemoryKind, text: string): boolean => {
    const key = duplicateKey(kind, undefined, text);
    if (!seen.has(key)) return !!seen.add(key);
    repeats++;
    return false;
  };
  const finish = (kind: MemoryKind, text: string, rawSources: ReadonlyArray<string | number>, about?: string, context?: string) => {
    let sourceTurnIds = resolveSources(rawSources, turns, offset);
    const sourceGuessed = sourceTurnIds.length === 0;
    if (sourceGuessed) {
      problems.push(`${kind} "${text.slice(0, 40)}": no valid source turn, guessed`);
      sourceTurnIds = guessSource(`${context ?? ''} ${text}`, turns);
    }
    const time = sourceTurnIds.reduce((t, id) => Math.max(t, timeById.get(id) ?? 0), 0) || lastTime;
    items.push({ kind, text, subject: subjectFor(kind, about, turns), context, sourceTurnIds, time, sourceGuessed });
  };

  const groups: Array<[MemoryKind, string[]]> = [
    ['event', ['events', 'memories', 'facts']],
    ['user-trait', ['userTraits', 'user_traits', 'userPersona']],
    ['assistant-trait', ['assistantTraits', 'assistant_traits', 'assistantPersona']],
    ['instruction', ['instructions', 'standingInstructions', 'standing_instructions']],
  ];
  for (const [kind, keys] of groups) {
    // A bare top-level array is read as events only.
    const list = Array.isArray(ex.value) ? (kind === 'event' ? ex.value : []) : (pickArray(ex.value, keys) ?? []);
    const before = repeats;
    for (const entry of list) {
      // A bare string is accepted as an item without sources.
      const candidate = typeof entry === 'string' ? { text: entry, turns: [] } : entry;
      const parsed = TextItem.safeParse(candidate);
      const text = parsed.success ? cleanText(parsed.data.text, ITEM_CHARS) : '';
      if (!parsed.success || text === '') {
        problems.push(`invalid ${kind} item dropped`);
        continue;
      }
      if (!fresh(kind, text)) {
        if (repeats - before > REPEATS_TOLERATED) break;
        continue;
      }
      finish(kind, text, parsed.data.turns ?? [], parsed.data.about);
    }
  }
  for (const entry of Array.isArray(ex.value) ? [] : (pickArray(ex.value, ['notes']) ?? [])) {
    const parsed = NoteItem.safeParse(entry);
    const knowledge = parsed.success ? cleanText(parsed.data.knowledge, ITEM_CHARS) : '';
    if (!parsed.success || knowledge === '') {
      problems.push('invalid note dropped');
      continue;
    }
    if (!fresh('note', knowledge)) continue;
    finish('note', knowledge, parsed.data.turns ?? [], undefined, cleanText(parsed.data.context) || undefined);
  }
  if (Array.isArray(ex.value)) problems.push('top-level array read as events');
  if (repeats > 0) problems.push(`${repeats} repeated item(s) read once`);
  const topics = parseTopics(ex.value, turns, problems, offset);
  const worthTurnIds = parseWorth(ex.value, turns, offset);
  const kept = worthTurnIds ? judgeWorth(items, new Set(worthTurnIds), problems) : items;
  return {
    items: turns.length === 0 ? [] : kept,
    parsed: true,
    complete: !ex.problems.includes('truncated JSON') && repeats <= REPEATS_TOLERATED,
    ...(topics ? { topics } : {}),
    ...(worthTurnIds ? { worthTurnIds } : {}),
    problems,
  };
}
