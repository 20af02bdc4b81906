// The words of the reply prompt: how memories, timelines, passages and notes are written into it,
// and the system prompt around them (docs/METHOD.md 1.6).
import type { Id, Memory, Millis, Timeline } from '../types';
import { promptItem } from '../retrieval/budget';
import { promptDate } from '../text';
import { pastNote } from '../past';

export const DEFAULT_PERSONA = 'You are Tealeaf, a warm and thoughtful companion who talks with one person over months and years.';

export function memoryLine(m: Memory, memoriesById?: ReadonlyMap<Id, Memory>): string {
  return `${promptDate(m.time)}: ${m.text}${pastNote(m, memoriesById)}`;
}

export function segmentBlock(time: Millis, text: string): string {
  // Only the date as header: every header word is paid from the budget.
  return `${promptDate(time)}:\n${text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}`;
}

export function noteBlock(t: Timeline, note: string, memoriesById: ReadonlyMap<Id, Memory>): string {
  const first = memoriesById.get(t.memoryIds[0]!)?.time;
  const last = memoriesById.get(t.memoryIds[t.memoryIds.length - 1]!)?.time;
  if (first === undefined || last === undefined) return note;
  const span = promptDate(first) === promptDate(last) ? promptDate(first) : `${promptDate(first)} to ${promptDate(last)}`;
  return `${span}: ${note}`;
}

/** How the model is told to read what memory adds to the person's messages (layout.ts). */
const MEMORY_GUIDE =
  "Before some of the person's messages, between <memory> and </memory>, is what you remember that may bear " +
  'on it: single memories, timelines of related memories (oldest first) and excerpts of past conversations, ' +
  'in the order it happened, and parts of this conversation from before the messages you see. The person did ' +
  'not write it and does not see it. Use it only where it is relevant to what the person says now, and ignore ' +
  'anything that does not fit or would mislead. In these memories "you" is the person you are talking with and ' +
  '"Tealeaf" is you. Things marked as no longer true ("true until" a date) describe the past, not the present. ' +
  'Do not invent memories, and if the person states something about the past that contradicts what you ' +
  'remember, gently say so.';

/**
 * The system prompt: what holds for the whole chat, so it stays the same from one reply to the
 * next (a changed beginning makes the model read everything again).
 */
export function buildSystemPrompt(now: Millis, persona = DEFAULT_PERSONA, personaBlock = '', instructions = '', withMemory = true): string {
  const parts = [persona, `Today is ${promptDate(now)}.`];
  // The person's standing instructions first: they hold for every reply (instructions.ts).
  if (instructions) parts.push(instructions);
  if (personaBlock) parts.push(personaBlock);
  if (withMemory) parts.push(MEMORY_GUIDE);
  return parts.join('\n\n');
}

/** What memory adds to the person's message: memories of past chats, then this chat's earlier turns. */
export function memoryBlock(memoryItems: readonly string[], earlier: readonly string[]): string {
  const parts: string[] = [];
  if (memoryItems.length > 0) parts.push(`From earlier conversations:\n${memoryItems.map(promptItem).join('\n')}`);
  if (earlier.length > 0) parts.push(earlierBlock(earlier));
  return parts.join('\n\n');
}

/** Earlier turns of a long chat, recalled into the system prompt (chat-window.ts). */
export function earlierBlock(blocks: readonly string[]): string {
  return `Earlier in this conversation, before the messages you see, the person and you said (the parts that match what you talk about now):\n${blocks.join('\n')}`;
}
