// The reply prompt as the engine last read it. Every engine Tealeaf runs on keeps what it read for
// the previous request (web-llm when the new request's messages, all but the last, equal the
// conversation it holds; llama.cpp and Ollama the longest common prefix): a prompt that extends
// the previous one exactly makes the model read only what is new before the first word.
import type { ChatMessage } from '../../ports';
import type { Id, Role } from '../types';

/** One message as it was sent, and the turn it stands for. */
export interface SentMessage {
  /** The stored turn (absent for a turn not yet stored). */
  turnId?: Id;
  role: Role;
  /** The turn's own text, to see whether it changed since. */
  text: string;
  /** What was sent: the text, with the memory recalled for it where it is the person's message. */
  content: string;
  /** Memories (and their text when sent) that the content holds: if one is edited or forgotten, it goes. */
  memories?: Array<{ id: Id; text: string }>;
  /** Passages of past chats the content holds, with their text when sent (a forgotten line changes it). */
  segments?: Array<{ id: Id; text: string }>;
  /** Earlier turns of the chat the content recalls: if one is forgotten, it goes. */
  earlierTurnIds?: Id[];
}

export interface SentChat {
  /** The system prompt: persona, date, standing instructions, facts about the person. */
  head: string;
  /** The dialogue after it, as sent, the last message the person's newest. */
  messages: SentMessage[];
  /**
   * The model's own count of this prompt over the estimate's (at most 1: the estimate is high on
   * purpose). The next layout plans with it, so the window is used as the model counts it.
   */
  ratio?: number;
}

/** The messages of a reply request for this state. */
export function sentMessages(sent: SentChat): ChatMessage[] {
  return [{ role: 'system', content: sent.head }, ...sent.messages.map((m) => ({ role: m.role, content: m.content }))];
}

/** The last request sent in each of the few chats used lately (kept in memory: a reload reads once). */
export class SentChats {
  private readonly bySession = new Map<string, SentChat>();
  constructor(private readonly max = 8) {}

  get(sessionId: string): SentChat | undefined {
    return this.bySession.get(sessionId);
  }

  set(sessionId: string, sent: SentChat | undefined): void {
    this.bySession.delete(sessionId);
    if (!sent) return;
    this.bySession.set(sessionId, sent);
    while (this.bySession.size > this.max) this.bySession.delete(this.bySession.keys().next().value!);
  }

  clear(): void {
    this.bySession.clear();
  }
}
