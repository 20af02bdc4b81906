// Counting a prompt's tokens exactly as web-llm 0.2.86 will read it, with the loaded model's own
// tokenizer and conversation template. web-llm exports neither: the engine keeps them privately
// (MLCEngine.loadedModelIdToPipeline -> LLMChatPipeline.tokenizer, .conversation), so every part
// is feature-detected and a shape that differs gives no counter (callers then estimate) rather
// than an error. Pure: the worker glue (llm.worker.ts) passes the engine in; unit tested.
import type { ChatMessage } from '../ports';

/** What web-llm's forwardPrefill appends when Qwen3's thinking is off (enable_thinking: false). */
const EMPTY_THINKING = '<think>\n\n</think>\n\n';

interface ConversationLike {
  config: { system_prefix_token_ids?: unknown };
  override_system_message?: string;
  appendMessage(role: string, content: string): void;
  appendReplyHeader(role: string): void;
  appendEmptyThinkingReplyHeader?(role: string, block: string): void;
  getPromptArray(config?: unknown): unknown[];
  getArtifactPromptSegments?(): unknown[];
}

type ConversationClass = new (config: unknown, isTextCompletion: boolean) => ConversationLike;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isFunction = (v: unknown): v is (...args: unknown[]) => unknown => typeof v === 'function';

/** Counts `messages` as a chat completion request; throws where web-llm would refuse them too. */
export type PromptCounter = (messages: ChatMessage[], thinkingOff: boolean) => number;

/** A counter for the model `modelId` loaded in `engine` (an MLCEngine), or undefined. */
export function webLlmCounter(engine: unknown, modelId: string): PromptCounter | undefined {
  const pipelines = isObject(engine) ? engine.loadedModelIdToPipeline : undefined;
  const pipeline = pipelines instanceof Map ? (pipelines.get(modelId) as unknown) : undefined;
  if (!isObject(pipeline)) return undefined;
  const tokenizer = pipeline.tokenizer;
  const conversation = pipeline.conversation;
  if (!isObject(tokenizer) || !isFunction(tokenizer.encode) || !isObject(conversation)) return undefined;
  const Conversation = conversation.constructor as unknown;
  const proto = isFunction(Conversation) ? (Conversation.prototype as unknown) : undefined;
  const config = conversation.config;
  const methods = ['appendMessage', 'appendReplyHeader', 'getPromptArray'];
  if (!isObject(proto) || !isObject(config) || !methods.every((m) => isFunction(proto[m]))) return undefined;
  const encode = (text: string): number => {
    const ids = (tokenizer.encode as (t: string) => unknown).call(tokenizer, text);
    if (!isObject(ids) || typeof ids.length !== 'number') throw new Error('The tokenizer returned no tokens.');
    return ids.length;
  };
  const prefix = Array.isArray(config.system_prefix_token_ids) ? config.system_prefix_token_ids.length : 0;
  const artifact = pipeline.artifact !== undefined;

  return (messages, thinkingOff) => {
    // As getConversationFromChatCompletionRequest and prefillStep build it: the system message
    // replaces the template's, the last message (the user's) is the input, then the reply header.
    if (messages.at(-1)?.role !== 'user') throw new Error('The last message should be from the user.');
    const c = new (Conversation as ConversationClass)(config, false);
    messages.forEach((m, i) => {
      if (m.role !== 'system') c.appendMessage(m.role, m.content);
      else if (i === 0) c.override_system_message = m.content;
      else throw new Error('A system message must come first.');
    });
    if (thinkingOff && c.appendEmptyThinkingReplyHeader) c.appendEmptyThinkingReplyHeader('assistant', EMPTY_THINKING);
    else c.appendReplyHeader('assistant');
    const parts = artifact && c.getArtifactPromptSegments ? c.getArtifactPromptSegments() : c.getPromptArray(pipeline.config);
    let n = prefix;
    for (const part of parts) {
      if (typeof part !== 'string') throw new Error('Only text prompts are counted.');
      n += encode(part);
    }
    return n;
  };
}
