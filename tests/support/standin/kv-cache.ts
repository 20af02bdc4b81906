// What an engine keeps of the previous request, and so what it must read anew before the first
// token of the next one. Pure: the stand-in (enforce.ts) holds the state, one per engine.
//
// - 'exact' (web-llm 0.2.86, MLCEngine.preparePrefillInput): the request's messages but the last
//   are built into a Conversation and compared with the one the pipeline holds
//   (compareConversationObject: system message, every message's role and text, their number). The
//   held one is the previous request's messages plus the reply it wrote (Conversation.finishReply).
//   Equal: the KV cache is kept and only the last round is read (getPromptArrayLastRound). Anything
//   else resets and reads the whole prompt: a different message anywhere, another request in
//   between (a JSON call holds its own messages and answer), a previous answer that ended by
//   "length" or "abort" (its last sampled token is not in the cache).
// - 'lcp' (llama.cpp's server with cache_prompt, Ollama's runner): one slot keeps the tokens of its
//   last prompt and output; the next prompt reuses the longest common prefix of token ids, and at
//   least its last token is read again (its logits start the answer). One slot is modelled: a
//   server with several slots, or llama.cpp's prompt cache in host memory, may keep the chat's
//   prefix across a JSON call, so this is the worse case for those.
// - 'prefix' (the CPU engine, src/models/cpu-llm-worker-core.ts): after a call that ended by
//   itself it keeps the key-value cache of that prompt and answer (every token but the last one
//   written, which is never fed back); the next prompt whose token ids start with all of them, and
//   go on past them, reads only the rest. Anything else (a JSON call in between holds its own, a
//   changed earlier message, a reply cut by length or stopped) reads the whole prompt.
// - 'none' (an engine that keeps nothing): everything is read anew.
import type { ChatMessage } from '../../../src/ports';

export type CacheRule = 'exact' | 'lcp' | 'prefix' | 'none';
export const CACHE_RULES: readonly CacheRule[] = ['exact', 'lcp', 'prefix', 'none'];

/** Whether the rule compares token ids (so requests must carry them). */
export const needsIds = (rule: CacheRule): boolean => rule === 'lcp' || rule === 'prefix';

/** How a call's output ended. */
export type Finish = 'stop' | 'length' | 'abort';

/** A request as the engine reads it: the messages sent (schema instruction included) and their tokens. */
export interface KvRequest {
  messages: readonly ChatMessage[];
  /** Tokens of the templated prompt. */
  promptTokens: number;
  /** The templated prompt's token ids ('lcp' and 'prefix' only). */
  ids?: readonly number[];
}

/** What the engine holds after a call. */
export interface KvState {
  /** The conversation held: the request's messages and the answer it wrote ('exact'). */
  messages?: readonly ChatMessage[];
  /** Tokens in the cache: the prompt's and the answer's. */
  tokens: number;
  /** Their ids ('lcp', 'prefix'). */
  ids?: readonly number[];
  finish: Finish;
}

export interface KvRead {
  /** Tokens read before the first output token. */
  readAnew: number;
  /** Tokens of the prompt taken from the cache. */
  cachedTokens: number;
}

const sameMessage = (a: ChatMessage, b: ChatMessage) => a.role === b.role && a.content === b.content;

/** Whether `request` continues the held conversation as web-llm requires to keep its cache. */
export function extendsExactly(held: KvState | undefined, request: KvRequest): boolean {
  if (!held?.messages || held.finish !== 'stop') return false;
  const kept = held.messages;
  const before = request.messages.slice(0, -1);
  return before.length === kept.length && before.every((m, i) => sameMessage(m, kept[i]!));
}

/** Length of the longest common prefix of two id lists. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Tokens `request` costs to read under `rule`, given what the engine holds. */
export function readRequest(rule: CacheRule, held: KvState | undefined, request: KvRequest): KvRead {
  const total = request.promptTokens;
  let cached = 0;
  if (rule === 'exact' && extendsExactly(held, request)) cached = held!.tokens;
  if (needsIds(rule) && held?.ids) {
    if (!request.ids) throw new Error(`the '${rule}' cache rule needs the prompt's token ids`);
    const common = commonPrefix(held.ids, request.ids);
    if (rule === 'lcp') cached = common;
    // 'prefix': all of the held tokens or none, and only after an answer that ended by itself.
    else if (held.finish === 'stop' && common === held.ids.length && request.ids.length > common) cached = common;
  }
  // The last token of the prompt is always read: its logits give the first output token.
  cached = Math.max(0, Math.min(cached, total - 1));
  return { readAnew: total - cached, cachedTokens: cached };
}

/** What the engine holds after answering `request` with `output`. */
export function holdAfter(
  rule: CacheRule,
  request: KvRequest,
  output: { text: string; tokens: number; ids?: readonly number[] },
  finish: Finish,
): KvState | undefined {
  switch (rule) {
    case 'none':
      return undefined;
    case 'exact':
      return {
        messages: [...request.messages, { role: 'assistant', content: output.text }],
        tokens: request.promptTokens + output.tokens,
        finish,
      };
    case 'lcp':
    case 'prefix': {
      if (!request.ids || !output.ids) throw new Error(`the '${rule}' cache rule needs token ids`);
      const ids = [...request.ids, ...output.ids];
      return { tokens: ids.length, ids, finish };
    }
  }
}
