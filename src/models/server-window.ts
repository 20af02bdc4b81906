// The window of a model on a model server, from what the server reports about it (asked once per
// model by LocalServerModel). The OpenAI-compatible API has no such field, so each server is asked
// in its own words, all at once (a server answers its own and 404s the others):
//   llama.cpp  GET /props: default_generation_settings.n_ctx (the context of one slot, as loaded);
//              counting is exact there (POST /apply-template, then POST /tokenize).
//   LM Studio  GET /api/v0/models/<id>: loaded_context_length; a model not loaded yet is loaded on
//              first use with LM Studio's default context (4,096), so until then it is budgeted so.
//   Ollama     GET /api/ps: context_length of the loaded model; else POST /api/show: a Modelfile's
//              `num_ctx`, else 4,096 (at most the model's trained context). Ollama silently drops
//              the START of a prompt longer than the context it loaded (the system prompt), and
//              its OpenAI-compatible endpoint cannot ask for a context (docs/api/openai-
//              compatibility.mdx, "Setting the context size"; its default was 2,048 before v0.6.7),
//              so LocalServerModel calls its own /api/chat with options.num_ctx set to this window.
//   vLLM       GET /v1/models: max_model_len.
// Anything else gets the smallest window of the catalog (FALLBACK_WINDOW, src/memory/fit/window.ts).
// Where the server has no tokenize route, a model of a family we ship tokenizer data for is counted
// with it (server-tokenizer.ts); any other is fitted by the estimate.
import type { ChatMessage, ModelWindow } from '../ports';
import { outputCap } from './call-limits';
import { CallGuard, readText } from './server-call';
import { familyCounter, type TokenizerSource } from './server-tokenizer';

export type ServerKind = 'llama.cpp' | 'LM Studio' | 'Ollama' | 'vLLM' | 'unknown';

export interface ServerWindowInfo {
  kind: ServerKind;
  contextTokens: number;
  /** The number is the server's for the model as loaded (false: a budget until it loads). */
  loaded: boolean;
  /** Nothing answered at all (the server is down): ask again later rather than keep the fallback. */
  unreachable?: boolean;
}

/** The server answered, with an HTTP error: it is up, and does not know this question. */
class Unanswered extends Error {}

/** One JSON request to the server (a body makes it a POST); rejects on any failure. */
export type AskJson = (path: string, body?: unknown) => Promise<unknown>;

/** A server that says nothing: the smallest window of the catalog (FALLBACK_WINDOW). */
export const UNKNOWN_SERVER_WINDOW: ModelWindow = { contextTokens: 2048, maxOutputTokens: 384 };
/** The context asked of Ollama for a model not loaded and not set by a Modelfile (Ollama's own default since v0.6.7). */
export const OLLAMA_DEFAULT_CONTEXT = 4096;
/** LM Studio's default context for a model it loads on first use. */
export const LM_STUDIO_DEFAULT_CONTEXT = 4096;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

/** Ollama calls "llama3.2" what it lists as "llama3.2:latest". */
const sameOllamaModel = (name: unknown, model: string): boolean =>
  typeof name === 'string' && (name === model || name === `${model}:latest` || `${name}:latest` === model);

function llamaCpp(props: unknown): number | undefined {
  if (!isObject(props)) return undefined;
  const slot = props.default_generation_settings;
  return positive(isObject(slot) ? slot.n_ctx : undefined) ?? positive(props.n_ctx);
}

function lmStudio(info: unknown, model: string): ServerWindowInfo | undefined {
  if (!isObject(info) || (info.id !== undefined && info.id !== model)) return undefined;
  const loaded = positive(info.loaded_context_length);
  if (loaded) return { kind: 'LM Studio', contextTokens: loaded, loaded: true };
  const max = positive(info.max_context_length);
  return max ? { kind: 'LM Studio', contextTokens: Math.min(max, LM_STUDIO_DEFAULT_CONTEXT), loaded: false } : undefined;
}

function ollama(show: unknown, ps: unknown, model: string): ServerWindowInfo | undefined {
  const running =
    isObject(ps) && Array.isArray(ps.models)
      ? ps.models.find((m) => isObject(m) && (sameOllamaModel(m.name, model) || sameOllamaModel(m.model, model)))
      : undefined;
  const live = isObject(running) ? positive(running.context_length) : undefined;
  if (live) return { kind: 'Ollama', contextTokens: live, loaded: true };
  if (!isObject(show) || (show.parameters === undefined && !isObject(show.model_info))) return undefined;
  // A Modelfile's PARAMETER num_ctx is what Ollama loads the model with.
  const set = typeof show.parameters === 'string' ? /^num_ctx\s+(\d+)/m.exec(show.parameters) : null;
  if (set) return { kind: 'Ollama', contextTokens: Number(set[1]), loaded: true };
  const info = isObject(show.model_info) ? show.model_info : {};
  const trained = Object.entries(info).find(([k]) => k.endsWith('.context_length'))?.[1];
  // Asked for with every call (num_ctx), so it is the context the model loads with.
  return { kind: 'Ollama', contextTokens: Math.min(positive(trained) ?? OLLAMA_DEFAULT_CONTEXT, OLLAMA_DEFAULT_CONTEXT), loaded: true };
}

function vllm(list: unknown, model: string): number | undefined {
  if (!isObject(list) || !Array.isArray(list.data)) return undefined;
  const entry = list.data.find((m) => isObject(m) && m.id === model);
  return isObject(entry) ? positive(entry.max_model_len) : undefined;
}

/** What the server says about `model`'s window; never rejects (a server that says nothing is 'unknown'). */
export async function probeServerWindow(ask: AskJson, model: string): Promise<ServerWindowInfo> {
  const path = model
    .split('/')
    .map((p) => encodeURIComponent(p))
    .join('/');
  let reached = false;
  const quiet = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      (v) => ((reached = true), v),
      (e: unknown) => ((reached ||= e instanceof Unanswered), undefined),
    );
  const [props, lms, ps, show, list] = await Promise.all([
    quiet(ask(`/props?model=${encodeURIComponent(model)}`)),
    quiet(ask(`/api/v0/models/${path}`)),
    quiet(ask('/api/ps')),
    quiet(ask('/api/show', { model })),
    quiet(ask('/v1/models')),
  ]);
  const nCtx = llamaCpp(props);
  if (nCtx) return { kind: 'llama.cpp', contextTokens: nCtx, loaded: true };
  const found = lmStudio(lms, model) ?? ollama(show, ps, model);
  if (found) return found;
  const maxLen = vllm(list, model);
  if (maxLen) return { kind: 'vLLM', contextTokens: maxLen, loaded: true };
  return { kind: 'unknown', contextTokens: UNKNOWN_SERVER_WINDOW.contextTokens, loaded: false, ...(reached ? {} : { unreachable: true }) };
}

/** The ModelWindow of what the probe found (nothing yet: the fallback); `count` where the server counts. */
export function serverWindow(info: Pick<ServerWindowInfo, 'contextTokens'> | undefined, count?: ModelWindow['countTokens']): ModelWindow {
  if (!info || ('kind' in info && info.kind === 'unknown')) return { ...UNKNOWN_SERVER_WINDOW };
  return { contextTokens: info.contextTokens, maxOutputTokens: outputCap(info.contextTokens), ...(count ? { countTokens: count } : {}) };
}

/** The prompt's tokens on a llama.cpp server: its chat template applied, then its tokenizer. */
export async function llamaCppCount(ask: AskJson, model: string, messages: ChatMessage[]): Promise<number> {
  const templated = await ask('/apply-template', { model, messages });
  const prompt = isObject(templated) ? templated.prompt : undefined;
  if (typeof prompt !== 'string') throw new Error('The server did not apply its chat template.');
  // As the server tokenizes a chat prompt: special tokens added (a BOS) and read as such.
  const tokenized = await ask('/tokenize', { model, content: prompt, add_special: true, parse_special: true });
  const tokens = isObject(tokenized) ? tokenized.tokens : undefined;
  if (!Array.isArray(tokens)) throw new Error('The server did not tokenize the prompt.');
  return tokens.length;
}

/** Where the window's questions go: the server's base URL and how to reach it. */
export interface ServerAddress {
  baseUrl: string;
  fetch: typeof fetch;
  apiKey?: string;
  /** How long one question about the window may take (default PROBE_MS). */
  probeMs?: number;
  /** Where a model family's tokenizer data comes from (default: the app's own assets). */
  tokenizers?: TokenizerSource;
}

/** The tokenizer files the app serves itself, loaded at the first count that needs them. */
const appTokenizers: TokenizerSource = (data) => import('./tokenizer-assets').then((m) => m.assetTokenizers(data));

/** How long the window's questions may take: they never hold a call for long. */
export const PROBE_MS = 5_000;
const COUNT_MS = 15_000;
/** /props and /api/show carry the chat template (and a licence): a few KB, far below this. */
const PROBE_CHARS = 1024 * 1024;

/** JSON questions to the server, each bounded by `ms`; a failure rejects (the caller falls back). */
export function jsonAsker(server: ServerAddress, ms: number, signal?: AbortSignal): AskJson {
  return async (path, body) => {
    // A server that takes too long is up (and slow): it is not asked again on every call.
    const guard = new CallGuard({ signal, waitMs: ms, totalMs: ms, onLimit: () => new Unanswered(`${path} took too long`) });
    try {
      const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
      if (server.apiKey) headers.authorization = `Bearer ${server.apiKey}`;
      const init: RequestInit = { method: body === undefined ? 'GET' : 'POST', headers, signal: guard.signal };
      if (body !== undefined) init.body = JSON.stringify(body);
      const res = await server.fetch(`${server.baseUrl}${path}`, init);
      if (!res.ok) {
        void res.body?.cancel().catch(() => undefined);
        throw new Unanswered(`${path} answered ${res.status}`);
      }
      const text = await readText(res.body, PROBE_CHARS, () => new Unanswered(`${path} answered too much`), guard);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new Unanswered(`${path} answered something else than JSON`);
      }
    } catch (e) {
      throw guard.stopped ?? e;
    } finally {
      guard.end();
    }
  };
}

/**
 * One model's window on one server: asked once on first use (the smallest window of the catalog
 * until the answer comes), asked again once after the first call where the model was not loaded
 * yet (LM Studio, Ollama), and corrected by the number a server gives when it refuses a prompt.
 */
export class ServerWindowTracker {
  private probed?: ServerWindowInfo;
  private probing?: Promise<unknown>;
  private reprobed = false;
  private cache?: { from: ServerWindowInfo | undefined; window: ModelWindow };
  /** Counts with the model family's tokenizer, where the name says a family we have data for. */
  private readonly familyCount?: ModelWindow['countTokens'];

  constructor(
    private readonly server: ServerAddress,
    private readonly model: string,
  ) {
    this.familyCount = familyCounter(model, server.tokenizers ?? appTokenizers);
  }

  get kind(): ServerKind | undefined {
    return this.probed?.kind;
  }

  /** The window now (starting the question if not asked yet). */
  get window(): ModelWindow {
    void this.ask();
    return this.current();
  }

  /** The window once the server has answered (a few seconds at most, the first time). */
  async ready(): Promise<ModelWindow> {
    await this.ask();
    return this.current();
  }

  private current(): ModelWindow {
    const from = this.probed;
    if (this.cache?.from !== from || !this.cache) {
      // llama.cpp counts itself; a server without a tokenize route is counted with the family's
      // tokenizer (server-tokenizer.ts), else by the estimate.
      const count: ModelWindow['countTokens'] =
        from?.kind === 'llama.cpp'
          ? (messages, signal) => llamaCppCount(jsonAsker(this.server, COUNT_MS, signal), this.model, messages)
          : this.familyCount;
      this.cache = { from, window: serverWindow(from, count) };
    }
    return this.cache.window;
  }

  private ask(): Promise<unknown> {
    this.probing ??= probeServerWindow(jsonAsker(this.server, this.server.probeMs ?? PROBE_MS), this.model).then((info) => {
      // A server that was down is asked again on the next call; meanwhile the fallback holds.
      if (info.unreachable) this.probing = undefined;
      else this.probed ??= info;
    });
    return this.probing;
  }

  /** A call went through: a window budgeted before the model loaded is asked again, once. */
  afterCall(): void {
    const p = this.probed;
    if (!p || p.loaded || this.reprobed || (p.kind !== 'LM Studio' && p.kind !== 'Ollama')) return;
    this.reprobed = true;
    void probeServerWindow(jsonAsker(this.server, this.server.probeMs ?? PROBE_MS), this.model).then((info) => {
      if (info.loaded && !this.probed?.loaded) this.probed = info;
    });
  }

  /** The server named its context when it refused a prompt: that is the window from now on. */
  learn(contextTokens: number): void {
    if (contextTokens > 0 && contextTokens !== this.probed?.contextTokens)
      this.probed = { kind: this.probed?.kind ?? 'unknown', contextTokens, loaded: true };
  }
}
