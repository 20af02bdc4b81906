// What a model server says it read for a request: only the tokens it did not have cached are read
// (prefilled) anew, and that is the wait before the first word. Servers report it in their own
// fields, at the end of a streamed answer; where none is reported, the app's own count stands.
// - llama.cpp's server: `timings.prompt_n` (read anew) and `timings.cache_n` (reused from its cache);
// - OpenAI-compatible servers that report cache hits (vLLM, LM Studio): `usage.prompt_tokens` with
//   `usage.prompt_tokens_details.cached_tokens` (asked for with `stream_options.include_usage`);
// - Ollama's own route: `prompt_eval_count` on its last line (the tokens it evaluated, the cached
//   prefix left out).
import type { EngineRead } from '../ports';

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined);

interface UsageChunk {
  timings?: { prompt_n?: unknown; cache_n?: unknown };
  usage?: { prompt_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } | null } | null;
  prompt_eval_count?: unknown;
  done?: unknown;
}

/** The engine's own figures in one chunk of an answer, when it holds them. */
export function engineRead(chunk: unknown): EngineRead | undefined {
  if (typeof chunk !== 'object' || chunk === null) return undefined;
  const c = chunk as UsageChunk;
  const anew = count(c.timings?.prompt_n);
  if (anew !== undefined) {
    const cached = count(c.timings?.cache_n);
    const prompt = cached !== undefined ? anew + cached : count(c.usage?.prompt_tokens);
    return { readTokens: anew, ...(prompt !== undefined && prompt >= anew ? { promptTokens: prompt } : {}) };
  }
  const prompt = count(c.usage?.prompt_tokens);
  const cached = count(c.usage?.prompt_tokens_details?.cached_tokens);
  if (prompt !== undefined && cached !== undefined && cached <= prompt) return { readTokens: prompt - cached, promptTokens: prompt };
  const evaluated = count(c.prompt_eval_count);
  if (c.done === true && evaluated !== undefined) return { readTokens: evaluated };
  return undefined;
}
