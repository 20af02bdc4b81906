// An engine that keeps only one conversation's cache (web-llm, the CPU engine: any other request throws it away)
// makes every memorising call between two messages of a chat cost the chat's next reply a full
// read of its prompt. So on such an engine background calls wait until the chat pauses: no reply
// under way and none finished for a while. Replies never wait. Engines that keep a prefix per
// request (model servers) or a session per chat (the browser's model) are not held back.
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../ports';
import { Emitter } from '../emitter';

/** How long after a reply the chat counts as paused: about the time to read a reply and answer it. */
export const CHAT_PAUSE_MS = 120_000;

export interface ConversationFirstOptions {
  pauseMs?: number;
  now?: () => number;
}

/** Background work held back now: the app says why memorising has not gone on. */
export interface Hold {
  /** Background calls waiting for the chat to pause. */
  waiting: number;
  /** When the pause is reached if no reply comes first (epoch ms); undefined while a reply is under way. */
  until?: number;
}

export class ConversationFirst extends Emitter<{ hold: Hold }> {
  private replying = 0;
  private holding = 0;
  private lastReplyEnd = -Infinity;
  private waiters = new Set<() => void>();
  private readonly pauseMs: number;
  private readonly now: () => number;
  private readonly fronts = new WeakMap<LanguageModel, LanguageModel>();
  private readonly backs = new WeakMap<LanguageModel, LanguageModel>();

  constructor(options: ConversationFirstOptions = {}) {
    super();
    this.pauseMs = options.pauseMs ?? CHAT_PAUSE_MS;
    this.now = options.now ?? Date.now;
  }

  /** The model as the chat uses it: its replies mark the chat as under way. The same wrapper for the same model. */
  foreground(llm: LanguageModel | undefined): LanguageModel | undefined {
    if (!llm) return undefined;
    let front = this.fronts.get(llm);
    if (!front) {
      front = wrap(llm, {
        chat: async (messages, options) => {
          this.replying++;
          if (this.holding > 0) this.emit('hold', this.hold);
          try {
            return await llm.chat(messages, options);
          } finally {
            this.replying--;
            this.lastReplyEnd = this.now();
            this.wake();
          }
        },
      });
      this.fronts.set(llm, front);
    }
    return front;
  }

  /** The model as background work uses it: on a one-conversation engine each call waits for the chat to pause. */
  background(llm: LanguageModel | undefined): LanguageModel | undefined {
    if (!llm || !llm.keepsConversation) return llm;
    let back = this.backs.get(llm);
    if (!back) {
      back = wrap(llm, {
        chat: async (messages, options) => {
          await this.paused(options?.signal);
          return llm.chat(messages, options);
        },
        json: async (messages, schema, options) => {
          await this.paused(options?.signal);
          return llm.json(messages, schema, options);
        },
      });
      this.backs.set(llm, back);
    }
    return back;
  }

  /** Whether the chat has paused now. */
  get isPaused(): boolean {
    return this.replying === 0 && this.now() - this.lastReplyEnd >= this.pauseMs;
  }

  /** What is held back now (nothing waits: `waiting` 0). */
  get hold(): Hold {
    if (this.holding === 0) return { waiting: 0 };
    return { waiting: this.holding, until: this.replying > 0 ? undefined : this.lastReplyEnd + this.pauseMs };
  }

  /** Resolves once the chat has paused (at once if it has); rejects with the signal's reason when aborted. */
  async paused(signal?: AbortSignal): Promise<void> {
    if (this.isPaused) return;
    this.holding++;
    this.emit('hold', this.hold);
    try {
      await this.untilPaused(signal);
    } finally {
      this.holding--;
      this.emit('hold', this.hold);
    }
  }

  private async untilPaused(signal?: AbortSignal): Promise<void> {
    while (!this.isPaused) {
      signal?.throwIfAborted();
      const left = this.replying > 0 ? undefined : this.pauseMs - (this.now() - this.lastReplyEnd);
      await new Promise<void>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          signal?.removeEventListener('abort', aborted);
          resolve();
        };
        const aborted = () => {
          done();
          reject(signal?.reason);
        };
        // A reply under way: woken when it ends; else at the end of the pause, or by a new reply's end.
        const timer = left === undefined ? undefined : setTimeout(done, Math.max(0, left));
        this.waiters.add(done);
        signal?.addEventListener('abort', aborted, { once: true });
      });
    }
  }

  private wake(): void {
    // A reply began or ended: the time the held work may go on moved.
    if (this.holding > 0) this.emit('hold', this.hold);
    for (const w of [...this.waiters]) w();
  }
}

type Calls = Partial<Pick<LanguageModel, 'chat' | 'json'>>;

/** The model with some calls replaced; everything else (id, window, structured mode) read from it live. */
function wrap(llm: LanguageModel, calls: Calls): LanguageModel {
  return {
    get modelId() {
      return llm.modelId;
    },
    get structuredMode() {
      return llm.structuredMode;
    },
    get window() {
      return llm.window;
    },
    get keepsConversation() {
      return llm.keepsConversation;
    },
    ...(llm.setStructuredMode ? { setStructuredMode: (mode) => llm.setStructuredMode!(mode) } : {}),
    chat: calls.chat ?? ((messages: ChatMessage[], options?: GenerateOptions) => llm.chat(messages, options)),
    json: calls.json ?? ((messages: ChatMessage[], schema: JsonSchema, options?: GenerateOptions) => llm.json(messages, schema, options)),
  };
}
