// Every model call is bounded: a model (or a server) that never stops writing must not hold a
// reply or a memorising job forever. Small models in JSON mode are known to write endless
// whitespace, and a server may ignore max_tokens, so each engine applies what it can of these.

export interface CallLimits {
  /** Tokens the model may write, when the caller asks for no fewer (GenerateOptions.maxTokens). */
  maxTokens: number;
  /** Characters read before the call is stopped (for engines that cannot enforce maxTokens). */
  maxChars: number;
  /** The whole call, from the request to its last byte. */
  totalMs: number;
}

/** A chat reply: long answers are fine (the user can Stop), endless ones are not. */
export const CHAT_LIMITS: CallLimits = { maxTokens: 8192, maxChars: 256 * 1024, totalMs: 30 * 60_000 };

/** One structured (JSON) call of the memory pipeline: its answers are far shorter than this. */
export const JSON_LIMITS: CallLimits = { maxTokens: 4096, maxChars: 64 * 1024, totalMs: 10 * 60_000 };

/** The caller's token budget, capped by the call's limit. */
export function tokenBudget(asked: number | undefined, limits: CallLimits): number {
  return asked !== undefined && asked > 0 ? Math.min(asked, limits.maxTokens) : limits.maxTokens;
}

/**
 * The most tokens one call may write, for an engine whose window is `contextTokens` and that sets
 * no cap of its own (web-llm, a model server, the browser's model): a quarter of the window, and
 * never more than 1,024 (a long chat reply; the memory pipeline's answers are far shorter), so the
 * prompt always keeps three quarters of the window. web-llm's 4,096-token window gives 1,024.
 */
export function outputCap(contextTokens: number): number {
  return Math.max(1, Math.min(1024, Math.floor(contextTokens / 4)));
}
