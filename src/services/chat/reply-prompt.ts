// What a reply is asked with: the port the memory method plugs into, and the plain prompt used
// when memory is off or not ready.
import type { ChatMessage, LanguageModel } from '../../ports';
import type { Millis, Session, Turn, UsedMemory } from '../../memory/types';
import { estimateMessages, fitPrompt, outputFor, windowOf } from '../../memory/fit';
import { layReply, type Layout, type TurnBlock } from '../../memory/recall/layout';
import { SentChats } from '../../memory/recall/sent-chat';
import { MIN_REPLY_TOKENS, REPLY_TOKENS } from '../../memory/recall/turn';
import { isForgotten } from '../../memory/forget/lines';

/** The messages of one reply call, and what of memory went into them (shown under the reply). */
export interface ReplyPrompt {
  messages: ChatMessage[];
  usedMemory?: UsedMemory;
  /** The reply's output cap, sized so prompt plus reply fit the model's window. */
  maxTokens?: number;
  /** Tokens of the prompt, and those the model reads for it if it kept the chat's previous request. */
  promptTokens?: number;
  readTokens?: number;
}

export interface PrepareInput {
  session: Session;
  history: Turn[];
  now: Millis;
  llm: LanguageModel;
  signal: AbortSignal;
  /** Below 1 after the engine refused the prompt as too long: build it that much smaller. */
  budgetScale?: number;
  /** The turns of the ended chats this one follows on from (follow-on.ts), oldest first: dialogue before `history`. */
  earlier?: Turn[];
}

/** Builds the prompt for a reply: the memory method plugs in here (retrieval, timelines). */
export interface TurnPreparer {
  prepare(input: PrepareInput): Promise<ReplyPrompt>;
}

export function defaultSystemPrompt(now: Millis): string {
  return [
    "You are Tealeaf, a warm, concise personal companion. You run entirely on the user's own device;",
    'nothing they say leaves it. Answer in plain, friendly language; use markdown only when it helps.',
    `Today is ${new Date(now).toDateString()}.`,
  ].join(' ');
}

/**
 * The dialogue a reply sees: turns with text (interrupted replies included: they are what the user
 * saw), but no line the user forgot (src/memory/forget/), and no memory command nor its answer
 * (src/services/commands/: done from the store; "forget that I hate cilantro" must not go to the
 * model word for word once done): neither sent as a recent turn nor recalled from earlier in the
 * chat (chat-window.ts), nor searched with. Memorising leaves them out the same way (memorise.ts).
 */
export function dialogueOf(turns: readonly Turn[]): Array<{ id: string; role: Turn['role']; text: string; time: Millis }> {
  const answered = new Set(turns.filter((t) => t.command !== undefined).map((t) => t.index - 1));
  return turns
    .filter((t) => t.text.trim().length > 0 && !isForgotten(t) && t.command === undefined && !(t.role === 'user' && answered.has(t.index)))
    .map((t) => ({ id: t.id, role: t.role, text: t.text, time: t.time }));
}

/**
 * The dialogue of a reply's prompt: the turns of the chats it follows on from, each read by
 * dialogueOf on its own (turn positions are per chat), then the chat's own.
 */
export function replyDialogue(input: Pick<PrepareInput, 'history' | 'earlier'>): ReturnType<typeof dialogueOf> {
  const chats = new Map<string, Turn[]>();
  for (const t of input.earlier ?? []) chats.set(t.sessionId, [...(chats.get(t.sessionId) ?? []), t]);
  return [...[...chats.values()].flatMap((turns) => dialogueOf(turns)), ...dialogueOf(input.history)];
}

/**
 * A prompt without memory: for a temporary chat, and when "Use memories" is off. The user's own
 * persona still opens it; nothing remembered (no retrieval, no persona bank) goes in.
 */
export function memorylessPreparer(persona: () => string | undefined): TurnPreparer {
  // Each chat's last request as sent: the next extends it, as with memory (recall/layout.ts).
  const sentChats = new SentChats();
  return {
    async prepare({ session, history, now, llm, signal, budgetScale, earlier }) {
      const own = persona();
      const system = own ? `${own}\n\nToday is ${new Date(now).toDateString()}.` : defaultSystemPrompt(now);
      // Only this chat (and the ended chats it follows on from), as much of its end as fits the
      // window (nothing recalled from its start: with memory off nothing is searched).
      const dialogue = replyDialogue({ history, earlier });
      const maxTokens = outputFor(windowOf(llm), REPLY_TOKENS);
      const sent = sentChats.get(session.id);
      let layout: Layout | undefined;
      const fitted = await fitPrompt(
        {
          llm,
          output: maxTokens,
          minOutput: MIN_REPLY_TOKENS,
          signal,
          build: (tokens) => {
            layout = layReply({
              head: system,
              dialogue,
              sent,
              ratio: sent?.ratio,
              memoriesById: new Map(),
              segmentText: () => undefined,
              tokens,
              blockTokens: 0,
              blockMax: 0,
              freshBlockMax: 0,
              reserve: 0,
              // No recall brings back what a fresh start leaves out: it keeps half the chat.
              keepShare: 0.5,
              block: () => NO_BLOCK,
            });
            return layout.messages;
          },
        },
        budgetScale,
      );
      const ratio = fitted.exact ? Math.min(1, fitted.promptTokens / Math.max(1, estimateMessages(fitted.messages))) : undefined;
      sentChats.set(session.id, { ...layout!.sent, ...(ratio ? { ratio } : {}) });
      const readTokens = layout!.extended
        ? Math.min(fitted.promptTokens, Math.ceil(estimateMessages(fitted.messages.slice(-1)) * (ratio ?? 1)))
        : fitted.promptTokens;
      return { messages: fitted.messages, maxTokens: fitted.maxTokens, promptTokens: fitted.promptTokens, readTokens };
    },
  };
}

const NO_BLOCK: TurnBlock = { text: '', memories: [], segments: [], earlierTurnIds: [] };

export const plainPreparer: TurnPreparer = memorylessPreparer(() => undefined);
