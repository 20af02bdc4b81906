// What the stand-in's engines keep of the previous request (tests/support/standin/kv-cache.ts):
// web-llm's exact extension of the held conversation, llama.cpp's and Ollama's longest common
// token prefix, the CPU engine's whole previous call or nothing; and the counts each call records
// (readAnew, cachedTokens).
import { describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../../src/ports';
import { countPrompt, enforce, engineProfile, loadTokenizer, nodeTokenizers, PROFILES } from '../../support/standin';
import { commonPrefix, extendsExactly, holdAfter, readRequest, type KvRequest } from '../../support/standin/kv-cache';
import { promptIds } from '../../support/standin/prompt-ids';

const system = (content: string): ChatMessage => ({ role: 'system', content });
const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

const req = (messages: ChatMessage[], promptTokens: number, ids?: number[]): KvRequest => ({ messages, promptTokens, ids });

/** Streams a fixed reply word by word (stops at its signal); answers every JSON call with one object. */
class Replier implements LanguageModel {
  readonly modelId = 'replier';
  constructor(private readonly reply = 'That sounds like a good plan for the weekend, and the weather should hold.') {}
  async chat(_m: ChatMessage[], o: GenerateOptions = {}): Promise<string> {
    let out = '';
    for (const piece of this.reply.match(/\S+\s*/g) ?? []) {
      if (o.signal?.aborted) break;
      out += piece;
      o.onToken?.(piece);
      await Promise.resolve();
    }
    return out;
  }
  async json(_m: ChatMessage[], _s: JsonSchema): Promise<string> {
    return '{"enough": true, "keywords": []}';
  }
}

const SCHEMA: JsonSchema = { title: 'memory_reflection', type: 'object' };
const S = system('You are a kind companion. Today is Monday.');
const U1 = user('I am going hiking in the mountains on Saturday with my sister.');
const U2 = user('Should I bring a tent or stay in the hut?');

describe('the cache rules, pure', () => {
  it('exact: a request whose messages but the last equal the held conversation reads only what is new', () => {
    const first = req([S, U1], 40);
    const held = holdAfter('exact', first, { text: 'Nice!', tokens: 3 }, 'stop');
    const next = req([S, U1, assistant('Nice!'), U2], 60);
    expect(extendsExactly(held, next)).toBe(true);
    expect(readRequest('exact', held, next)).toEqual({ readAnew: 17, cachedTokens: 43 });
  });

  it('exact: a changed earlier message, a changed system prompt or another reply text misses', () => {
    const held = holdAfter('exact', req([S, U1], 40), { text: 'Nice!', tokens: 3 }, 'stop');
    for (const messages of [
      [S, user('I am going hiking on Sunday.'), assistant('Nice!'), U2],
      [system('You are a kind companion. Today is Tuesday.'), U1, assistant('Nice!'), U2],
      [S, U1, assistant('Nice.'), U2],
      [S, U1, U2],
    ])
      expect(readRequest('exact', held, req(messages, 60))).toEqual({ readAnew: 60, cachedTokens: 0 });
  });

  it('exact: a reply that ended by length or abort resets', () => {
    const next = req([S, U1, assistant('Nice!'), U2], 60);
    for (const finish of ['length', 'abort'] as const) {
      const held = holdAfter('exact', req([S, U1], 40), { text: 'Nice!', tokens: 3 }, finish);
      expect(readRequest('exact', held, next).readAnew).toBe(60);
    }
    const held = holdAfter('exact', req([S, U1], 40), { text: 'Nice!', tokens: 3 }, 'stop');
    expect(readRequest('exact', held, next).readAnew).toBe(17);
  });

  it('lcp: the longest common prefix of ids with the previous prompt and output; the last token is always read', () => {
    const held = holdAfter('lcp', req([S, U1], 5, [1, 2, 3, 4, 5]), { text: 'ab', tokens: 2, ids: [6, 7] }, 'length');
    expect(commonPrefix([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(readRequest('lcp', held, req([], 10, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))).toEqual({ readAnew: 3, cachedTokens: 7 });
    expect(readRequest('lcp', held, req([], 6, [1, 2, 9, 9, 9, 9]))).toEqual({ readAnew: 4, cachedTokens: 2 });
    expect(readRequest('lcp', held, req([], 5, [1, 2, 3, 4, 5]))).toEqual({ readAnew: 1, cachedTokens: 4 });
  });

  it('prefix: all the held ids when the prompt starts with them and goes on, after a call that ended by itself; else nothing', () => {
    const held = holdAfter('prefix', req([S, U1], 5, [1, 2, 3, 4, 5]), { text: 'ab', tokens: 2, ids: [6, 7] }, 'stop');
    expect(held?.ids).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(readRequest('prefix', held, req([], 10, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))).toEqual({ readAnew: 3, cachedTokens: 7 });
    // One held id differs: unlike lcp, nothing of the cache is used.
    expect(readRequest('prefix', held, req([], 10, [1, 2, 3, 4, 5, 6, 0, 8, 9, 10]))).toEqual({ readAnew: 10, cachedTokens: 0 });
    // The held tokens alone, with nothing after them: read whole.
    expect(readRequest('prefix', held, req([], 7, [1, 2, 3, 4, 5, 6, 7]))).toEqual({ readAnew: 7, cachedTokens: 0 });
    for (const finish of ['length', 'abort'] as const) {
      const cut = holdAfter('prefix', req([S, U1], 5, [1, 2, 3, 4, 5]), { text: 'ab', tokens: 2, ids: [6, 7] }, finish);
      expect(readRequest('prefix', cut, req([], 10, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))).toEqual({ readAnew: 10, cachedTokens: 0 });
    }
    expect(() => readRequest('prefix', held, req([], 10))).toThrow(/token ids/);
  });

  it('none: everything is read anew, and nothing is held', () => {
    expect(holdAfter('none', req([S, U1], 40), { text: 'x', tokens: 1 }, 'stop')).toBeUndefined();
    expect(readRequest('none', undefined, req([S, U1], 40))).toEqual({ readAnew: 40, cachedTokens: 0 });
  });
});

describe('the stand-in records what each call read anew', () => {
  it('an exact extension hits under every rule; a changed earlier message misses under exact and prefix and costs the suffix under lcp', async () => {
    for (const [name, hits] of [
      ['webgpu-4096', true],
      ['server-4096', true],
      ['cpu-2048', true],
      [{ ...PROFILES['cpu-2048']!, cache: 'none' as const }, false],
    ] as const) {
      const model = enforce(new Replier(), name);
      const r1 = await model.chat([S, U1]);
      await model.chat([S, U1, assistant(r1), U2]);
      const [c1, c2] = model.calls;
      expect(c1).toMatchObject({ readAnew: c1!.promptTokens, cachedTokens: 0 });
      expect(c2!.readAnew + c2!.cachedTokens).toBe(c2!.promptTokens);
      if (hits) {
        // The cache held the first prompt and the reply: what is read anew is the new round.
        expect(c2!.cachedTokens).toBeGreaterThanOrEqual(c1!.promptTokens + c1!.outputTokens - 1);
        expect(c2!.readAnew).toBeLessThan(30);
      } else expect(c2!.cachedTokens).toBe(0);
      // The first message changed: exact reads everything, lcp from the change on (the system prompt kept).
      await model.chat([S, user('I am going hiking in the hills on Sunday.'), assistant(r1), U2]);
      const c3 = model.calls[2]!;
      if (name === 'webgpu-4096' || name === 'cpu-2048') expect(c3.readAnew).toBe(c3.promptTokens);
      if (name === 'server-4096') {
        expect(c3.cachedTokens).toBeGreaterThan(15);
        expect(c3.readAnew).toBeLessThan(c3.promptTokens - 15);
      }
    }
  });

  it('a JSON call in between resets under exact, and under lcp costs only where the prompts part', async () => {
    const run = async (profile: string) => {
      const model = enforce(new Replier(), profile);
      const r1 = await model.chat([S, U1]);
      // A JSON call that extends the chat (it hits itself), then the chat goes on from r1.
      await model.json([S, U1, assistant(r1), user('Is this enough to answer? Reply in JSON.')], SCHEMA);
      await model.chat([S, U1, assistant(r1), U2]);
      return model.calls;
    };
    const exact = await run('webgpu-4096');
    const lcp = await run('server-4096');
    const prefix = await run('cpu-2048');
    expect(exact[1]!.cachedTokens).toBeGreaterThan(0);
    expect(exact[2]).toMatchObject({ readAnew: exact[2]!.promptTokens, cachedTokens: 0 });
    // The CPU engine holds the JSON call's tokens now, which the chat's next prompt does not start with.
    expect(prefix[1]!.cachedTokens).toBeGreaterThan(0);
    expect(prefix[2]).toMatchObject({ readAnew: prefix[2]!.promptTokens, cachedTokens: 0 });
    // lcp: the JSON call's prompt shares everything up to the last user message's text.
    expect(lcp[2]!.readAnew).toBeLessThan(20);
    expect(lcp[2]!.cachedTokens).toBeGreaterThan(lcp[0]!.promptTokens);
  });

  it('a reply cut by length resets under exact; under lcp its written tokens stay reusable', async () => {
    const run = async (profile: string) => {
      const model = enforce(new Replier(), profile);
      const r1 = await model.chat([S, U1], { maxTokens: 5 });
      await model.chat([S, U1, assistant(r1), U2]);
      return model.calls;
    };
    const exact = await run('webgpu-4096');
    expect(exact[0]!.cut).toBe(true);
    expect(exact[1]).toMatchObject({ readAnew: exact[1]!.promptTokens, cachedTokens: 0 });
    const lcp = await run('server-4096');
    expect(lcp[1]!.cachedTokens).toBe(lcp[0]!.promptTokens + 5);
    const prefix = await run('cpu-2048');
    expect(prefix[1]).toMatchObject({ readAnew: prefix[1]!.promptTokens, cachedTokens: 0 });
  });

  it('an aborted reply resets under exact', async () => {
    const model = enforce(new Replier(), 'webgpu-4096');
    const stop = new AbortController();
    const r1 = await model.chat([S, U1], { signal: stop.signal, onToken: () => stop.abort() });
    expect(r1.length).toBeGreaterThan(0);
    await model.chat([S, U1, assistant(r1), U2]);
    expect(model.calls[1]).toMatchObject({ cachedTokens: 0 });
  });

  it('a refused prompt reads nothing and leaves nothing held', async () => {
    const model = enforce(new Replier(), { ...PROFILES['webgpu-4096']!, contextTokens: 60 });
    const r1 = await model.chat([S, U1]);
    await expect(model.chat([S, U1, assistant(r1), user('word '.repeat(80))])).rejects.toThrow();
    await model.chat([S, U1, assistant(r1), U2]).catch(() => undefined);
    expect(model.calls[1]).toMatchObject({ overflowed: true, readAnew: 0, cachedTokens: 0 });
    expect(model.calls[2]!.cachedTokens).toBe(0);
  });

  it('a profile spec can choose the rule, and an unknown rule is refused', () => {
    expect(engineProfile('{"profile": "webgpu-4096", "cache": "lcp"}').cache).toBe('lcp');
    expect(() => engineProfile('{"profile": "webgpu-4096", "cache": "some"}')).toThrow(/cache rule/);
  });

  it('prompt ids count as countPrompt counts, long runs and special tokens included', async () => {
    for (const profile of [PROFILES['server-4096']!, PROFILES['llama3.2-4096']!, PROFILES['phi3.5-4096']!]) {
      const tok = await loadTokenizer(profile.tokenizer, nodeTokenizers);
      const messages = [S, U1, assistant(`Here: ${'x'.repeat(950)} and ${'-'.repeat(430)} done.`), U2];
      expect(promptIds(tok, profile, messages).length).toBe(countPrompt(tok, profile, messages));
    }
  });
});
