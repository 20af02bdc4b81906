// Where things go in the reply prompt, so the model reads again only what is new (docs/METHOD.md
// 1.6, "A prompt whose beginning stays"). The system prompt holds what stays for the whole chat
// (persona, date, standing instructions, facts about the person); then the dialogue exactly as it
// was sent before; then the person's new message with what memory found for it. The previous
// request is extended as it was sent, so an engine that keeps what it read (every engine Tealeaf
// runs on) reads only the reply it wrote and the new message. When the dialogue no longer fits,
// the window moves in one large step: the oldest part goes at once (the recall of earlier turns
// brings back what matters of it), and the engine reads the whole prompt once, not every turn.
import type { ChatMessage } from '../../ports';
import type { Id, Memory } from '../types';
import { estimateTokens, MESSAGE_OVERHEAD, REPLY_PRIMER } from '../fit';
import type { SentChat, SentMessage } from './sent-chat';
import type { DialogueTurn } from './dialogue';

/** What memory adds to the person's newest message. */
export interface TurnBlock {
  /** The block's text (empty: nothing to add). */
  text: string;
  memories: Array<{ id: Id; text: string }>;
  segments: Array<{ id: Id; text: string }>;
  earlierTurnIds: Id[];
  /** Strong matches among the turns left out that did not fit: worth moving the window for. */
  missed?: number;
}

/** What earlier messages of the prompt already hold: the block of a new one does not repeat it. */
export interface InPrompt {
  memoryIds: ReadonlySet<Id>;
  segmentIds: ReadonlySet<Id>;
  /** Turns of the chat in the prompt, as messages or recalled. */
  turnIds: ReadonlySet<Id>;
}

export interface LayoutInput {
  head: string;
  /** The chat as stored, its last turn the person's new message. */
  dialogue: readonly DialogueTurn[];
  /** The previous request of this chat, as it was sent. */
  sent?: SentChat;
  memoriesById: ReadonlyMap<Id, Memory>;
  /** A passage's text now (a forgotten line's passage is rebuilt under the same id; gone: undefined). */
  segmentText(id: Id): string | undefined;
  /** Tokens the whole prompt may take. */
  tokens: number;
  /** The model's count over the estimate, as last measured (SentChat.ratio); 1 where unknown. */
  ratio?: number;
  /** Tokens the new message's block needs: less room than this and the window moves. */
  blockTokens: number;
  /** Tokens the block may take where the room allows, leaving `reserve` for the next turn. */
  blockMax: number;
  /** The same when the whole prompt is read anyway (a fresh start). */
  freshBlockMax: number;
  /** Tokens kept free for the next turn (its reply and its block), so that it extends this one. */
  reserve: number;
  /** Share of the room a fresh start keeps of the dialogue, so that many turns fit before the next. */
  keepShare: number;
  /**
   * The block for the newest message: `room` tokens, `left` the turns not in the prompt; `fresh`
   * when the whole prompt is read anyway (recalled earlier turns may take more then); `wide` when
   * an extended prompt gives it all the room left, for a strong match left out otherwise (recalled
   * earlier turns may take all of it).
   */
  block(room: number, inPrompt: InPrompt, left: readonly DialogueTurn[], fresh: boolean, wide?: boolean): TurnBlock;
}

export interface Layout {
  messages: ChatMessage[];
  sent: SentChat;
  /** Whether this request extends the previous one exactly (the engine reads only what is new). */
  extended: boolean;
  block: TurnBlock;
  /** What earlier messages' blocks still in the prompt hold. */
  carried: { memoryIds: Id[]; segmentIds: Id[]; earlierTurnIds: Id[] };
  /** Turns of the chat sent as messages, and turns before them left out. */
  recent: number;
  left: number;
}

const estimate = (content: string) => MESSAGE_OVERHEAD + estimateTokens(content);

/** The person's message with what memory adds, marked so the model does not take it for their words. */
export function withBlock(text: string, block: string): string {
  return block ? `<memory>\n${block}\n</memory>\n\n${text}` : text;
}

/** Index of the dialogue turn where `sent` starts, if the previous request still holds as sent. */
function stillHolds(input: LayoutInput): number | undefined {
  const { sent, dialogue, head, memoriesById } = input;
  if (!sent || sent.head !== head || sent.messages.length === 0) return undefined;
  const first = sent.messages[0]!.turnId;
  const at = first === undefined ? -1 : dialogue.findIndex((t) => t.id === first);
  // The new message, at least, comes after what was sent.
  if (at < 0 || at + sent.messages.length >= dialogue.length) return undefined;
  const ids = new Set(dialogue.map((t) => t.id));
  for (const [i, m] of sent.messages.entries()) {
    const t = dialogue[at + i]!;
    if (t.id !== m.turnId || t.role !== m.role || t.text !== m.text) return undefined;
    // A memory edited, deleted or forgotten since: what was sent with it must not be sent again.
    if (m.memories?.some((x) => memoriesById.get(x.id)?.text !== x.text)) return undefined;
    if (m.segments?.some((x) => input.segmentText(x.id) !== x.text)) return undefined;
    // A recalled line forgotten since (forgotten lines leave the dialogue).
    if (m.earlierTurnIds?.some((id) => !ids.has(id))) return undefined;
  }
  return at;
}

function inPromptOf(messages: readonly SentMessage[], turns: readonly DialogueTurn[]): InPrompt {
  return {
    memoryIds: new Set(messages.flatMap((m) => (m.memories ?? []).map((x) => x.id))),
    segmentIds: new Set(messages.flatMap((m) => (m.segments ?? []).map((x) => x.id))),
    turnIds: new Set([...turns.flatMap((t) => (t.id ? [t.id] : [])), ...messages.flatMap((m) => m.earlierTurnIds ?? [])]),
  };
}

const plain = (t: DialogueTurn): SentMessage => ({ ...(t.id ? { turnId: t.id } : {}), role: t.role, text: t.text, content: t.text });

function finish(input: LayoutInput, before: SentMessage[], from: number, extended: boolean, room: number, wide = false): Layout {
  const { dialogue } = input;
  const newest = dialogue[dialogue.length - 1]!;
  const middle = dialogue.slice(from + before.length, -1).map(plain);
  const prior = [...before, ...middle];
  const inPrompt = inPromptOf(prior, dialogue.slice(from));
  const block =
    newest.role === 'user'
      ? input.block(room, inPrompt, dialogue.slice(0, from), !extended, wide)
      : { text: '', memories: [], segments: [], earlierTurnIds: [] };
  const last: SentMessage = {
    ...plain(newest),
    content: withBlock(newest.text, block.text),
    ...(block.memories.length ? { memories: block.memories } : {}),
    ...(block.segments.length ? { segments: block.segments } : {}),
    ...(block.earlierTurnIds.length ? { earlierTurnIds: block.earlierTurnIds } : {}),
  };
  const sent: SentChat = { head: input.head, messages: [...prior, last] };
  return {
    messages: [{ role: 'system', content: input.head }, ...sent.messages.map((m) => ({ role: m.role, content: m.content }))],
    sent,
    extended,
    block,
    carried: {
      memoryIds: [...inPrompt.memoryIds],
      segmentIds: [...inPrompt.segmentIds],
      earlierTurnIds: prior.flatMap((m) => m.earlierTurnIds ?? []),
    },
    recent: dialogue.length - from,
    left: from,
  };
}

/**
 * The reply prompt: the previous request extended when it still holds and the new message's block
 * still fits; else a fresh start that keeps the newest part of the chat.
 */
export function layReply(input: LayoutInput): Layout {
  const { dialogue, head } = input;
  // Planned as the model counts, where it was measured: the estimate alone would leave a fifth of
  // an English prompt's window unused and move the window that much sooner.
  const ratio = Math.min(1, Math.max(0.5, input.ratio ?? 1));
  const cost = (content: string) => Math.ceil(estimate(content) * ratio);
  const newest = dialogue[dialogue.length - 1];
  if (!newest) {
    const none: TurnBlock = { text: '', memories: [], segments: [], earlierTurnIds: [] };
    const sent: SentChat = { head, messages: [] };
    return {
      messages: [{ role: 'system', content: head }],
      sent,
      extended: false,
      block: none,
      carried: { memoryIds: [], segmentIds: [], earlierTurnIds: [] },
      recent: 0,
      left: 0,
    };
  }
  const fixed = REPLY_PRIMER + cost(head);
  const at = stillHolds(input);
  if (at !== undefined) {
    const before = input.sent!.messages;
    const middle = dialogue.slice(at + before.length);
    const used = fixed + before.reduce((a, m) => a + cost(m.content), 0) + middle.reduce((a, t) => a + cost(t.text), 0);
    const room = input.tokens - used;
    if (room >= input.blockTokens) {
      const extended = finish(input, [...before], at, true, blockRoom(input, room));
      if (!extended.block.missed) return extended;
      // The person asks about something said earlier that does not fit in the block's room: the
      // block may take all the room left this once (the next turn moves the window), which the
      // engine reads as new; only when even that leaves it out, one full read with room for it,
      // rather than an answer without it.
      const wide = finish(input, [...before], at, true, room, true);
      if (!wide.block.missed) return wide;
    }
  }
  // A fresh start: the newest turns that fit in a share of the room (starting on the person's turn),
  // so the next many turns extend it before the window moves again.
  const room = input.tokens - fixed - input.blockTokens;
  const keep = Math.max(cost(newest.text), Math.floor(room * input.keepShare));
  let from = dialogue.length - 1;
  let used = cost(newest.text);
  while (from > 0 && used + cost(dialogue[from - 1]!.text) <= keep) used += cost(dialogue[--from]!.text);
  while (from < dialogue.length - 1 && dialogue[from]!.role === 'assistant') used -= cost(dialogue[from++]!.text);
  return finish(input, [], from, false, Math.max(0, blockRoom(input, input.tokens - fixed - used, input.freshBlockMax)));
}

/** The block's room: what it needs, and more up to its most while the next turn keeps its room. */
function blockRoom(input: LayoutInput, room: number, most = input.blockMax): number {
  return Math.min(room, Math.max(input.blockTokens, Math.min(most, room - input.reserve)));
}
