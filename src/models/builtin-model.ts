// The browser's own language model through the Prompt API (`LanguageModel` in recent Chrome):
// nothing to download from us, the browser fetches and keeps its model. Replies stream; memory
// calls use the API's structured output (`responseConstraint`, a JSON schema).
// The API is reached through `globalThis.LanguageModel`; its shape is declared here (not every
// TypeScript DOM library has it yet).

import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../ports';

export type BuiltinAvailability = 'unavailable' | 'downloadable' | 'downloading' | 'available';

interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

interface PromptSession {
  prompt(input: string | PromptMessage[], options?: { signal?: AbortSignal; responseConstraint?: unknown }): Promise<string>;
  promptStreaming(input: string | PromptMessage[], options?: { signal?: AbortSignal }): ReadableStream<string>;
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

  async chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    const { session, last } = await this.session(messages, options.signal);
    let text = '';
    try {
      const reader = session.promptStreaming(last, { signal: options.signal }).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        // Early versions sent the whole text so far with each chunk, later ones only the new part.
        const delta = value.startsWith(text) && text !== '' ? value.slice(text.length) : value;
        if (!delta) continue;
        text += delta;
        options.onToken?.(delta);
      }
    } catch (e) {
      if (!options.signal?.aborted) throw e;
    } finally {
      session.destroy();
    }
    return text;
  }

  async json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    const { session, last } = await this.session(messages, options.signal);
    try {
      return await session.prompt(last, { signal: options.signal, responseConstraint: schema });
    } finally {
      session.destroy();
    }
  }
}
