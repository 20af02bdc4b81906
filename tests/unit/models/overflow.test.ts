// Each engine's words for a prompt longer than its window, read into one ContextOverflowError; a
// refused max_tokens (the prompt fits) is not one.
import { describe, expect, it } from 'vitest';
import { ContextOverflowError, isContextOverflow } from '../../../src/ports';
import { serializeError } from '../../../src/models/errors';
import { serverOverflow, webLlmOverflow, workerOverflow } from '../../../src/models/overflow';
import { WorkerCallError } from '../../../src/models/rpc';

describe('webLlmOverflow', () => {
  // web-llm 0.2.86's ContextWindowSizeExceededError, as it arrives from the worker.
  const message =
    'Prompt tokens exceed context window size: number of prompt tokens: 4310; context window size: 4096\n' +
    'Consider shortening the prompt, or increase `context_window_size`, or using sliding window via `sliding_window_size`.';

  it('reads the counts from the message, whatever the class', () => {
    const e = webLlmOverflow(new WorkerCallError({ name: 'ContextWindowSizeExceededError', message }), 4096);
    expect(e).toBeInstanceOf(ContextOverflowError);
    expect(e).toMatchObject({ promptTokens: 4310, contextTokens: 4096 });
    expect(webLlmOverflow(new Error(message), 1)).toMatchObject({ promptTokens: 4310 });
  });

  it('leaves other errors alone', () => {
    expect(webLlmOverflow(new Error('GPU device lost'), 4096)).toBeUndefined();
    expect(webLlmOverflow('Prompt tokens exceed', 4096)).toBeUndefined();
  });
});

describe('workerOverflow', () => {
  it('keeps the counts across the worker boundary', () => {
    const serialized = structuredClone(serializeError(new ContextOverflowError(2100, 2048)));
    const e = workerOverflow(new WorkerCallError(serialized), 9);
    expect(isContextOverflow(e)).toBe(true);
    expect(e).toMatchObject({ promptTokens: 2100, contextTokens: 2048 });
    expect(workerOverflow(new WorkerCallError({ message: 'x', name: 'ContextOverflowError' }), 2048)).toMatchObject({
      promptTokens: 0,
      contextTokens: 2048,
    });
    expect(workerOverflow(new WorkerCallError({ message: 'x', name: 'Error' }), 2048)).toBeUndefined();
  });
});

describe('serverOverflow', () => {
  it.each([
    [
      'llama.cpp',
      '{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}',
      { promptTokens: 5000, contextTokens: 4096 },
    ],
    [
      'llama.cpp (older)',
      '{"error":{"message":"input (9000 tokens) is larger than the max context size (8192 tokens). skipping"}}',
      { promptTokens: 9000, contextTokens: 8192 },
    ],
    [
      'LM Studio 0.3',
      '{"error":"Trying to keep the first 5650 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}',
      { promptTokens: 5650, contextTokens: 4096 },
    ],
    ['LM Studio 0.4', '{"error":"Context size has been exceeded."}', { promptTokens: 0 }],
    [
      'Ollama',
      '{"error":{"message":"the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length"}}',
      { promptTokens: 0 },
    ],
    [
      'vLLM',
      `{"error":{"message":"This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages."}}`,
      { promptTokens: 40000, contextTokens: 32768 },
    ],
    [
      'vLLM (older)',
      `This model's maximum context length is 2048 tokens. However, you requested 2500 tokens (2100 in the messages, 400 in the completion).`,
      { promptTokens: 2100, contextTokens: 2048 },
    ],
    [
      'vLLM (v1 engine)',
      'The decoder prompt (length 2048) plus the number of requested output tokens (at least 1) is longer than the maximum model length of 2048.',
      { promptTokens: 2048, contextTokens: 2048 },
    ],
  ])('reads %s', (_server, body, expected) => {
    expect(serverOverflow(body)).toEqual(expected);
  });

  it.each([
    [
      'a refused max_tokens (vLLM)',
      `'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778).`,
    ],
    [
      'a prompt that fits beside too long an answer',
      `This model's maximum context length is 2048 tokens. However, you requested 2500 tokens (1500 in the messages, 1000 in the completion).`,
    ],
    ['the fake max_tokens refusal', `This model's maximum context length is 2048 tokens. However, you requested 4096 tokens.`],
    ['another error', 'response_format is not supported'],
  ])('leaves %s alone', (_what, body) => {
    expect(serverOverflow(body)).toBeUndefined();
  });
});
