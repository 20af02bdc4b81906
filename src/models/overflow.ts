// A prompt too long for the model's window, in each engine's own words, read into one
// ContextOverflowError (ports.ts): the caller builds the call again smaller (src/memory/fit/).
// Pure: the wordings are pinned by tests/unit/models/overflow.test.ts.
import { ContextOverflowError, isContextOverflow } from '../ports';
import { WorkerCallError } from './rpc';

/** web-llm 0.2.86's ContextWindowSizeExceededError (its name survives the worker, its class does not). */
const WEBLLM_RE = /Prompt tokens exceed context window size: number of prompt tokens: (\d+); context window size: (\d+)/i;

/** web-llm's refusal of a prompt longer than its window, or undefined for any other error. */
export function webLlmOverflow(err: unknown, contextTokens: number): ContextOverflowError | undefined {
  if (!(err instanceof Error)) return undefined;
  const m = WEBLLM_RE.exec(err.message);
  if (!m && err.name !== 'ContextWindowSizeExceededError') return undefined;
  return new ContextOverflowError(m ? Number(m[1]) : 0, m ? Number(m[2]) : contextTokens, 'web-llm');
}

/** A ContextOverflowError thrown in a worker (its counts travel in SerializedError.tokens). */
export function workerOverflow(err: unknown, contextTokens: number): ContextOverflowError | undefined {
  if (err instanceof ContextOverflowError) return err;
  const t = err instanceof WorkerCallError ? err.serialized.tokens : undefined;
  if (!isContextOverflow(err)) return undefined;
  return new ContextOverflowError(t?.prompt ?? 0, t?.context ?? contextTokens);
}

export interface ServerOverflow {
  /** 0 when the server did not say. */
  promptTokens: number;
  /** The server's window, where it said. */
  contextTokens?: number;
}

const num = (re: RegExp, text: string): number | undefined => {
  const m = re.exec(text);
  return m ? Number(m[1]) : undefined;
};

/**
 * A model server's refusal of a prompt longer than its context (the body of a 400, or an error
 * event in a stream), or undefined. A refused max_tokens alone (vLLM: "'max_tokens' ... is too
 * large") is not one: the prompt fits, and the call is asked again without the limit.
 */
export function serverOverflow(body: string): ServerOverflow | undefined {
  // llama.cpp: {"error":{"message":"request (N tokens) exceeds the available context size (M tokens),
  // try increasing it","type":"exceed_context_size_error","n_prompt_tokens":N,"n_ctx":M}}; older
  // builds: "input (N tokens) is larger than the max context size (M tokens). skipping".
  if (/exceed_context_size_error|exceeds (the available )?context size|larger than the max context size/i.test(body)) {
    return {
      promptTokens: num(/"n_prompt_tokens"\s*:\s*(\d+)/, body) ?? num(/(?:request|input) \((\d+) tokens\)/i, body) ?? 0,
      contextTokens: num(/"n_ctx"\s*:\s*(\d+)/, body) ?? num(/context size \((\d+) tokens\)/i, body),
    };
  }
  // LM Studio 0.3: "Trying to keep the first N tokens when context the overflows. However, the model
  // is loaded with context length of only M tokens, which is not enough. ..."; 0.4: "Context size
  // has been exceeded."
  const keep = /Trying to keep the first (\d+) tokens[\s\S]*?context length of only (\d+) tokens/i.exec(body);
  if (keep) return { promptTokens: Number(keep[1]), contextTokens: Number(keep[2]) };
  if (/Context size has been exceeded/i.test(body)) return { promptTokens: 0 };
  // Ollama, where it refuses rather than cuts (context shift off): "the prompt is longer than the
  // context length currently available to the model; ..."
  if (/prompt is longer than the context length/i.test(body)) return { promptTokens: 0 };
  // vLLM: "This model's maximum context length is M tokens. However, your request has N input
  // tokens." (the prompt alone); older: "... However, you requested T tokens (N in the messages, X
  // in the completion)." (an overflow only where the messages alone do not fit); v1 engine: "The
  // decoder prompt (length N) ... is longer than the maximum model length of M".
  if (/'?max_(completion_)?tokens'? (or '?max_completion_tokens'? )?is too large/i.test(body)) return undefined;
  const max = num(/maximum context length is (\d+) tokens/i, body);
  const input = num(/your request has (\d+) input tokens/i, body);
  if (max !== undefined && input !== undefined) return { promptTokens: input, contextTokens: max };
  const inMessages = num(/\((\d+) in the messages/i, body);
  if (max !== undefined && inMessages !== undefined && inMessages >= max) return { promptTokens: inMessages, contextTokens: max };
  const decoder = /decoder prompt \(length (\d+)\)[\s\S]*?maximum model length of (\d+)/i.exec(body);
  if (decoder) return { promptTokens: Number(decoder[1]), contextTokens: Number(decoder[2]) };
  return undefined;
}
