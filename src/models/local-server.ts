// A language model served by a program on this computer through the OpenAI-compatible HTTP API
// (Ollama, LM Studio, llama.cpp's server, vLLM): chat streams over server-sent events, structured
// output uses `response_format` with a JSON schema where the server supports it. Only loopback
// addresses are accepted, so nothing leaves the device; the CSP allows exactly those (src/csp.js).
// Runs in the page, in workers and in Node (bench:qa): `fetch` can be injected.

import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../ports';
import { isUsableModelId, MAX_MODEL_ID } from '../memory/limits';

export type ServerErrorKind =
  /** Nothing answers at that address. */
  | 'down'
  /** Something answers, but the browser may not read it: the server does not allow this origin. */
  | 'origin-refused'
  | 'timeout'
  /** The server answered with an HTTP error. */
  | 'http'
  /** The answer was not what the API describes. */
  | 'bad-response'
  /** The address is not on this computer, or not a URL. */
  | 'not-local'
  | 'cancelled';

/** A failure of the local server, with a message that says what to do. */
export class LocalServerError extends Error {
  override readonly name = 'LocalServerError';
  constructor(
    readonly kind: ServerErrorKind,
    message: string,
    readonly detail = '',
    readonly status?: number,
  ) {
    super(message);
  }
}

export function isLocalServerError(e: unknown): e is LocalServerError {
  return e instanceof LocalServerError;
}

/** The loopback hosts the app may talk to (and the CSP allows). */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost'] as const;
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:11434';

/**
 * The server's base URL without a trailing slash or "/v1", or a LocalServerError when it is not
 * an http URL on this computer.
 */
export function normaliseServerUrl(input: string, options: { allowRemote?: boolean } = {}): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new LocalServerError('not-local', `"${input.trim()}" is not an address. Write it like ${DEFAULT_SERVER_URL}.`);
  }
  if (options.allowRemote) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new LocalServerError('not-local', 'The address must start with http:// or https://.');
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
  }
  if (!(LOOPBACK_HOSTS as readonly string[]).includes(url.hostname)) {
    throw new LocalServerError(
      'not-local',
      `Only a server on this computer can be used (${LOOPBACK_HOSTS.join(' or ')}): nothing you write may leave this device.`,
    );
  }
  // Loopback traffic never leaves the machine, so plain http is what local servers speak.
  if (url.protocol !== 'http:') {
    throw new LocalServerError('not-local', `The address must start with http:// (like ${DEFAULT_SERVER_URL}).`);
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

export interface LocalServerOptions {
  baseUrl: string;
  model: string;
  fetch?: typeof fetch;
  /** How long to wait for the first byte of an answer (models load on first use: be generous). */
  timeoutMs?: number;
  /** The page's origin, for the message when the server refuses it. */
  origin?: string;
  /** Benchmarks in Node only (bench:qa): any host, with an API key. The app never sets these. */
  allowRemote?: boolean;
  apiKey?: string;
}

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null }; message?: { content?: string | null }; finish_reason?: string | null }>;
  error?: { message?: string } | string;
}

/** Splits a server-sent-events stream into the JSON payloads of its `data:` lines. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value, { stream: !done });
      // Events end with a blank line; lines may end in \r\n. A chunk may stop anywhere.
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end).replace(/\r$/, '');
        buffer = buffer.slice(end + 1);
        if (line.startsWith('data:')) yield line.slice(5).trimStart();
      }
      if (done) {
        const last = buffer.replace(/\r$/, '');
        if (last.startsWith('data:')) yield last.slice(5).trimStart();
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

export class LocalServerModel implements LanguageModel {
  readonly modelId: string;
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly origin: string;
  private readonly apiKey?: string;
  /** The server refused `response_format` once: later calls ask for JSON in words only. */
  private schemaUnsupported = false;

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
  }

  async chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    return this.complete(messages, options, undefined);
  }

  async json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    if (!this.schemaUnsupported) {
      try {
        return await this.complete(messages, options, { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema } });
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
        this.schemaUnsupported = true;
      }
    }
    const instruction: ChatMessage = {
      role: 'system',
      content: `Answer with one JSON value only, no prose, matching this JSON schema:\n${JSON.stringify(schema)}`,
    };
    return this.complete([...messages, instruction], options, { type: 'json_object' }).catch((e: unknown) => {
      if (isLocalServerError(e) && e.kind === 'http') return this.complete([...messages, instruction], options, undefined);
      throw e;
    });
  }

  /** The models the server offers (GET /v1/models). */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    const res = await this.request('/v1/models', { method: 'GET' }, signal);
    const body = (await res.json().catch(() => null)) as { data?: Array<{ id?: unknown }> } | null;
    if (!body || !Array.isArray(body.data))
      throw new LocalServerError('bad-response', 'The server answered, but not with a list of models. Is it an OpenAI-compatible server?');
    // A name the app could not keep (empty, or past MAX_MODEL_ID) is not offered.
    return body.data.map((m) => m.id).filter((id): id is string => typeof id === 'string' && isUsableModelId(id));
  }

  private async complete(
    messages: ChatMessage[],
    options: GenerateOptions,
    responseFormat: Record<string, unknown> | undefined,
  ): Promise<string> {
    const body: Record<string, unknown> = { model: this.modelId, messages, stream: true };
    if (options.temperature !== undefined) body.temperature = options.temperature;
    if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens;
    if (responseFormat) body.response_format = responseFormat;
    const res = await this.request(
      '/v1/chat/completions',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
      options.signal,
    );
    if (!res.body) throw new LocalServerError('bad-response', 'The server sent an empty answer.');
    let text = '';
    try {
      for await (const data of sseData(res.body)) {
        if (data === '[DONE]') break;
        let chunk: ChatChunk;
        try {
          chunk = JSON.parse(data) as ChatChunk;
        } catch {
          // One malformed event does not lose the reply so far.
          continue;
        }
        if (chunk.error) {
          const detail = typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? '');
          throw new LocalServerError('http', `The server stopped with an error: ${detail}`, detail);
        }
        if (options.signal?.aborted) break;
        const choice = chunk.choices?.[0];
        const delta = choice?.delta?.content ?? choice?.message?.content ?? '';
        if (delta) {
          text += delta;
          options.onToken?.(delta);
        }
      }
    } catch (e) {
      // Aborted mid-stream: what arrived is the answer (the port's contract).
      if (options.signal?.aborted) return text;
      if (isLocalServerError(e)) throw e;
      throw new LocalServerError('down', 'The connection to the model server broke off during the answer. Is it still running?', String(e));
    }
    return text;
  }

  /** One HTTP request with a timeout for the answer's start and errors that say what to do. */
  private async request(path: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    if (signal?.aborted) throw new LocalServerError('cancelled', 'Cancelled.');
    const url = `${this.baseUrl}${path}`;
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      let res: Response;
      try {
        const headers = {
          ...(init.headers as Record<string, string> | undefined),
          ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
        };
        res = await this.fetchImpl(url, { ...init, headers, signal: controller.signal });
      } catch (e) {
        if (timedOut)
          throw new LocalServerError(
            'timeout',
            `The model server at ${this.baseUrl} did not answer within ${Math.round(this.timeoutMs / 1000)} s. It may still be loading the model; try again.`,
          );
        if (signal?.aborted) throw new LocalServerError('cancelled', 'Cancelled.');
        throw await this.unreachable(url, e);
      }
      if (!res.ok) {
        const detail = await res.text().catch(() => '');
        const hint = res.status === 404 && path.includes('chat') ? ` Is the model "${this.modelId}" installed there?` : '';
        throw new LocalServerError(
          'http',
          `The model server answered ${res.status} ${res.statusText}.${hint}`,
          detail.slice(0, 500),
          res.status,
        );
      }
      return res;
    } finally {
      // Only the wait for the answer's start is timed; the caller's signal stays linked so a
      // cancel also stops the stream being read.
      clearTimeout(timer);
    }
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
