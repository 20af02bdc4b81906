// Engine profiles of the stand-in: the window, output cap, tokenizer and chat template of the
// engines Tealeaf ships (src/models/catalog.ts), and how a prompt is counted under them.
import type { ChatMessage, JsonSchema } from '../../../src/ports';
import { CACHE_RULES, type CacheRule } from './kv-cache';
import { countText, type Tok, type TokenizerFamily } from './tokenizer';

export type ChatTemplate = 'chatml' | 'llama3' | 'phi3';

export interface EngineProfile {
  name: string;
  /** What it stands for, in words. */
  engine: string;
  tokenizer: TokenizerFamily;
  template: ChatTemplate;
  /** Prompt plus output, in tokens. */
  contextTokens: number;
  /** The most one call writes. */
  maxOutputTokens: number;
  /** The system message the template adds when the messages have none. */
  defaultSystem?: string;
  /** Text the template puts after the assistant's opening marker (Qwen3 without thinking). */
  replyPrefix?: string;
  /** Whether callers get `window.countTokens`: some real runtimes can count, some cannot. */
  exposesCount: boolean;
  /**
   * The engine puts the JSON schema into the prompt itself (the CPU engine has no grammar:
   * CpuLlmRuntime.json appends jsonInstruction to the last user message), so those tokens count.
   */
  schemaInPrompt: boolean;
  /**
   * Tokens of answer that must fit beside a prompt for it to be read at all: web-llm refuses only
   * a prompt over the window (0), the CPU engine one that leaves no room for a token (1).
   */
  minRoom: number;
  /**
   * A JSON call is refused unless its whole output cap fits beside the prompt (the CPU engine:
   * a JSON answer cut short is no answer, so the caller is told to build it smaller).
   */
  jsonNeedsFullOutput: boolean;
  /**
   * What the engine keeps of the previous request (kv-cache.ts): 'exact' (web-llm: the held
   * conversation extended exactly), 'lcp' (llama.cpp, Ollama: the longest common token prefix),
   * 'prefix' (the CPU engine: its last finished call's tokens, where the next prompt's ids start
   * with them all), 'none' (every prompt read whole).
   */
  cache: CacheRule;
}

// mlc-llm's conversation template for Qwen2 models (web-llm); transformers.js applies the chat
// template of the model's tokenizer_config.json, whose default is Qwen2.5's own.
const MLC_QWEN_SYSTEM = 'You are a helpful assistant.';
const HF_QWEN25_SYSTEM = 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.';
const MLC_LLAMA3_SYSTEM = 'You are a helpful, respectful and honest assistant.';

const PROFILE_LIST: EngineProfile[] = [
  {
    name: 'webgpu-4096',
    engine: 'web-llm, Qwen2.5-1.5B-Instruct (the default model)',
    tokenizer: 'qwen2.5',
    template: 'chatml',
    contextTokens: 4096,
    maxOutputTokens: 1024,
    defaultSystem: MLC_QWEN_SYSTEM,
    // web-llm's loaded tokenizer counts (src/models/webllm-tokens.ts); the builders' estimate is
    // tested too, with exposesCount off.
    exposesCount: true,
    schemaInPrompt: false,
    minRoom: 0,
    jsonNeedsFullOutput: false,
    cache: 'exact',
  },
  {
    name: 'cpu-2048',
    engine: 'CPU engine (transformers.js), onnx-community/Qwen2.5-0.5B-Instruct',
    tokenizer: 'qwen2.5',
    template: 'chatml',
    contextTokens: 2048,
    maxOutputTokens: 384,
    defaultSystem: HF_QWEN25_SYSTEM,
    exposesCount: true,
    schemaInPrompt: true,
    minRoom: 1,
    jsonNeedsFullOutput: true,
    // CpuLlmWorkerCore.chat gives generate() the past key values of the last finished call when
    // the prompt's ids extend them.
    cache: 'prefix',
  },
  {
    name: 'llama3.2-4096',
    engine: 'web-llm, Llama-3.2-1B/3B-Instruct',
    tokenizer: 'llama3',
    template: 'llama3',
    contextTokens: 4096,
    maxOutputTokens: 1024,
    defaultSystem: MLC_LLAMA3_SYSTEM,
    exposesCount: false,
    schemaInPrompt: false,
    minRoom: 0,
    jsonNeedsFullOutput: false,
    cache: 'exact',
  },
  {
    name: 'qwen3-4096',
    engine: 'web-llm, Qwen3-1.7B with thinking off',
    tokenizer: 'qwen2.5',
    template: 'chatml',
    contextTokens: 4096,
    maxOutputTokens: 1024,
    replyPrefix: '<think>\n\n</think>\n\n',
    exposesCount: false,
    schemaInPrompt: false,
    minRoom: 0,
    jsonNeedsFullOutput: false,
    cache: 'exact',
  },
  {
    name: 'phi3.5-4096',
    engine: 'web-llm, Phi-3.5-mini-instruct (counted with a 32k SentencePiece vocabulary: approximate)',
    tokenizer: 'llama2',
    template: 'phi3',
    contextTokens: 4096,
    maxOutputTokens: 1024,
    exposesCount: false,
    schemaInPrompt: false,
    minRoom: 0,
    jsonNeedsFullOutput: false,
    cache: 'exact',
  },
  {
    name: 'server-4096',
    engine: 'llama.cpp server or Ollama, Qwen2.5 (GGUF), a 4,096-token context',
    tokenizer: 'qwen2.5',
    template: 'chatml',
    contextTokens: 4096,
    maxOutputTokens: 1024,
    defaultSystem: HF_QWEN25_SYSTEM,
    // llama.cpp counts exactly (/apply-template, /tokenize; src/models/server-window.ts).
    exposesCount: true,
    // Both constrain JSON with a grammar (response_format).
    schemaInPrompt: false,
    // llama.cpp refuses a prompt that fills its context; it reads the last token for the first logits.
    minRoom: 1,
    jsonNeedsFullOutput: false,
    cache: 'lcp',
  },
];

export const PROFILES: Readonly<Record<string, EngineProfile>> = Object.fromEntries(PROFILE_LIST.map((p) => [p.name, p]));
export const DEFAULT_PROFILE = 'webgpu-4096';

/**
 * A profile from a spec: a profile's name, or JSON naming one with fields to change, e.g.
 * `{"profile": "cpu-2048", "contextTokens": 1024, "exposesCount": false}`. Empty: the default.
 */
export function engineProfile(spec?: string | null): EngineProfile {
  const text = spec?.trim() || DEFAULT_PROFILE;
  let name = text;
  let changes: Partial<EngineProfile> = {};
  if (text.startsWith('{')) {
    const parsed = JSON.parse(text) as Partial<EngineProfile> & { profile?: string };
    const { profile, ...rest } = parsed;
    name = profile ?? DEFAULT_PROFILE;
    changes = rest;
  }
  const base = PROFILES[name];
  if (!base) throw new Error(`Unknown stand-in profile "${name}" (known: ${Object.keys(PROFILES).join(', ')})`);
  if (changes.cache !== undefined && !CACHE_RULES.includes(changes.cache))
    throw new Error(`Unknown stand-in cache rule "${String(changes.cache)}" (known: ${CACHE_RULES.join(', ')})`);
  return { ...base, ...changes, name: changes.name ?? base.name };
}

/** One piece of a templated prompt: plain text, or a special token (one id). */
type Piece = string | { special: string };

/** The prompt as the profile's chat template lays it out, ending with the assistant's opening. */
export function templatePieces(profile: EngineProfile, messages: readonly ChatMessage[]): Piece[] {
  const all =
    profile.defaultSystem !== undefined && messages[0]?.role !== 'system'
      ? [{ role: 'system' as const, content: profile.defaultSystem }, ...messages]
      : messages;
  const out: Piece[] = [];
  switch (profile.template) {
    case 'chatml':
      // <|im_start|>role\ncontent<|im_end|>\n per message, then <|im_start|>assistant\n.
      for (const m of all) out.push({ special: '<|im_start|>' }, `${m.role}\n${m.content}`, { special: '<|im_end|>' }, '\n');
      out.push({ special: '<|im_start|>' }, `assistant\n${profile.replyPrefix ?? ''}`);
      break;
    case 'llama3':
      // mlc-llm's llama-3_1 template: the begin token, then a header per message.
      out.push({ special: '<|begin_of_text|>' });
      for (const m of all)
        out.push({ special: '<|start_header_id|>' }, m.role, { special: '<|end_header_id|>' }, `\n\n${m.content}`, {
          special: '<|eot_id|>',
        });
      out.push({ special: '<|start_header_id|>' }, 'assistant', { special: '<|end_header_id|>' }, '\n\n');
      break;
    case 'phi3':
      out.push({ special: '<s>' });
      for (const m of all) out.push({ special: `<|${m.role}|>` }, `\n${m.content}`, { special: '<|end|>' }, '\n');
      out.push({ special: '<|assistant|>' }, '\n');
      break;
  }
  return out;
}

/** What CpuLlmRuntime.json sends: its schema instruction appended to the last user message. */
export function withSchemaInstruction(messages: readonly ChatMessage[], schema: JsonSchema): ChatMessage[] {
  // The words of src/models/cpu-llm-runtime.ts jsonInstruction (not imported: it would bring the worker client).
  const instruction = `Answer with one JSON value only, no prose and no code fences, matching this JSON schema:\n${JSON.stringify(schema)}`;
  const last = messages.map((m) => m.role).lastIndexOf('user');
  if (last < 0) return [...messages, { role: 'user', content: instruction }];
  return messages.map((m, i) => (i === last ? { ...m, content: `${m.content}\n\n${instruction}` } : m));
}

/**
 * Tokens of the prompt as the engine reads it: the template's special tokens one each, the text
 * between them by the tokenizer (added tokens split text first in a real tokenizer too, so this
 * is what encoding the whole templated string gives). With `schema`, a schema-in-prompt engine's
 * instruction counts too.
 */
export function countPrompt(tok: Tok, profile: EngineProfile, messages: readonly ChatMessage[], schema?: JsonSchema): number {
  const sent = schema && profile.schemaInPrompt ? withSchemaInstruction(messages, schema) : messages;
  let n = 0;
  for (const piece of templatePieces(profile, sent)) n += typeof piece === 'string' ? countText(tok, piece) : 1;
  return n;
}
