// Chunked Phase 0: a session of any length is summarised in parts that each fit the
// model's window with room for an answer the output cap allows. A part holds as many turns as its
// answer can cover (about one memory per user turn) and its prompt can hold; a turn longer than
// one part is shown in pieces, each labelled with its turn, so nothing of it is cut. Labels stay
// the session's (T1 ... Tn), so the parts' answers merge with their turn references intact.
import type { ChatMessage, JsonSchema, ModelWindow } from '../../ports';
import { extractJson } from '../llm-output';
import { estimateTokens, estimateMessages, outputFor, withSchemaInstruction } from '../fit';
import { summariseMessages, summarySchema, summaryText, transcriptLine, type TranscriptLine, type TranscriptTurn } from './summary-prompt';

/** What one summarising call may write, where the engine allows it. */
export const SUMMARY_TOKENS = 1024;
/** Output tokens one memory takes in the answer (a sentence, its labels and the JSON around it). */
const ITEM_TOKENS = 45;
/** Output kept for the topics, the worth-remembering labels and the JSON frame. */
const FRAME_TOKENS = 90;
/** Tokens kept free in each part's prompt (the estimate is high already; labels and dates vary). */
const SLACK = 48;

export interface SummaryPart {
  /** Lines of the transcript (index into `lines`) this part shows: [from, to). */
  from: number;
  to: number;
}

export interface SummaryPlan {
  lines: TranscriptLine[];
  parts: SummaryPart[];
  /** The output cap of each call, and the items it may hold. */
  maxTokens: number;
  maxItems: number;
  /** Characters of a turn one line may show (longer turns are shown in pieces). */
  lineChars: number;
}

/** Items an answer of `maxTokens` can hold. */
export function itemsFor(maxTokens: number): number {
  return Math.max(2, Math.floor((maxTokens - FRAME_TOKENS) / ITEM_TOKENS));
}

/** A turn as lines of at most `maxChars`, cut at a space (or anywhere in a very long word). */
export function linesOf(turn: number, text: string, maxChars: number): TranscriptLine[] {
  if (text.length <= maxChars) return [{ turn, text }];
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    const space = rest.lastIndexOf(' ', maxChars);
    const cut = space > maxChars / 2 ? space : maxChars;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) pieces.push(rest);
  return pieces.map((p, i) => ({ turn, text: p, part: { index: i + 1, count: pieces.length } }));
}

/**
 * The parts of a session for this window. `lineChars` fixes how long turns are cut: a resumed job
 * passes the value it planned with, so its parts mean the same lines after a reload.
 */
export function planSummary(
  turns: readonly TranscriptTurn[],
  window: ModelWindow,
  options: {
    includeNotes: boolean;
    /** Tokens of a part's prompt besides its transcript (instructionsFor); estimated when absent. */
    instructions?: number;
    /** A resumed job's plan: how long turns were cut, and where its parts start (line indexes). */
    lineChars?: number;
    starts?: readonly number[];
  },
): SummaryPlan {
  const maxTokens = outputFor(window, SUMMARY_TOKENS);
  const maxItems = itemsFor(maxTokens);
  const instructions = options.instructions ?? estimateMessages(partInstructions(turns, window, options.includeNotes, maxItems));
  const room = Math.max(64, window.contextTokens - maxTokens - instructions - SLACK);
  // A line takes at most half a part: half its tokens in characters is that even for scripts
  // of more than one token a character (the estimate gives CJK 1.3).
  const lineChars = options.lineChars ?? Math.max(100, Math.floor(room / 2));
  const lines = turns.flatMap((t, i) => linesOf(i, summaryText(t), lineChars));
  if (
    options.starts &&
    options.starts.length > 0 &&
    options.starts.every((x, i) => x < lines.length && (i === 0 ? x === 0 : x > options.starts![i - 1]!))
  ) {
    const starts = options.starts;
    const parts = starts.map((from, i) => ({ from, to: starts[i + 1] ?? lines.length }));
    return { lines, parts, maxTokens, maxItems, lineChars };
  }
  const parts: SummaryPart[] = [];
  let from = 0;
  while (from < lines.length) {
    let to = from;
    let tokens = 0;
    const users = new Set<number>();
    while (to < lines.length) {
      const line = lines[to]!;
      const cost = estimateTokens(transcriptLine(turns[line.turn]!, line)) + 1;
      const isUser = turns[line.turn]!.role === 'user';
      // Room in the prompt, and in the answer: about one memory per user turn.
      if (to > from && (tokens + cost > room || (isUser && !users.has(line.turn) && users.size >= maxItems))) break;
      tokens += cost;
      if (isUser) users.add(line.turn);
      to++;
    }
    parts.push({ from, to });
    from = to;
  }
  return { lines, parts, maxTokens, maxItems, lineChars };
}

/**
 * A part's prompt without its transcript: the instructions, and the schema where the engine
 * writes it into the prompt (count it with the model's tokenizer where it has one).
 */
export function partInstructions(
  turns: readonly TranscriptTurn[],
  window: ModelWindow,
  includeNotes: boolean,
  maxItems: number,
): ChatMessage[] {
  const messages = summariseMessages(
    turns.slice(0, 1).map((t) => ({ ...t, text: '' })),
    { includeNotes, part: { index: 99, count: 99 }, maxItems },
  );
  return window.schemaInPrompt ? withSchemaInstruction(messages, summarySchema(includeNotes, maxItems)) : messages;
}

/** The turns a part shows (each once, in order) and the position of the first in the session. */
export function partTurns(
  plan: SummaryPlan,
  part: SummaryPart,
  turns: readonly TranscriptTurn[],
): { turns: TranscriptTurn[]; offset: number } {
  const shown = plan.lines.slice(part.from, part.to);
  const offset = shown[0]?.turn ?? 0;
  const last = shown[shown.length - 1]?.turn ?? offset;
  return { turns: turns.slice(offset, last + 1), offset };
}

/**
 * The lists whose bound says the part was too dense: the events and the person's traits, bounded
 * by what the answer can hold. Notes, instructions and Tealeaf's own traits have small bounds (a
 * quarter) that an ordinary answer fills without having more to say.
 */
const MEMORY_LISTS = ['events', 'userTraits'];

/**
 * Whether an answer filled a memory list to the bound its schema set: the model had to stop
 * there, so the part may hold more than it could write (a dense conversation, or two people who
 * both tell about themselves, as in an imported dialogue).
 */
export function answerFilled(raw: string, schema: JsonSchema): boolean {
  const ex = extractJson(raw);
  if (!ex.found || typeof ex.value !== 'object' || ex.value === null || Array.isArray(ex.value)) return false;
  const value = ex.value as Record<string, unknown>;
  const properties = (schema.properties ?? {}) as Record<string, { maxItems?: unknown }>;
  return MEMORY_LISTS.some((key) => {
    const list = value[key];
    const max = properties[key]?.maxItems;
    return Array.isArray(list) && typeof max === 'number' && list.length >= max;
  });
}

/**
 * The part's lines split in two at the turn boundary nearest its middle: the start of the second
 * half (a line index), or undefined when the part shows a single turn.
 */
export function splitPoint(plan: SummaryPlan, part: SummaryPart): number | undefined {
  const middle = (part.from + part.to) / 2;
  let best: number | undefined;
  for (let i = part.from + 1; i < part.to; i++) {
    if (plan.lines[i]!.turn === plan.lines[i - 1]!.turn) continue;
    if (best === undefined || Math.abs(i - middle) < Math.abs(best - middle)) best = i;
  }
  return best;
}
