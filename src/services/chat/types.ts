// The chat service's events and options (src/services/chat.ts).
import type { LanguageModel, Repository } from '../../ports';
import type { Job, Millis, Session, Turn } from '../../memory/types';
import type { TurnPreparer } from './reply-prompt';
import type { ChatCommands } from '../commands/memory-commands';
import type { ChatDevices } from '../sync';

export type ChatEvents = {
  sessions: Session[];
  turns: { sessionId: string; turns: Turn[] };
  /** One streaming reply changed (cheap, frequent). */
  turn: Turn;
  busy: { phase: 'idle' | 'remembering' | 'replying' };
  error: { message: string; /** the reply that failed, shown with its reason */ turnId?: string };
  /** A reply ended: whether at the model's token limit, mid-way (this tab saw it end so). */
  cut: { turnId: string; cut: boolean };
  /** A session ended and a memorising job was queued. */
  ended: { session: Session; job: Job };
  /** Something the user should know that is not an error (e.g. a new chat started). */
  notice: { message: string };
  /** The chat shown is temporary (kept in this page only) or not. */
  temporary: boolean;
};

export interface ChatOptions {
  repo: Repository;
  preparer: TurnPreparer;
  /** The prompt of a temporary chat, which neither uses nor makes memories (default: plain). */
  memoryless?: TurnPreparer;
  getModel: () => LanguageModel | undefined;
  idleGapMs: () => Millis;
  /** Sampling temperature for replies (the user's setting); undefined = the model's default. */
  temperature?: () => number | undefined;
  now?: () => Millis;
  /** How often a streaming reply is written to the store (a closed tab loses at most this much). */
  saveEveryMs?: number;
  /** Whether an ended session is queued for memorising (the memory-creation switch); default yes. */
  memorise?: () => boolean;
  /** Memory commands ("remember that …"), answered from the store with no model call. */
  commands?: ChatCommands;
  /** This device and the paired ones (sync): only this device's chats are continued and ended here. */
  devices?: () => Promise<ChatDevices>;
}
