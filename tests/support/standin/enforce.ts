// The enforcing stand-in: wraps any LanguageModel (the e2e scripted model, a benchmark's scripted
// model) so that it reads and writes under a real engine's limits, counted with that model
// family's tokenizer: a prompt over the window is refused with ContextOverflowError before a word is
// written (as web-llm refuses it; the CPU engine also refuses a JSON call whose cap does not fit
// beside its prompt, see the profile); the output stops at the first of the caller's maxTokens, the
// engine's cap and what is left of the window (finish "length": JSON is cut mid-way, a streamed
// reply stops). Optionally injects small-model faults into JSON answers (faults.ts). Keeps what the
// engine would keep of the previous request (the profile's cache rule, kv-cache.ts), so each call
// says how many tokens had to be read before its first output token.
import { ContextOverflowError } from '../../../src/ports';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel, ModelWindow } from '../../../src/ports';
import { FaultInjector, type FaultConfig, type FaultName } from './faults';
import { holdAfter, needsIds, readRequest, type Finish, type KvRead, type KvRequest, type KvState } from './kv-cache';
import { outputIds, promptIds, sentMessages } from './prompt-ids';
import { countPrompt, type EngineProfile } from './profiles';
import { countText, firstTokens, loadTokenizer, type Tok, type TokenizerSource } from './tokenizer';

/** One call as the engine saw it. */
export interface CallRecord {
  kind: 'chat' | 'json';
  /** The schema's title (JSON calls). */
  title?: string;
  promptTokens: number;
  /** Tokens written (after any cut). */
  outputTokens: number;
  /** The most this call could write: min(maxTokens, the cap, the window left). */
  limit: number;
  /** Refused: the prompt alone was over the window. */
  overflowed: boolean;
  /** The output stopped at `limit` ("length"). */
  cut: boolean;
  /** Tokens read before the first output token: the prompt less what the cache held (0 when refused). */
  readAnew: number;
  /** Tokens of the prompt the engine's cache held from the previous request (profile.cache). */
  cachedTokens: number;
  fault?: FaultName;
}

export interface EnforceOptions {
  /** Faults in JSON answers; a function is read at every JSON call (the e2e script can change). */
  faults?: FaultConfig | (() => FaultConfig | undefined);
}

const utf8 = new TextEncoder();

/** Passes streamed pieces on until the text reaches `limit` tokens, then stops the writer. */
class StreamCut {
  emitted = '';
  cut = false;
  private text = '';
  private bytes = 0;

  constructor(
    private readonly tok: Tok,
    private readonly limit: number,
    private readonly onToken: ((delta: string) => void) | undefined,
    private readonly stop: () => void,
  ) {}

  push(delta: string): void {
    if (this.cut) return;
    this.text += delta;
    this.bytes += utf8.encode(delta).length;
    // A token is at least one byte (one more for a SentencePiece word start): count only near the limit.
    const first = this.bytes + 1 <= this.limit ? undefined : firstTokens(this.tok, this.text, this.limit);
    if (!first?.more) {
      this.emitted += delta;
      this.onToken?.(delta);
      return;
    }
    this.cut = true;
    // Tokens already streamed stay streamed, as with a real engine: only what extends them is added.
    const kept = this.tok.decode(first.ids);
    const rest = kept.startsWith(this.emitted) ? kept.slice(this.emitted.length) : '';
    if (rest) {
      this.emitted += rest;
      this.onToken?.(rest);
    }
    this.stop();
  }
}

export class EnforcedModel implements LanguageModel {
  /** Every call, in order (benchmarks and e2e pages read it). */
  readonly calls: CallRecord[] = [];
  readonly window: ModelWindow;
  private injector?: { key: string; faults: FaultInjector };
  /** What the engine holds of the last call. Calls that overlap are counted as they start and end (a real engine queues them). */
  private held?: KvState;

  constructor(
    readonly inner: LanguageModel,
    readonly profile: EngineProfile,
    private readonly tokenizers: TokenizerSource,
    private readonly options: EnforceOptions = {},
  ) {
    const { contextTokens, maxOutputTokens } = profile;
    // An engine that writes the schema into the prompt says so, as the CPU engine does.
    const schema = profile.schemaInPrompt ? { schemaInPrompt: true } : {};
    this.window = profile.exposesCount
      ? { contextTokens, maxOutputTokens, ...schema, countTokens: (messages) => this.countTokens(messages) }
      : { contextTokens, maxOutputTokens, ...schema };
  }

  get modelId(): string {
    return this.inner.modelId;
  }

  tokenizer(): Promise<Tok> {
    return loadTokenizer(this.profile.tokenizer, this.tokenizers);
  }

  /** Tokens of these messages as the engine reads them, template included. */
  async countTokens(messages: ChatMessage[], schema?: JsonSchema): Promise<number> {
    return countPrompt(await this.tokenizer(), this.profile, messages, schema);
  }

  /** Faults fired so far, by kind (all zero without a faults mode). */
  get faultCounts(): Partial<Record<FaultName, number>> {
    return { ...this.injector?.faults.counts };
  }

  async chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    const tok = await this.tokenizer();
    const { promptTokens, limit } = this.admit(tok, 'chat', undefined, countPrompt(tok, this.profile, messages), options);
    const request = this.request(tok, messages, promptTokens);
    const stopper = new AbortController();
    const abort = () => stopper.abort();
    if (options.signal?.aborted) abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    const stream = new StreamCut(tok, limit, options.onToken, abort);
    try {
      const full = await this.inner.chat(messages, { ...options, signal: stopper.signal, onToken: (d) => stream.push(d) });
      const out = stream.cut ? { text: stream.emitted, cut: true } : cutAt(tok, full, limit);
      const finish: Finish = out.cut ? 'length' : options.signal?.aborted ? 'abort' : 'stop';
      this.record({ kind: 'chat', promptTokens, limit, text: out.text, cut: out.cut, tok }, request, finish);
      // Said as web-llm and the servers say it: why the answer ended, unless it was stopped.
      if (finish !== 'abort') options.onFinish?.(finish);
      return out.text;
    } catch (err) {
      this.held = undefined;
      throw err;
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
  }

  async json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    const tok = await this.tokenizer();
    const title = typeof schema.title === 'string' ? schema.title : '';
    const prompt = countPrompt(tok, this.profile, messages, schema);
    const { promptTokens, limit } = this.admit(tok, 'json', title, prompt, options);
    const request = this.request(tok, sentMessages(this.profile, messages, schema), promptTokens);
    const answer = await this.inner.json(messages, schema, { ...options, onToken: undefined }).catch((err: unknown) => {
      this.held = undefined;
      throw err;
    });
    // A runaway fault writes well past the cap, so that the cut below is what ends it.
    const faulted = this.faults()?.apply(answer, { title, schema, fillChars: limit * 8 + 64 }) ?? { text: answer };
    const out = cutAt(tok, faulted.text, limit);
    const finish: Finish = out.cut ? 'length' : options.signal?.aborted ? 'abort' : 'stop';
    this.record({ kind: 'json', title, promptTokens, limit, text: out.text, cut: out.cut, tok, fault: faulted.fault }, request, finish);
    if (out.text) options.onToken?.(out.text);
    return out.text;
  }

  /** Refuses a prompt over the window; else the call's output limit. */
  private admit(tok: Tok, kind: 'chat' | 'json', title: string | undefined, promptTokens: number, options: GenerateOptions) {
    const { contextTokens, maxOutputTokens, minRoom, jsonNeedsFullOutput } = this.profile;
    const room = contextTokens - promptTokens;
    const wanted = Math.max(0, Math.min(options.maxTokens ?? maxOutputTokens, maxOutputTokens));
    const noRoom = room < minRoom || room < 0;
    if (noRoom || (kind === 'json' && jsonNeedsFullOutput && room < wanted)) {
      // Refused before anything is read; web-llm has reset its conversation by then.
      this.held = undefined;
      this.calls.push({ kind, title, promptTokens, outputTokens: 0, limit: 0, overflowed: true, cut: false, readAnew: 0, cachedTokens: 0 });
      const detail = noRoom ? 'stand-in' : `stand-in: no room for the ${wanted} tokens of answer asked`;
      throw new ContextOverflowError(promptTokens, contextTokens, detail);
    }
    return { promptTokens, limit: Math.min(wanted, room) };
  }

  /** The request as the cache rule compares it (token ids only where the rule needs them), and what it costs to read now. */
  private request(tok: Tok, sent: readonly ChatMessage[], promptTokens: number): { request: KvRequest; read: KvRead } {
    const request: KvRequest = needsIds(this.profile.cache)
      ? { messages: sent, promptTokens, ids: promptIds(tok, this.profile, sent) }
      : { messages: sent, promptTokens };
    return { request, read: readRequest(this.profile.cache, this.held, request) };
  }

  private record(
    r: {
      kind: 'chat' | 'json';
      title?: string;
      promptTokens: number;
      limit: number;
      text: string;
      cut: boolean;
      tok: Tok;
      fault?: FaultName;
    },
    { request, read }: { request: KvRequest; read: KvRead },
    finish: Finish,
  ) {
    const outputTokens = countText(r.tok, r.text);
    const rule = this.profile.cache;
    const { readAnew, cachedTokens } = read;
    const ids = needsIds(rule) ? outputIds(r.tok, r.text) : undefined;
    this.held = holdAfter(rule, request, { text: r.text, tokens: outputTokens, ids }, finish);
    const call: CallRecord = {
      kind: r.kind,
      promptTokens: r.promptTokens,
      outputTokens,
      limit: r.limit,
      overflowed: false,
      cut: r.cut,
      readAnew,
      cachedTokens,
    };
    if (r.title !== undefined) call.title = r.title;
    if (r.fault) call.fault = r.fault;
    this.calls.push(call);
  }

  /** The injector for the faults configured now (a new one, from its seed, when they change). */
  private faults(): FaultInjector | undefined {
    const config = typeof this.options.faults === 'function' ? this.options.faults() : this.options.faults;
    if (!config || !(config.rate > 0)) return undefined;
    const key = JSON.stringify(config);
    if (this.injector?.key !== key) this.injector = { key, faults: new FaultInjector(config) };
    return this.injector.faults;
  }
}

/** The text cut to `limit` tokens, as an engine that stops there writes it. */
export function cutAt(tok: Tok, text: string, limit: number): { text: string; cut: boolean } {
  const first = firstTokens(tok, text, limit);
  return first.more ? { text: tok.decode(first.ids), cut: true } : { text, cut: false };
}

/** Wraps `model` under `profile`'s limits, its tokenizer read from `tokenizers`. */
export function enforceWith(
  model: LanguageModel,
  profile: EngineProfile,
  tokenizers: TokenizerSource,
  options?: EnforceOptions,
): EnforcedModel {
  return new EnforcedModel(model, profile, tokenizers, options);
}
