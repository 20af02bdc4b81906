// Phase 0's prompt: the transcript as the summary call shows it (turns as short labels T1, T2, ...
// so the parser, summarise.ts, can map sources back) and the schema that bounds its answer.
import type { ChatMessage, JsonSchema } from '../../ports';
import type { Id, Millis, Role } from '../types';
import { promptDate } from '../text';

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

export interface SummariseOptions {
  /** Ask for notes (instructions, feedback, knowledge to apply later). */
  includeNotes?: boolean;
  /** Position of the first turn in the whole session: labels stay the session's (chunked Phase 0). */
  offset?: number;
  /** Which part of the session this is (1-based) and of how many; absent for a whole session. */
  part?: { index: number; count: number };
  /** The most items one answer may hold (sized to the call's output cap, summary-plan.ts). */
  maxItems?: number;
}

/** Characters a memory sentence may take: two sentences, and a bound a small model cannot loop past. */
export const ITEM_CHARS = 240;

const sourceList = { type: 'array', items: { type: 'string', maxLength: 12 }, maxItems: 8 };
const sentence = { type: 'string', maxLength: ITEM_CHARS };

export function summarySchema(includeNotes = true, maxItems = 40): JsonSchema {
  const item = (extra: Record<string, unknown> = {}) => ({
    type: 'object',
    properties: { text: sentence, ...extra, turns: sourceList },
    required: ['text', 'turns'],
  });
  const list = (items: unknown, max: number) => ({ type: 'array', items, maxItems: Math.max(1, max) });
  const properties: Record<string, unknown> = {
    events: list(item({ about: { type: 'string', maxLength: 60 } }), maxItems),
    userTraits: list(item(), Math.ceil(maxItems / 2)),
    assistantTraits: list(item(), Math.ceil(maxItems / 4)),
  };
  if (includeNotes) {
    properties.notes = list(
      {
        type: 'object',
        properties: { context: sentence, knowledge: sentence, turns: sourceList },
        required: ['context', 'knowledge', 'turns'],
      },
      Math.ceil(maxItems / 4),
    );
    // Standing instructions: a list of their own, so a small model sorts them as it sorts traits.
    properties.instructions = list(item(), Math.ceil(maxItems / 4));
    // The per-message decision of conditional memory, made in this call (no call per message).
    properties.remember = list({ type: 'string', maxLength: 12 }, maxItems * 2);
  }
  // Last, so a truncated answer loses the topics (the fallback splitter covers that) before memories.
  properties.topics = list(
    {
      type: 'object',
      properties: { first: { type: 'string', maxLength: 12 }, last: { type: 'string', maxLength: 12 } },
      required: ['first', 'last'],
    },
    Math.ceil(maxItems / 2),
  );
  return { title: 'session_memories', type: 'object', properties, required: Object.keys(properties) };
}

export function turnLabel(i: number): string {
  return `T${i + 1}`;
}

function speakerName(t: TranscriptTurn): string {
  return t.speaker ? `${t.speaker} (${t.role})` : t.role;
}

/** One line of the transcript as the call shows it: a turn, or one part of a turn too long for one call. */
export interface TranscriptLine {
  /** Position of the turn in the session. */
  turn: number;
  text: string;
  /** This is part `index` of `count` of its turn. */
  part?: { index: number; count: number };
}

/**
 * Words of an assistant turn the summary is shown: its start (what it said about itself, what it
 * agreed to), not a long answer whole; the user's turns are always shown whole. A long chat of
 * 300-word replies needs a third of the calls (docs/METHOD.md 1.2).
 */
export const ASSISTANT_WORDS = 100;

/** A turn's text as the summary shows it. */
export function summaryText(t: Pick<TranscriptTurn, 'role' | 'text'>): string {
  if (t.role !== 'assistant') return t.text;
  const words = t.text.trim().split(/\s+/);
  return words.length > ASSISTANT_WORDS ? `${words.slice(0, ASSISTANT_WORDS).join(' ')} …` : t.text;
}

export function transcriptLine(t: TranscriptTurn, line: TranscriptLine): string {
  const part = line.part ? ` (part ${line.part.index} of ${line.part.count})` : '';
  return `${turnLabel(line.turn)}${part} [${speakerName(t)}, ${promptDate(t.time)}]: ${line.text}`;
}

export function summariseMessages(
  turns: readonly TranscriptTurn[],
  options: SummariseOptions = {},
  lines?: readonly TranscriptLine[],
): ChatMessage[] {
  const includeNotes = options.includeNotes ?? true;
  const offset = options.offset ?? 0;
  const shown = lines ?? turns.map((t, i): TranscriptLine => ({ turn: offset + i, text: summaryText(t) }));
  const transcript = shown.map((l) => transcriptLine(turns[l.turn - offset]!, l)).join('\n');
  const first = turnLabel(shown[0]?.turn ?? offset);
  const last = turnLabel(shown[shown.length - 1]?.turn ?? offset);
  const part = options.part && options.part.count > 1 ? options.part : undefined;
  const system = [
    'You keep the long-term memory of a conversational assistant.',
    part
      ? `Below is part ${part.index} of ${part.count} of a long conversation (turns ${first} to ${last}). Write down what is worth remembering in later conversations from this part.`
      : 'Read the conversation and write down what is worth remembering in later conversations.',
    options.maxItems !== undefined ? `Write at most ${options.maxItems} events, each a different fact; never repeat an item.` : '',
    '- events: short, self-contained sentences about something that happened, was done, planned or said',
    '  (name who it is about; "about" is "user", "assistant" or a name).',
    '- userTraits: lasting facts about the user: preferences, habits, personality, circumstances.',
    '- assistantTraits: what the assistant said about itself or agreed to be like.',
    includeNotes
      ? '- notes: feedback or knowledge the user gave that should change future replies where it applies; context = why, knowledge = what to do.'
      : '',
    includeNotes
      ? '- instructions: standing instructions for every later reply (length, tone, language, what to call the user), in the user\'s own words to Tealeaf, like "Keep your answers short."; a request about this answer only is none.'
      : '',
    includeNotes
      ? "- remember: the labels of the user's turns worth remembering: a request or instruction for Tealeaf, feedback on its replies, or knowledge about the user worth keeping. Leave out simple questions and small talk. Notes come only from these turns."
      : '',
    'Every item lists in "turns" the labels (like "T3") of the turns it comes from.',
    `- topics: the conversation divided into runs of consecutive turns about one subject, in order; each gives the labels of its first and last turn, like {"first": "${first}", "last": "${turnLabel((shown[0]?.turn ?? offset) + 5)}"}. Start a new topic where the subject changes. Together they cover every turn from ${first} to ${last} exactly once, with no gaps and no overlaps.`,
    // Second person: the user reads these memories in the explorer, and "You ..." reads as being remembered.
    'Write each sentence so it makes sense alone. Speak to the user as "you" ("You started swimming.", "Your sister Ana..."), call the assistant "Tealeaf" and name anyone else; notes and instructions are addressed to Tealeaf. Skip small talk and greetings.',
    'Answer with JSON only.',
  ]
    .filter(Boolean)
    .join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: `Conversation:\n${transcript}` },
  ];
}
