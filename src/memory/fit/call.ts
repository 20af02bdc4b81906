// One fitted model call: the builder lays out its prompt for a token budget, the prompt is
// counted (the model's own tokenizer where it has one, a safe estimate elsewhere) and built again
// smaller until prompt plus output fits the window; a context error from the engine (its count
// disagreeing with ours) builds it again smaller still. The user never sees a raw context error:
// what cannot fit at all is a PromptTooLongError in words.
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel, ModelWindow } from '../../ports';
import { isContextOverflow } from '../../ports';
import { estimateMessages } from './tokens';
import { withSchemaInstruction } from './schema';
import { outputFor, windowOf } from './window';

/** Lays out a prompt of at most `tokens` tokens (by estimateTokens), dropping by priority. */
export type PromptBuilder = (tokens: number) => ChatMessage[];

/** What fitting a prompt needs: the model's window (none: the fallback window) and a builder. */
export interface FitTarget {
  llm?: Pick<LanguageModel, 'window'>;
  build: PromptBuilder;
  /** A JSON call's schema: counted with the prompt where the engine writes it there. */
  schema?: JsonSchema;
  /**
   * The least output worth calling with: when what must go in leaves less than `output`, the call
   * still goes with a shorter answer, down to this (a reply: a short answer beats none). Default:
   * `output`, no shorter.
   */
  minOutput?: number;
  /** Tokens the answer should be allowed (capped by the engine's maxOutputTokens). */
  output: number;
  /**
   * More output the answer may have where the prompt leaves the room: the prompt is fitted beside
   * `output`, and the call goes with up to this much (prompt plus output still within the window).
   * A reply's prompt may then grow into room its answer is not expected to need. Default: `output`.
   */
  upTo?: number;
  signal?: AbortSignal;
}

export interface FitRequest extends FitTarget {
  llm: LanguageModel;
}

export interface FittedPrompt {
  messages: ChatMessage[];
  /** The output cap to call with. */
  maxTokens: number;
  /** The prompt's tokens, as counted. */
  promptTokens: number;
  /** Counted by the model's tokenizer (else estimated). */
  exact: boolean;
  window: ModelWindow;
}

/** What must go in (instructions, the current message) is longer than the model can read. */
export class PromptTooLongError extends Error {
  override readonly name = 'PromptTooLongError';
  constructor(
    readonly promptTokens: number,
    readonly window: ModelWindow,
  ) {
    super(
      `This is too long for the model in use: about ${promptTokens.toLocaleString('en-US')} tokens, and it reads at most ` +
        `${window.contextTokens.toLocaleString('en-US')} in one go. Shorten the message, or choose a model with a larger window.`,
    );
  }
}

export function isPromptTooLong(e: unknown): e is PromptTooLongError {
  return e instanceof Error && e.name === 'PromptTooLongError';
}

/** Tokens kept free when the count is an estimate (chat templates differ a little). */
const ESTIMATE_SLACK = 16;
const MAX_BUILDS = 4;

async function count(window: ModelWindow, messages: ChatMessage[], signal?: AbortSignal): Promise<{ n: number; exact: boolean }> {
  if (window.countTokens) {
    try {
      return { n: await window.countTokens(messages, signal), exact: true };
    } catch (e) {
      if (signal?.aborted) throw e;
      // A tokenizer that fails is no reason to fail the call: the estimate is safe.
    }
  }
  return { n: estimateMessages(messages), exact: false };
}

/** Builds the prompt until prompt plus output fits the model's window. */
export async function fitPrompt(req: FitTarget, budgetScale = 1): Promise<FittedPrompt> {
  const window = windowOf(req.llm);
  const maxTokens = outputFor(window, req.output);
  const limit = window.contextTokens - maxTokens;
  let budget = Math.floor((limit - (window.countTokens ? 0 : ESTIMATE_SLACK)) * budgetScale);
  let last: { n: number; exact: boolean; messages: ChatMessage[] } | undefined;
  // What the engine adds for JSON in words is not the builder's to fit, but it takes room.
  const sent = (m: ChatMessage[]) => (req.schema && window.schemaInPrompt ? withSchemaInstruction(m, req.schema) : m);
  for (let i = 0; i < MAX_BUILDS; i++) {
    const messages = req.build(Math.max(0, budget));
    const c = await count(window, sent(messages), req.signal);
    if (c.n <= limit && (c.exact || c.n + ESTIMATE_SLACK <= limit))
      return { messages, maxTokens: roomier(req, window, maxTokens, c), promptTokens: c.n, exact: c.exact, window };
    // No smaller than the last build: the parts that must stay do not fit beside the whole
    // answer. A shorter answer, where the caller allows one; else, in words, no call.
    if (last && c.n >= last.n) return shorterAnswer(req, window, messages, c) ?? Promise.reject(new PromptTooLongError(c.n, window));
    last = { ...c, messages };
    budget = Math.floor(budget * Math.min(0.9, limit / c.n)) - ESTIMATE_SLACK;
  }
  const shorter = last && shorterAnswer(req, window, last.messages, last);
  if (shorter) return shorter;
  throw new PromptTooLongError(last?.n ?? 0, window);
}

/** The output cap with what the prompt leaves free, up to `upTo`: never less than `maxTokens`. */
function roomier(req: FitTarget, window: ModelWindow, maxTokens: number, c: { n: number; exact: boolean }): number {
  if (req.upTo === undefined) return maxTokens;
  const free = window.contextTokens - c.n - (c.exact ? 0 : ESTIMATE_SLACK);
  return Math.max(maxTokens, Math.min(outputFor(window, req.upTo), free));
}

function shorterAnswer(
  req: FitTarget,
  window: ModelWindow,
  messages: ChatMessage[],
  c: { n: number; exact: boolean },
): FittedPrompt | undefined {
  const room = window.contextTokens - c.n - (c.exact ? 0 : ESTIMATE_SLACK);
  if (req.minOutput === undefined || room < req.minOutput) return undefined;
  return { messages, maxTokens: Math.min(room, outputFor(window, req.output)), promptTokens: c.n, exact: c.exact, window };
}

async function withRetries<T>(req: FitRequest, call: (p: FittedPrompt) => Promise<T>): Promise<{ value: T; prompt: FittedPrompt }> {
  let scale = 1;
  for (let attempt = 0; ; attempt++) {
    const prompt = await fitPrompt(req, scale);
    try {
      return { value: await call(prompt), prompt };
    } catch (e) {
      if (!isContextOverflow(e) || attempt >= 2) {
        if (isContextOverflow(e)) throw new PromptTooLongError(e.promptTokens || prompt.promptTokens, prompt.window);
        throw e;
      }
      // The engine counted more than we did: shrink by what it said, and a margin.
      const over = e.promptTokens > 0 ? (prompt.window.contextTokens - prompt.maxTokens) / e.promptTokens : 0.8;
      scale *= Math.min(0.85, over * 0.95);
    }
  }
}

export interface FittedCall {
  text: string;
  prompt: FittedPrompt;
}

/** One JSON call, fitted. */
export async function fittedJson(
  req: FitRequest & { schema: JsonSchema; temperature?: number },
  options: Omit<GenerateOptions, 'maxTokens' | 'signal'> = {},
): Promise<FittedCall> {
  const r = await withRetries(req, (p) =>
    req.llm.json(p.messages, req.schema, {
      ...options,
      signal: req.signal,
      maxTokens: p.maxTokens,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    }),
  );
  return { text: r.value, prompt: r.prompt };
}

/** One streamed chat call, fitted. */
export async function fittedChat(req: FitRequest, options: Omit<GenerateOptions, 'maxTokens' | 'signal'> = {}): Promise<FittedCall> {
  const r = await withRetries(req, (p) => req.llm.chat(p.messages, { ...options, signal: req.signal, maxTokens: p.maxTokens }));
  return { text: r.value, prompt: r.prompt };
}
