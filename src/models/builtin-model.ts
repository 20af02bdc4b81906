// The browser's own language model through the Prompt API (`LanguageModel` in recent Chrome):
// nothing to download from us, the browser fetches and keeps its model. Replies stream; memory
// calls use the API's structured output (`responseConstraint`, a JSON schema), streamed too.
// The API is reached through `globalThis.LanguageModel`; its shape is declared here (not every
// TypeScript DOM library has it yet).

import {
  ContextOverflowError,
  type ChatMessage,
  type GenerateOptions,
  type JsonSchema,
  type LanguageModel,
  type ModelWindow,
} from '../ports';
import { CHAT_LIMITS, JSON_LIMITS, outputCap, type CallLimits } from './call-limits';

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
  /** The session's window in tokens (Infinity: no set limit); inputQuota in earlier versions. */
  readonly contextWindow?: number;
  readonly inputQuota?: number;
  /** Tokens the session holds already (its initial prompts); inputUsage in earlier versions. */
  readonly contextUsage?: number;
  readonly inputUsage?: number;
  /** Tokens `input` would take, without sending it; measureInputUsage in earlier versions. */
  measureContextUsage?(input: PromptMessage[], options?: { signal?: AbortSignal }): Promise<number>;
  measureInputUsage?(input: PromptMessage[], options?: { signal?: AbortSignal }): Promise<number>;
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
/** How long the measuring session outlives its last count (a call counts a few times, in a row). */
const METER_IDLE_MS = 30_000;

/**
 * The Prompt API keeps a conversation in a session, and what a session has read it does not read
 * again. A chat keeps its session: a reply whose messages are the session's conversation plus one
 * new message prompts only that message (the prompt layout extends the previous request exactly,
 * docs/METHOD.md 1.6); any other reply, and every structured call, opens a session of its own with
 * the system prompt and the earlier dialogue, so calls never see each other's context.
 */
export class BuiltinModel implements LanguageModel {
  readonly modelId = BUILTIN_MODEL_ID;
  /**
   * The session's window (contextWindow, or inputQuota in earlier versions), a quarter of it as the
   * output cap (the API takes no token limit: the window holds prompt and answer), exact counting
   * where the API measures. Undefined where the browser sets no finite window: callers assume the
   * smallest of the catalog.
   */
  readonly window?: ModelWindow;
  /** A blank session for measuring prompts (measuring changes nothing in it), let go when idle. */
  private meter?: Promise<PromptSession>;
  private meterIdle?: ReturnType<typeof setTimeout>;
  /** The chat's session and the conversation it holds (its prompts and its replies); none while a reply streams. */
  private kept?: { session: PromptSession; holds: ChatMessage[] };

  private constructor(
    private readonly api: PromptApi,
    contextTokens: number | undefined,
    measures: boolean,
  ) {
    if (contextTokens === undefined) return;
    this.window = { contextTokens, maxOutputTokens: outputCap(contextTokens) };
    if (measures) this.window.countTokens = (messages, signal) => this.measure(messages, signal);
  }

  /** Makes the browser's model ready (downloading it first if needed), reporting progress 0..1. */
  static async start(onProgress?: (fraction: number) => void, signal?: AbortSignal, api = promptApi()): Promise<BuiltinModel> {
    if (!api) throw new Error('This browser has no built-in language model (the Prompt API).');
    const session = await api.create({
      ...LANGUAGES,
      signal,
      monitor: (m) => m.addEventListener('downloadprogress', (e) => onProgress?.(Math.max(0, Math.min(1, e.loaded)))),
    });
    const window = session.contextWindow ?? session.inputQuota;
    const measures = typeof (session.measureContextUsage ?? session.measureInputUsage) === 'function';
    session.destroy();
    return new BuiltinModel(api, typeof window === 'number' && Number.isFinite(window) && window > 0 ? window : undefined, measures);
  }

  /**
   * The chat's kept session when `messages` extend what it holds by one message of the person's
   * (taken from the kept slot while the reply streams), else undefined and the kept one let go.
   */
  private continuing(messages: ChatMessage[]): { session: PromptSession; last: string } | undefined {
    const kept = this.kept;
    this.kept = undefined;
    if (!kept) return undefined;
    const last = messages[messages.length - 1];
    const extends_ =
      last?.role === 'user' &&
      messages.length === kept.holds.length + 1 &&
      kept.holds.every((m, i) => m.role === messages[i]!.role && m.content === messages[i]!.content);
    if (extends_) return { session: kept.session, last: last.content };
    kept.session.destroy();
    return undefined;
  }

  private async session(messages: ChatMessage[], signal?: AbortSignal): Promise<{ session: PromptSession; last: string }> {
    const { initialPrompts, last } = layout(messages);
    try {
      return { session: await this.api.create({ ...LANGUAGES, initialPrompts, signal }), last };
    } catch (e) {
      throw this.overflow(e) ?? e;
    }
  }

  /** The prompt's tokens as a call lays it out: the session's own usage plus all of it, measured. */
  private async measure(messages: ChatMessage[], signal?: AbortSignal): Promise<number> {
    const { initialPrompts, last } = layout(messages);
    clearTimeout(this.meterIdle);
    this.meter ??= this.api.create({ ...LANGUAGES });
    this.meterIdle = setTimeout(() => this.dropMeter(), METER_IDLE_MS);
    try {
      const meter = await this.meter;
      const input = [...initialPrompts, { role: 'user' as const, content: last }];
      const measured = meter.measureContextUsage
        ? await meter.measureContextUsage(input, { signal })
        : await meter.measureInputUsage!(input, { signal });
      return (meter.contextUsage ?? meter.inputUsage ?? 0) + measured;
    } catch (e) {
      // A meter that failed is not kept (the next count makes another).
      this.dropMeter();
      throw e;
    }
  }

  private dropMeter(): void {
    clearTimeout(this.meterIdle);
    void this.meter?.then((m) => m.destroy()).catch(() => undefined);
    this.meter = undefined;
  }

  /** The API's refusal of a prompt past the window (QuotaExceededError, with its counts where given). */
  private overflow(e: unknown): ContextOverflowError | undefined {
    if (!(e instanceof Error) || (e.name !== 'QuotaExceededError' && !/(input|prompt) is too large/i.test(e.message))) return undefined;
    const { requested, quota } = e as { requested?: unknown; quota?: unknown };
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
    return new ContextOverflowError(n(requested) ?? 0, n(quota) ?? this.window?.contextTokens ?? 0, "the browser's model");
  }

  chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    return this.stream(messages, options, CHAT_LIMITS, undefined, true);
  }

  json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    return this.stream(messages, { ...options, onToken: undefined }, JSON_LIMITS, schema);
  }

  /**
   * One streamed answer. The Prompt API takes no token limit, so the size and time limits stop a
   * model that writes on without end (JSON calls stream too, so they can be stopped early).
   */
  private async stream(
    messages: ChatMessage[],
    options: GenerateOptions,
    limits: CallLimits,
    schema?: JsonSchema,
    keep = false,
  ): Promise<string> {
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
      const { session, last } = (keep ? this.continuing(messages) : undefined) ?? (await this.session(messages, stop.signal));
      // Kept for the chat's next message only when the reply ended by itself: a stopped one leaves
      // the session holding an answer the chat does not have.
      let whole = false;
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
        else whole = true;
      } finally {
        if (keep && whole && !this.kept) this.kept = { session, holds: [...messages, { role: 'assistant', content: text }] };
        else session.destroy();
      }
    } catch (e) {
      if (!limit && !options.signal?.aborted) throw this.overflow(e) ?? e;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', cancel);
    }
    if (limit) throw limit;
    return text;
  }
}

/**
 * How a call lays messages out for the API: system text only at the start of a session (all of it
 * joined), the dialogue as initial prompts, the last user message as the prompt.
 */
function layout(messages: ChatMessage[]): { initialPrompts: PromptMessage[]; last: string } {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const earlier = messages.filter((_, i) => i !== lastUser);
  const system = earlier
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const dialogue = earlier.filter((m) => m.role !== 'system');
  const initialPrompts: PromptMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), ...dialogue];
  return { initialPrompts, last: lastUser >= 0 ? messages[lastUser].content : '' };
}
