// What a reply is asked with: the port the memory method plugs into, and the plain prompt used
// when memory is off or not ready.
import type { ChatMessage, LanguageModel } from '../../ports';
import type { Millis, Session, Turn, UsedMemory } from '../../memory/types';
import { fitPrompt, MESSAGE_OVERHEAD, outputFor, REPLY_PRIMER, estimateTokens, windowOf } from '../../memory/fit';
import { chatWindow } from '../../memory/recall/chat-window';
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
 * saw), but no line the user forgot (src/memory/forget/): neither sent as a recent turn nor
 * recalled from earlier in the chat (chat-window.ts), nor searched with.
 */
export function dialogueOf(turns: readonly Turn[]): Array<{ id: string; role: Turn['role']; text: string; time: Millis }> {
  return turns
    .filter((t) => t.text.trim().length > 0 && !isForgotten(t))
    .map((t) => ({ id: t.id, role: t.role, text: t.text, time: t.time }));
}

/**
 * A prompt without memory: for a temporary chat, and when "Use memories" is off. The user's own
 * persona still opens it; nothing remembered (no retrieval, no persona bank) goes in.
 */
export function memorylessPreparer(persona: () => string | undefined): TurnPreparer {
  return {
    async prepare({ history, now, llm, signal, budgetScale }) {
      const own = persona();
      const system = own ? `${own}\n\nToday is ${new Date(now).toDateString()}.` : defaultSystemPrompt(now);
      // Only this chat, as much of its end as fits the window (nothing recalled from its start:
      // with memory off nothing is searched).
      const dialogue = dialogueOf(history);
      const maxTokens = outputFor(windowOf(llm), REPLY_TOKENS);
      const fitted = await fitPrompt(
        {
          llm,
          output: maxTokens,
          minOutput: MIN_REPLY_TOKENS,
          signal,
          build: (tokens) => {
            const room = tokens - estimateTokens(system) - MESSAGE_OVERHEAD - REPLY_PRIMER;
            const recent = chatWindow(dialogue, room, '', 0).recent;
            return [{ role: 'system', content: system }, ...recent.map((t) => ({ role: t.role, content: t.text }))];
          },
        },
        budgetScale,
      );
      return { messages: fitted.messages, maxTokens: fitted.maxTokens };
    },
  };
}

export const plainPreparer: TurnPreparer = memorylessPreparer(() => undefined);
