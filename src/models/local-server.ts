// A language model served by a program on this computer through the OpenAI-compatible HTTP API
// (Ollama, LM Studio, llama.cpp's server, vLLM): chat streams over server-sent events, structured
// output uses `response_format` with a JSON schema where the server supports it. Only loopback
// addresses are accepted, so nothing leaves the device; the CSP allows exactly those (src/csp.js).
// Runs in the page, in workers and in Node (bench:qa): `fetch` can be injected.

import {
  ContextOverflowError,
  type AnswerFinish,
  type ChatMessage,
  type GenerateOptions,
  type JsonSchema,
  type LanguageModel,
  type ModelWindow,
  type StructuredMode,
} from '../ports';
import { CHAT_LIMITS, JSON_LIMITS, tokenBudget, type CallLimits } from './call-limits';
import { serverOverflow } from './overflow';
import { CallGuard, jsonLines, readText, sseData, type CallLimit } from './server-call';
import { PROBE_MS, serverWindow, ServerWindowTracker } from './server-window';
import { engineRead } from './server-usage';
import { chunkFinish, chunkText, ollamaChatBody, openAiChatBody, type ChatChunk } from './server-request';
import type { TokenizerSource } from './server-tokenizer';
import { withSchemaInstruction } from '../memory/fit/schema';
import { isLocalServerError, LocalServerError, normaliseServerUrl } from './server-address';

export { sseData } from './server-call';
import { isUsableModelId, MAX_MODEL_ID } from '../memory/limits';

export {
  DEFAULT_SERVER_URL,
  isLocalServerError,
  LocalServerError,
  LOOPBACK_HOSTS,
  normaliseServerUrl,
  type ServerErrorKind,
} from './server-address';

export interface LocalServerOptions {
  baseUrl: string;
  model: string;
  fetch?: typeof fetch;
  /**
   * How long to wait for the first byte of an answer (models load on first use: be generous), and
   * for the next bytes once it has started.
   */
  timeoutMs?: number;
  /** Tests: other limits than CHAT_LIMITS / JSON_LIMITS. */
  limits?: { chat?: Partial<CallLimits>; json?: Partial<CallLimits> };
  /** The page's origin, for the message when the server refuses it. */
  origin?: string;
  /** Benchmarks in Node only (bench:qa): any host, with an API key. The app never sets these. */
  allowRemote?: boolean;
  apiKey?: string;
  /** The model's window where the caller knows it: the server is not asked (server-window.ts). */
  window?: { contextTokens: number; maxOutputTokens?: number };
  /** Tests: where the model family's tokenizer data comes from (default: the app's own assets). */
  tokenizers?: TokenizerSource;
  /** Tests: how long a question about the window may go unanswered (default PROBE_MS, at most timeoutMs). */
  probeMs?: number;
}

/** A 400 that names max_tokens or the context length: the server refuses our token limit. */
function refusesTokenLimit(e: unknown): boolean {
  return (
    isLocalServerError(e) && e.kind === 'http' && e.status === 400 && /max_tokens|max_completion_tokens|context length/i.test(e.detail)
  );
}

export class LocalServerModel implements LanguageModel {
  readonly modelId: string;
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly origin: string;
  private readonly apiKey?: string;
  private readonly limits: { chat: CallLimits; json: CallLimits };
  /** 'words' once the server refused `response_format`, or where the self-test chose it. */
  private mode: StructuredMode = 'grammar';
  /** The server refused our max_tokens once (vLLM: past the context length): the other limits stay. */
  private tokenLimitRefused = false;
  /** A window given, or the server's as it reports it; neither for a remote benchmark server. */
  private readonly knownWindow?: ModelWindow;
  private readonly tracker?: ServerWindowTracker;

  constructor(options: LocalServerOptions) {
    this.baseUrl = normaliseServerUrl(options.baseUrl, { allowRemote: options.allowRemote });
    this.apiKey = options.apiKey;
    // The name goes on every reply and into the settings: one the app cannot keep is refused
    // (empty is fine: only listing the models).
    if (options.model.length > MAX_MODEL_ID) {
      throw new LocalServerError(
        'bad-response',
        `The model name is ${options.model.length.toLocaleString('en-US')} characters long; Tealeaf accepts names up to ${MAX_MODEL_ID} characters.`,
      );
    }
    this.modelId = options.model;
    this.fetchImpl = options.fetch ?? ((...args) => globalThis.fetch(...args));
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.origin = options.origin ?? (typeof location !== 'undefined' ? location.origin : 'this app');
    this.limits = { chat: { ...CHAT_LIMITS, ...options.limits?.chat }, json: { ...JSON_LIMITS, ...options.limits?.json } };
    const given = options.window;
    if (given) this.knownWindow = { ...serverWindow(given), ...(given.maxOutputTokens ? { maxOutputTokens: given.maxOutputTokens } : {}) };
    else if (!options.allowRemote && this.modelId)
      this.tracker = new ServerWindowTracker(
        {
          baseUrl: this.baseUrl,
          fetch: this.fetchImpl,
          apiKey: this.apiKey,
          probeMs: Math.min(this.timeoutMs, options.probeMs ?? PROBE_MS),
          ...(options.tokenizers ? { tokenizers: options.tokenizers } : {}),
        },
        this.modelId,
      );
  }

  /**
   * The model's window as its server reports it (server-window.ts), asked on first use: until the
   * answer, the smallest window of the catalog. Undefined for a remote benchmark server given none.
   */
  get window(): ModelWindow | undefined {
    const w = this.knownWindow ?? this.tracker?.window;
    // JSON asked for in words: the schema takes room in the prompt.
    return w && this.mode === 'words' ? { ...w, schemaInPrompt: true } : w;
  }

  get structuredMode(): StructuredMode {
    return this.mode;
  }

  /** Grammar (response_format json_schema) or words; ModelService restores the self-test's choice. */
  setStructuredMode(mode: StructuredMode): void {
    this.mode = mode;
  }

  /** The window once the server has answered (a few seconds at most, asked once). */
  async probeWindow(): Promise<ModelWindow | undefined> {
    return this.knownWindow ?? (await this.tracker?.ready());
  }

  /** The server refused a prompt too long for its context: a ContextOverflowError, its number learnt. */
  private overflow(e: unknown): ContextOverflowError | undefined {
    const said = isLocalServerError(e) && e.kind === 'http' ? serverOverflow(e.detail) : undefined;
    if (!said) return undefined;
    if (said.contextTokens) this.tracker?.learn(said.contextTokens);
    return new ContextOverflowError(
      said.promptTokens,
      said.contextTokens ?? this.window?.contextTokens ?? 0,
      'the model server refused it',
    );
  }

  async chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    return this.complete(messages, options, undefined, this.limits.chat);
  }

  async json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    const limits = this.limits.json;
    if (this.mode === 'grammar') {
      try {
        const format = { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema } };
        return await this.complete(messages, options, format, limits);
      } catch (e) {
        // Servers without structured output answer 400/422 (or 500) naming the field: ask in words.
        if (!(
          isLocalServerError(e) &&
          e.kind === 'http' &&
          e.status !== undefined &&
          e.status >= 400 &&
          e.status < 600 &&
          e.status !== 404
        ))
          throw e;
        this.mode = 'words';
      }
    }
    // The same words as every engine that asks in words, so the fitted call counted them (window.schemaInPrompt).
    const asked = withSchemaInstruction(messages, schema);
    return this.complete(asked, options, { type: 'json_object' }, limits).catch((e: unknown) => {
      if (isLocalServerError(e) && e.kind === 'http') return this.complete(asked, options, undefined, limits);
      throw e;
    });
  }

  /** The models the server offers (GET /v1/models); the timeout covers the whole answer. */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    const message = `The model server at ${this.baseUrl} did not send its list of models within ${Math.round(this.timeoutMs / 1000)} s. Is it running, and is it an OpenAI-compatible server?`;
    const guard = new CallGuard({
      signal,
      waitMs: this.timeoutMs,
      totalMs: this.timeoutMs,
      onLimit: () => new LocalServerError('timeout', message),
    });
    const limit = 1024 * 1024;
    try {
      const res = await this.request('/v1/models', { method: 'GET' }, guard);
      const text = await this.read(() => readText(res.body, limit, () => this.tooLong(limit), guard), guard, signal);
      type ModelList = { data?: Array<{ id?: unknown }> } | null;
      let body: ModelList = null;
      try {
        body = JSON.parse(text) as ModelList;
      } catch {
        // not JSON: said below
      }
      if (!body || !Array.isArray(body.data))
        throw new LocalServerError(
          'bad-response',
          'The server answered, but not with a list of models. Is it an OpenAI-compatible server?',
        );
      // A name the app could not keep (empty, or past MAX_MODEL_ID) is not offered.
      return body.data.map((m) => m.id).filter((id): id is string => typeof id === 'string' && isUsableModelId(id));
    } finally {
      guard.end();
    }
  }

  private async complete(
    messages: ChatMessage[],
    options: GenerateOptions,
    responseFormat: Record<string, unknown> | undefined,
    limits: CallLimits,
  ): Promise<string> {
    // Never past the window's output cap (the first call waits, briefly, for the server's answer).
    const window = await this.probeWindow();
    const cap = window?.maxOutputTokens ?? Infinity;
    const maxTokens = this.tokenLimitRefused ? undefined : Math.min(tokenBudget(options.maxTokens, limits), cap);
    // Ollama's OpenAI route cannot set the context, and Ollama cuts the start of a longer prompt
    // without a word: its own route loads the model with the window the prompt was fitted to.
    const ollama = this.tracker?.kind === 'Ollama' && window ? window.contextTokens : undefined;
    const body = ollama
      ? ollamaChatBody(this.modelId, messages, ollama, maxTokens, options.temperature, responseFormat)
      : openAiChatBody(this.modelId, messages, maxTokens, options.temperature, responseFormat);
    const guard = this.guard(options.signal, limits.totalMs);
    try {
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
      const res = await this.request(ollama ? '/api/chat' : '/v1/chat/completions', init, guard);
      // A server that ignores `stream: true` answers with one JSON completion: read it as one.
      const text = /application\/json/i.test(res.headers.get('content-type') ?? '')
        ? await this.whole(res, options, limits, guard)
        : await this.stream(res.body, options, limits, guard, ollama ? 'lines' : 'events');
      this.tracker?.afterCall();
      return text;
    } catch (e) {
      // A prompt past the context is the caller's to shorten: never read as a refused max_tokens.
      const overflow = this.overflow(e);
      if (overflow) throw overflow;
      if (!refusesTokenLimit(e) || this.tokenLimitRefused) throw e;
      this.tokenLimitRefused = true;
      return this.complete(messages, options, responseFormat, limits);
    } finally {
      guard.end();
    }
  }

  /** Reads a completion sent whole (not streamed); its text goes to onToken at once. */
  private async whole(res: Response, options: GenerateOptions, limits: CallLimits, guard: CallGuard): Promise<string> {
    // JSON escapes can double the characters of the text: allow for them.
    const raw = await this.read(() => readText(res.body, limits.maxChars * 2, () => this.tooLong(limits.maxChars), guard), guard);
    let whole: ChatChunk;
    try {
      whole = JSON.parse(raw) as ChatChunk;
    } catch {
      throw new LocalServerError(
        'bad-response',
        'The model server sent an answer that is neither a stream nor a completion.',
        raw.slice(0, 500),
      );
    }
    const text = chunkText(whole);
    const read = engineRead(whole);
    if (read) options.onRead?.(read);
    if (text.length > limits.maxChars) throw this.tooLong(limits.maxChars);
    if (text && !options.signal?.aborted) options.onToken?.(text);
    const finish = chunkFinish(whole);
    if (finish && !options.signal?.aborted) options.onFinish?.(finish);
    return text;
  }

  /** Reads a streamed answer: each event's text to onToken, until [DONE], a limit or a cancel. */
  private async stream(
    body: ReadableStream<Uint8Array> | null,
    options: GenerateOptions,
    limits: CallLimits,
    guard: CallGuard,
    format: 'events' | 'lines' = 'events',
  ): Promise<string> {
    if (!body) throw new LocalServerError('bad-response', 'The server sent an empty answer.');
    let text = '';
    let events = 0;
    let finish: AnswerFinish | undefined;
    const read = async () => {
      for await (const data of format === 'lines' ? jsonLines(body, guard) : sseData(body, guard)) {
        events++;
        if (data === '[DONE]') break;
        let chunk: ChatChunk;
        try {
          chunk = JSON.parse(data) as ChatChunk;
        } catch {
          // One malformed event does not lose the reply so far.
          continue;
        }
        const delta = chunkText(chunk);
        const read = engineRead(chunk);
        if (read) options.onRead?.(read);
        finish = chunkFinish(chunk) ?? finish;
        if (options.signal?.aborted) break;
        if (!delta) continue;
        text += delta;
        options.onToken?.(delta);
        // A server may ignore max_tokens: the size limit holds anyway.
        if (text.length > limits.maxChars) throw this.tooLong(limits.maxChars);
      }
      if (events === 0 && !options.signal?.aborted)
        throw new LocalServerError('bad-response', 'The model server sent an answer Tealeaf cannot read (not a stream of events).');
      if (finish && !options.signal?.aborted) options.onFinish?.(finish);
      return text;
    };
    return this.read(read, guard, options.signal, () => text);
  }

  /**
   * Runs a body read: a limit the guard hit is thrown as its error; the caller's cancel returns
   * what arrived (the port's contract) when `sofar` is given; a broken connection says so.
   */
  private async read<T>(fn: () => Promise<T>, guard: CallGuard, signal?: AbortSignal, sofar?: () => T): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (guard.stopped) throw guard.stopped;
      if (signal?.aborted) {
        if (sofar) return sofar();
        throw new LocalServerError('cancelled', 'Cancelled.');
      }
      if (isLocalServerError(e)) throw e;
      throw new LocalServerError('down', 'The connection to the model server broke off during the answer. Is it still running?', String(e));
    }
  }

  /** The limits of one call: the wait for its start and each pause (timeoutMs), and its whole time. */
  private guard(signal: AbortSignal | undefined, totalMs: number): CallGuard {
    const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
    const words: Record<CallLimit, string> = {
      wait: `The model server at ${this.baseUrl} did not answer within ${seconds(this.timeoutMs)}. It may still be loading the model; try again.`,
      pause: `The model server at ${this.baseUrl} stopped sending its answer for ${seconds(this.timeoutMs)}, so Tealeaf stopped waiting.`,
      total: `The model server's answer was still going after ${seconds(totalMs)}, so Tealeaf stopped it.`,
    };
    return new CallGuard({ signal, waitMs: this.timeoutMs, totalMs, onLimit: (limit) => new LocalServerError('timeout', words[limit]) });
  }

  private tooLong(chars: number): LocalServerError {
    return new LocalServerError(
      'too-long',
      `The model server's answer went past ${chars.toLocaleString('en-US')} characters without ending, so Tealeaf stopped reading it. ` +
        'Small models sometimes write on without end (e.g. endless spaces in JSON): try again, or another model.',
    );
  }

  /** One HTTP request under the call's guard, with errors that say what to do. */
  private async request(path: string, init: RequestInit, guard: CallGuard): Promise<Response> {
    if (guard.signal.aborted) throw new LocalServerError('cancelled', 'Cancelled.');
    const url = `${this.baseUrl}${path}`;
    let res: Response;
    try {
      const headers = {
        ...(init.headers as Record<string, string> | undefined),
        ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
      };
      res = await this.fetchImpl(url, { ...init, headers, signal: guard.signal });
    } catch (e) {
      if (guard.stopped) throw guard.stopped;
      if (guard.signal.aborted) throw new LocalServerError('cancelled', 'Cancelled.');
      throw await this.unreachable(url, e);
    }
    guard.alive();
    if (!res.ok) {
      const detail = await readText(res.body, 4000, () => new Error('too long'), guard).catch(() => '');
      const hint = res.status === 404 && path.includes('chat') ? ` Is the model "${this.modelId}" installed there?` : '';
      throw new LocalServerError(
        'http',
        `The model server answered ${res.status} ${res.statusText}.${hint}`,
        detail.slice(0, 500),
        res.status,
      );
    }
    return res;
  }

  /**
   * fetch failed: either nothing listens, or the server answered without allowing this origin
   * (CORS), which the browser reports the same way. An opaque request tells them apart: it
   * succeeds when something answers at all.
   */
  private async unreachable(url: string, cause: unknown): Promise<LocalServerError> {
    const detail = cause instanceof Error ? cause.message : String(cause);
    let answers = false;
    if (typeof window !== 'undefined') {
      try {
        await this.fetchImpl(url, { method: 'GET', mode: 'no-cors' });
        answers = true;
      } catch {
        answers = false;
      }
    }
    if (answers) {
      return new LocalServerError(
        'origin-refused',
        `The model server at ${this.baseUrl} is running but does not allow this app (${this.origin}) to use it. ` +
          `Allow the origin in the server's settings: for Ollama, start it with OLLAMA_ORIGINS=${this.origin}; ` +
          "for LM Studio, turn on CORS in its server settings; for llama.cpp's server, it allows any origin by default.",
        detail,
      );
    }
    return new LocalServerError(
      'down',
      `Nothing answers at ${this.baseUrl}. Is the model server running (for Ollama: "ollama serve")?`,
      detail,
    );
  }
}
