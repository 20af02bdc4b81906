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
  /** Memories (and their text as sent) that the content holds: if one is edited or forgotten, it goes. */
  memories?: Array<{ id: Id; text: string }>;
  /** Earlier turns of the chat the content recalls: if one is forgotten, it goes. */
  earlierTurnIds?: Id[];
}

export interface SentChat {
  /** The system prompt: persona, date, standing instructions, facts about the person. */
  head: string;
  /** The dialogue after it, as sent, the last message the person's newest. */
  messages: SentMessage[];
}

/** The messages of a reply request for this state. */
export function sentMessages(sent: SentChat): ChatMessage[] {
  return [{ role: 'system', content: sent.head }, ...sent.messages.map((m) => ({ role: m.role, content: m.content }))];
}
