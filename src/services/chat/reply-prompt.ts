// What a reply is asked with: the port the memory method plugs into, and the plain prompt used
// when memory is off or not ready.
import type { ChatMessage, LanguageModel } from '../../ports';
import type { Millis, Session, Turn, UsedMemory } from '../../memory/types';

/** The messages of one reply call, and what of memory went into them (shown under the reply). */
export interface ReplyPrompt {
  messages: ChatMessage[];
  usedMemory?: UsedMemory;
}

/** Builds the prompt for a reply: the memory method plugs in here (retrieval, timelines). */
export interface TurnPreparer {
  prepare(input: { session: Session; history: Turn[]; now: Millis; llm: LanguageModel; signal: AbortSignal }): Promise<ReplyPrompt>;
}

const HISTORY_TURNS = 12;

export function defaultSystemPrompt(now: Millis): string {
  return [
    "You are Tealeaf, a warm, concise personal companion. You run entirely on the user's own device;",
    'nothing they say leaves it. Answer in plain, friendly language; use markdown only when it helps.',
    `Today is ${new Date(now).toDateString()}.`,
  ].join(' ');
}

/** Recent dialogue as chat messages (interrupted replies included: they are what the user saw). */
export function historyMessages(turns: Turn[]): ChatMessage[] {
  return turns
    .filter((t) => t.text.trim().length > 0)
    .slice(-HISTORY_TURNS)
    .map((t) => ({ role: t.role, content: t.text }));
}

/**
 * A prompt without memory: for a temporary chat, and when "Use memories" is off. The user's own
 * persona still opens it; nothing remembered (no retrieval, no persona bank) goes in.
 */
export function memorylessPreparer(persona: () => string | undefined): TurnPreparer {
  return {
    async prepare({ history, now }) {
      const own = persona();
      const system = own ? `${own}\n\nToday is ${new Date(now).toDateString()}.` : defaultSystemPrompt(now);
      return { messages: [{ role: 'system', content: system }, ...historyMessages(history)] };
    },
  };
}

export const plainPreparer: TurnPreparer = memorylessPreparer(() => undefined);
