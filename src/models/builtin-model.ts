// The browser's own language model through the Prompt API (`LanguageModel` in recent Chrome):
// nothing to download from us, the browser fetches and keeps its model. Replies stream; memory
// calls use the API's structured output (`responseConstraint`, a JSON schema), streamed too.
// The API is reached through `globalThis.LanguageModel`; its shape is declared here (not every
// TypeScript DOM library has it yet).

import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../ports';
import { CHAT_LIMITS, JSON_LIMITS, type CallLimits } from './call-limits';

export type BuiltinAvailability = 'unavailable' | 'downloadable' | 'downloading' | 'available';

interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

interface PromptSession {
  prompt(input: string | PromptMessage[], options?: { signal?: AbortSignal; responseConstraint?: unknown }): Promise<string>;
  promptStreaming(
    input: string | PromptMessage[],
    options?: { signal?: AbortSignal; responseConstraint?: unknown },
  ): ReadableStream<string>;
  destroy(): void;
}

interface DownloadMonitor {
  addEventListener(type: 'downloadprogress', listener: (e: { loaded: number }) => void): void;
}

/** The static side of the Prompt API that this module uses. */
export interface PromptApi {
  availability(options?: Record<string, unknown>): Promise<BuiltinAvailability>;
  create(options?: {
    initialPrompts?: PromptMessage[];
    signal?: AbortSignal;
    monitor?: (m: DownloadMonitor) => void;
    expectedInputs?: unknown[];
    expectedOutputs?: unknown[];
  }): Promise<PromptSession>;
}

const LANGUAGES = { expectedInputs: [{ type: 'text', languages: ['en'] }], expectedOutputs: [{ type: 'text', languages: ['en'] }] };

/** The Prompt API of this browser, if it has one. */
export function promptApi(): PromptApi | undefined {
  const api = (globalThis as { LanguageModel?: unknown }).LanguageModel;
  if (!api || (typeof api !== 'function' && typeof api !== 'object')) return undefined;
  const candidate = api as Partial<PromptApi>;
  return typeof candidate.availability === 'function' && typeof candidate.create === 'function' ? (api as PromptApi) : undefined;
}

/** Whether the browser has a model, can download one, or has none. Never throws. */
export async function builtinAvailability(api = promptApi()): Promise<BuiltinAvailability> {
  if (!api) return 'unavailable';
  try {
    return await api.availability(LANGUAGES);
  } catch {
    return 'unavailable';
  }
}

export const BUILTIN_MODEL_ID = 'browser-builtin';

/**
 * The Prompt API keeps a conversation in a session: each call here opens a session with the
 * system prompt and the earlier dialogue, prompts the last user message, and closes it, so calls
 * never see each other's context.
 */
export class BuiltinModel implements LanguageModel {
  readonly modelId = BUILTIN_MODEL_ID;

  private constructor(private readonly api: PromptApi) {}

  /** Makes the browser's model ready (downloading it first if needed), reporting progress 0..1. */
  static async start(onProgress?: (fraction: number) => void, signal?: AbortSignal, api = promptApi()): Promise<BuiltinModel> {
    if (!api) throw new Error('This browser has no built-in language model (the Prompt API).');
    const session = await api.create({
      ...LANGUAGES,
      signal,
      monitor: (m) => m.addEventListener('downloadprogress', (e) => onProgress?.(Math.max(0, Math.min(1, e.loaded)))),
    });
    session.destroy();
    return new BuiltinModel(api);
  }

  private async session(messages: ChatMessage[], signal?: AbortSignal): Promise<{ session: PromptSession; last: string }> {
    const lastUser = messages.map((m) => m.role).lastIndexOf('user');
    const earlier = messages.filter((_, i) => i !== lastUser);
    // The API takes system text only at the start of a session.
    const system = earlier
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    const dialogue = earlier.filter((m) => m.role !== 'system');
    const initialPrompts: PromptMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), ...dialogue];
    const session = await this.api.create({ ...LANGUAGES, initialPrompts, signal });
    return { session, last: lastUser >= 0 ? messages[lastUser].content : '' };
  }

  chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    return this.stream(messages, options, CHAT_LIMITS);
  }

  json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    return this.stream(messages, { ...options, onToken: undefined }, JSON_LIMITS, schema);
  }

  /**
   * One streamed answer. The Prompt API takes no token limit, so the size and time limits stop a
   * model that writes on without end (JSON calls stream too, so they can be stopped early).
   */
  private async stream(messages: ChatMessage[], options: GenerateOptions, limits: CallLimits, schema?: JsonSchema): Promise<string> {
    const stop = new AbortController();
    let limit: Error | undefined;
    const halt = (reason: string) => {
      limit = new Error(`The browser's model ${reason}, so Tealeaf stopped it. Try again, or another model.`);
      stop.abort();
    };
    const timer = setTimeout(() => halt(`was still writing after ${Math.round(limits.totalMs / 60_000)} minutes`), limits.totalMs);
    const cancel = () => stop.abort();
    options.signal?.addEventListener('abort', cancel, { once: true });
    let text = '';
    try {
      const { session, last } = await this.session(messages, stop.signal);
      try {
        const reader = session
          .promptStreaming(last, { signal: stop.signal, ...(schema ? { responseConstraint: schema } : {}) })
          .getReader();
        while (!stop.signal.aborted) {
          const { value, done } = await reader.read();
          if (done) break;
          // Early versions sent the whole text so far with each chunk, later ones only the new part.
          const delta = value.startsWith(text) && text !== '' ? value.slice(text.length) : value;
          if (!delta) continue;
          text += delta;
          options.onToken?.(delta);
          if (text.length > limits.maxChars) halt(`wrote more than ${limits.maxChars.toLocaleString('en-US')} characters`);
        }
        if (stop.signal.aborted) void reader.cancel().catch(() => undefined);
      } finally {
        session.destroy();
      }
    } catch (e) {
      if (!limit && !options.signal?.aborted) throw e;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', cancel);
    }
    if (limit) throw limit;
    return text;
  }
}
