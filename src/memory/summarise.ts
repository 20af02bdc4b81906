// Phase 0: one schema-constrained call turns a finished session into memory sentences (events),
// user and assistant traits (LD-Agent's persona banks, extracted at session end instead of per
// utterance) and optional notes (METHOD.md section 3: context + knowledge), each with its source
// turns. Turns are shown to the model as short labels (T1, T2, ...) to save tokens; the parser
// maps them back and drops anything that is not a turn of this session.
import { z } from 'zod';
import type { ChatMessage, JsonSchema } from '../ports';
import type { Id, MemoryKind, Millis, Role } from './types';
import { cleanText, extractJson, pickArray } from './llm-output';
import { formatDate, wordOverlap } from './text';

export interface TranscriptTurn {
  id: Id;
  role: Role;
  text: string;
  time: Millis;
  /** E.g. a LoCoMo dia_id; accepted as a source reference too. */
  externalId?: string;
  /** Display name of the speaker, when known (imported conversations). */
  speaker?: string;
}

export interface SummaryItem {
  kind: MemoryKind;
  text: string;
  subject?: string;
  context?: string;
  sourceTurnIds: Id[];
  time: Millis;
  /** True when the model gave no valid source turn and one was guessed by word overlap. */
  sourceGuessed: boolean;
}

export interface SummaryResult {
  items: SummaryItem[];
  /** False when the output held no recoverable JSON at all (the step should be retried). */
  parsed: boolean;
  problems: string[];
}

export interface SummariseOptions {
  /** Ask for notes (instructions, feedback, knowledge to apply later). */
  includeNotes?: boolean;
}

const sourceList = { type: 'array', items: { type: 'string' }, maxItems: 8 };

export function summarySchema(includeNotes = true): JsonSchema {
  const item = (extra: Record<string, unknown> = {}) => ({
    type: 'object',
    properties: { text: { type: 'string' }, ...extra, turns: sourceList },
    required: ['text', 'turns'],
  });
  const properties: Record<string, unknown> = {
    events: { type: 'array', items: item({ about: { type: 'string' } }) },
    userTraits: { type: 'array', items: item() },
    assistantTraits: { type: 'array', items: item() },
  };
  if (includeNotes) {
    properties.notes = {
      type: 'array',
      items: {
        type: 'object',
        properties: { context: { type: 'string' }, knowledge: { type: 'string' }, turns: sourceList },
        required: ['context', 'knowledge', 'turns'],
      },
    };
  }
  return { title: 'session_memories', type: 'object', properties, required: Object.keys(properties) };
}

function turnLabel(i: number): string {
  return `T${i + 1}`;
}

function speakerName(t: TranscriptTurn): string {
  return t.speaker ? `${t.speaker} (${t.role})` : t.role;
}

export function summariseMessages(turns: readonly TranscriptTurn[], options: SummariseOptions = {}): ChatMessage[] {
  const includeNotes = options.includeNotes ?? true;
  const transcript = turns
    .map((t, i) => `${turnLabel(i)} [${speakerName(t)}, ${formatDate(t.time)}]: ${t.text}`)
    .join('\n');
  const system = [
    'You keep the long-term memory of a conversational assistant.',
    'Read the conversation and write down what is worth remembering in later conversations.',
    '- events: short, self-contained sentences about something that happened, was done, planned or said',
    '  (name who it is about; "about" is "user", "assistant" or a name).',
    '- userTraits: lasting facts about the user: preferences, habits, personality, circumstances.',
    '- assistantTraits: what the assistant said about itself or agreed to be like.',
    includeNotes
      ? '- notes: instructions or feedback the user gave that should change future replies; context = why, knowledge = what to do.'
      : '',
    'Every item lists in "turns" the labels (like "T3") of the turns it comes from.',
    'Write each sentence so it makes sense alone, in the third person. Skip small talk and greetings.',
    'Answer with JSON only.',
  ]
    .filter(Boolean)
    .join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: `Conversation:\n${transcript}` },
  ];
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
function resolveSources(raw: ReadonlyArray<string | number>, turns: readonly TranscriptTurn[]): Id[] {
  const byKey = new Map<string, Id>();
  turns.forEach((t, i) => {
    byKey.set(turnLabel(i).toLowerCase(), t.id);
    byKey.set(String(i + 1), t.id);
    byKey.set(t.id.toLowerCase(), t.id);
    if (t.externalId) byKey.set(t.externalId.toLowerCase(), t.id);
  });
  const ids: Id[] = [];
  for (const r of raw) {
    const key = String(r).trim().replace(/^\[|\]$/g, '').toLowerCase();
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
  if (kind === 'user-trait' || kind === 'note') return 'user';
  if (kind === 'assistant-trait') return 'assistant';
  const a = about?.trim().toLowerCase();
  if (!a) return undefined;
  if (a === 'user' || a === 'assistant') return a;
  const named = turns.find((t) => t.speaker && t.speaker.toLowerCase() === a);
  return named?.speaker ?? about?.trim().slice(0, 60);
}

/** Reads the summarising call's output against the session's real turns. Never throws. */
export function parseSummary(raw: unknown, turns: readonly TranscriptTurn[]): SummaryResult {
  const ex = extractJson(raw);
  const problems = [...ex.problems];
  if (!ex.found) return { items: [], parsed: false, problems };
  const lastTime = turns.reduce((t, x) => Math.max(t, x.time), 0);
  const timeById = new Map(turns.map((t) => [t.id, t.time]));
  const items: SummaryItem[] = [];

  const finish = (kind: MemoryKind, text: string, rawSources: ReadonlyArray<string | number>, about?: string, context?: string) => {
    let sourceTurnIds = resolveSources(rawSources, turns);
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
  ];
  for (const [kind, keys] of groups) {
    // A bare top-level array is read as events only.
    const list = Array.isArray(ex.value) ? (kind === 'event' ? ex.value : []) : (pickArray(ex.value, keys) ?? []);
    for (const entry of list) {
      // A bare string is accepted as an item without sources.
      const candidate = typeof entry === 'string' ? { text: entry, turns: [] } : entry;
      const parsed = TextItem.safeParse(candidate);
      const text = parsed.success ? cleanText(parsed.data.text) : '';
      if (!parsed.success || text === '') {
        problems.push(`invalid ${kind} item dropped`);
        continue;
      }
      finish(kind, text, parsed.data.turns ?? [], parsed.data.about);
    }
  }
  for (const entry of Array.isArray(ex.value) ? [] : (pickArray(ex.value, ['notes']) ?? [])) {
    const parsed = NoteItem.safeParse(entry);
    const knowledge = parsed.success ? cleanText(parsed.data.knowledge) : '';
    if (!parsed.success || knowledge === '') {
      problems.push('invalid note dropped');
      continue;
    }
    finish('note', knowledge, parsed.data.turns ?? [], undefined, cleanText(parsed.data.context) || undefined);
  }
  if (Array.isArray(ex.value)) problems.push('top-level array read as events');
  return { items: turns.length === 0 ? [] : items, parsed: true, problems };
}
