// Counting with web-llm's private parts: a stand-in engine shaped like web-llm 0.2.86's (MLCEngine
// -> loadedModelIdToPipeline -> LLMChatPipeline with tokenizer and Conversation), its template
// rendering copied in miniature for text messages. Other shapes give no counter, never a crash.
import { describe, expect, it } from 'vitest';
import { webLlmCounter } from '../../../src/models/webllm-tokens';
import type { ChatMessage } from '../../../src/ports';

/** ChatML as Qwen2.5's mlc-chat-config.json describes it. */
const CHATML = {
  system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
  system_message: 'You are a helpful assistant.',
  roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
  seps: ['<|im_end|>\n'],
  role_content_sep: '\n',
  role_empty_sep: '\n',
  system_prefix_token_ids: [] as number[],
};

/** web-llm's Conversation, text only (getPromptArrayInternal's string path). */
class Conversation {
  messages: Array<[string, string, string | undefined]> = [];
  override_system_message?: string;
  constructor(
    readonly config: typeof CHATML,
    readonly isTextCompletion = false,
  ) {}
  appendMessage(role: 'user' | 'assistant', message: string) {
    this.messages.push([role, this.config.roles[role], message]);
  }
  appendReplyHeader(role: 'assistant') {
    this.messages.push([role, this.config.roles[role], undefined]);
  }
  appendEmptyThinkingReplyHeader(role: 'assistant', block: string) {
    this.messages.push([role, this.config.roles[role], `\u0000${block}`]);
  }
  getPromptArray(): string[] {
    const system = this.config.system_template.replace('{system_message}', this.override_system_message ?? this.config.system_message);
    const out = [system];
    this.messages.forEach(([, roleStr, content], i) => {
      if (content === undefined) out.push(roleStr + this.config.role_empty_sep);
      else if (content.startsWith('\u0000')) out.push(roleStr + this.config.role_content_sep + content.slice(1));
      else out.push(roleStr + this.config.role_content_sep + content + this.config.seps[i % this.config.seps.length]);
    });
    return out;
  }
}

/** A tokenizer: special markers, words, punctuation and runs of space are one token each. */
const pieces = (text: string) => text.match(/<\|[a-z_]+\|>|\w+|[^\w\s]|\s+/g) ?? [];
const tokenizer = { encode: (text: string) => new Int32Array(pieces(text).length) };

function engineWith(pipeline: unknown, id = 'Qwen2.5-1.5B-Instruct-q4f16_1-MLC') {
  return { loadedModelIdToPipeline: new Map([[id, pipeline]]) };
}
const pipeline = () => ({ tokenizer, conversation: new Conversation(CHATML), config: { model_type: 'qwen2' } });
const ID = 'Qwen2.5-1.5B-Instruct-q4f16_1-MLC';

const prompt: ChatMessage[] = [
  { role: 'system', content: 'Be brief, and kind.' },
  { role: 'user', content: 'Hello!' },
  { role: 'assistant', content: 'Hi, how can I help?' },
  { role: 'user', content: 'What is tea?' },
];

describe('webLlmCounter', () => {
  it('counts the prompt as web-llm renders it: the system message, each turn with its markers, the reply header', () => {
    const count = webLlmCounter(engineWith(pipeline()), ID)!;
    const rendered =
      '<|im_start|>system\nBe brief, and kind.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n' +
      '<|im_start|>assistant\nHi, how can I help?<|im_end|>\n<|im_start|>user\nWhat is tea?<|im_end|>\n<|im_start|>assistant\n';
    expect(count(prompt, false)).toBe(pieces(rendered).length);
    // The template's own system message where the caller has none.
    expect(count(prompt.slice(1), false)).toBe(
      count(prompt, false) - pieces('Be brief, and kind.').length + pieces(CHATML.system_message).length,
    );
    // Qwen3 with thinking off: the empty thinking block is part of the prompt.
    expect(count(prompt, true)).toBe(pieces(rendered + '<think>\n\n</think>\n\n').length);
  });

  it("adds the template's prefix tokens (a BOS) and leaves the engine's own conversation alone", () => {
    const p = pipeline();
    p.conversation = new Conversation({ ...CHATML, system_prefix_token_ids: [1] });
    const count = webLlmCounter(engineWith(p), ID)!;
    const plain = webLlmCounter(engineWith(pipeline()), ID)!;
    expect(count(prompt, false)).toBe(plain(prompt, false) + 1);
    expect(p.conversation.messages).toEqual([]);
  });

  it('refuses what web-llm refuses: a system message after the first, a last message not from the user', () => {
    const count = webLlmCounter(engineWith(pipeline()), ID)!;
    expect(() => count([...prompt, { role: 'system', content: 'late' }, { role: 'user', content: 'x' }], false)).toThrow(/first/);
    expect(() => count(prompt.slice(0, 3), false)).toThrow(/last message/);
  });

  it('gives no counter where the private shape differs', () => {
    expect(webLlmCounter(undefined, ID)).toBeUndefined();
    expect(webLlmCounter({}, ID)).toBeUndefined();
    expect(webLlmCounter({ loadedModelIdToPipeline: { get: () => pipeline() } }, ID)).toBeUndefined();
    expect(webLlmCounter(engineWith(pipeline(), 'another-model'), ID)).toBeUndefined();
    expect(webLlmCounter(engineWith({ ...pipeline(), tokenizer: {} }), ID)).toBeUndefined();
    // A conversation that is a plain object has no class to make a fresh one from.
    expect(webLlmCounter(engineWith({ ...pipeline(), conversation: { config: CHATML, getPromptArray: () => [] } }), ID)).toBeUndefined();
  });

  it('fails the count (not the app) when the tokenizer answers something else', () => {
    const count = webLlmCounter(engineWith({ ...pipeline(), tokenizer: { encode: () => null } }), ID)!;
    expect(() => count(prompt, false)).toThrow(/no tokens/);
  });
});
