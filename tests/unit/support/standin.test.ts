// The enforcing stand-in (tests/support/standin): prompt counts under each chat template against
// counts checked by hand, the overflow error with its numbers, and outputs cut at the cap, at the
// window and at the caller's maxTokens, streamed or not.
import { describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../../../src/ports';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../../src/ports';
import { jsonInstruction } from '../../../src/models/cpu-llm-runtime';
import { countPrompt, enforce, engineProfile, loadTokenizer, nodeTokenizers, PROFILES, templatePieces } from '../../support/standin';
import { countText, firstTokens } from '../../support/standin/tokenizer';
import { withSchemaInstruction } from '../../support/standin/profiles';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const system = (content: string): ChatMessage => ({ role: 'system', content });

/** Streams `text` word by word; stops at its signal; records what it was asked. */
class Talker implements LanguageModel {
  readonly modelId = 'talker';
  jsonCalls = 0;
  chatCalls = 0;
  abortedAfter?: number;
  constructor(
    private readonly text: string,
    private readonly jsonText = '{}',
  ) {}
  async chat(_m: ChatMessage[], o: GenerateOptions = {}): Promise<string> {
    this.chatCalls++;
    let out = '';
    for (const piece of this.text.match(/\S+\s*/g) ?? []) {
      if (o.signal?.aborted) {
        this.abortedAfter = out.length;
        break;
      }
      out += piece;
      o.onToken?.(piece);
      await Promise.resolve();
    }
    return out;
  }
  async json(_m: ChatMessage[], _s: JsonSchema): Promise<string> {
    this.jsonCalls++;
    return this.jsonText;
  }
}

describe('prompt counts under the chat templates (checked by hand, token by token)', () => {
  it('ChatML with web-llm’s default system message: 20 tokens for "Hello"', async () => {
    const tok = await loadTokenizer('qwen2.5', nodeTokenizers);
    // <|im_start|> system \n You are a helpful assistant . <|im_end|> \n (11)
    // <|im_start|> user \n Hello <|im_end|> \n (6), <|im_start|> assistant \n (3)
    expect(countPrompt(tok, PROFILES['webgpu-4096'], [user('Hello')])).toBe(20);
  });

  it('ChatML with Qwen2.5’s own default system message (CPU engine): 30 tokens for "Hello"', async () => {
    const tok = await loadTokenizer('qwen2.5', nodeTokenizers);
    // "You are Qwen, created by Alibaba Cloud. You are a helpful assistant." is 16 tokens: 10 more.
    expect(countPrompt(tok, PROFILES['cpu-2048'], [user('Hello')])).toBe(30);
  });

  it('ChatML with a system message of its own adds no default: 17 tokens', async () => {
    const tok = await loadTokenizer('qwen2.5', nodeTokenizers);
    // <|im_start|> system \n Be brief . <|im_end|> \n (8), <|im_start|> user \n Hi <|im_end|> \n (6), 3
    expect(countPrompt(tok, PROFILES['webgpu-4096'], [system('Be brief.'), user('Hi')])).toBe(17);
  });

  it('Llama 3: the begin token and a header per message: 19 tokens', async () => {
    const tok = await loadTokenizer('llama3', nodeTokenizers);
    // <|begin_of_text|>, <|start_header_id|> system <|end_header_id|> \n\n Be brief . <|eot_id|> (8),
    // <|start_header_id|> user <|end_header_id|> \n\n Hi <|eot_id|> (6), the assistant's header with \n\n (4)
    expect(countPrompt(tok, PROFILES['llama3.2-4096'], [system('Be brief.'), user('Hi')])).toBe(19);
  });

  it('counting by pieces equals encoding the whole templated string', async () => {
    const messages = [
      system('You remember things.\n\n[1] The user likes tea.'),
      user('What do I like? <b>tell</b>'),
      { role: 'assistant' as const, content: 'Tea.' },
      user('And?'),
    ];
    for (const name of ['webgpu-4096', 'llama3.2-4096', 'qwen3-4096']) {
      const profile = PROFILES[name];
      const tok = await loadTokenizer(profile.tokenizer, nodeTokenizers);
      const whole = templatePieces(profile, messages)
        .map((p) => (typeof p === 'string' ? p : p.special))
        .join('');
      expect(countPrompt(tok, profile, messages), name).toBe(tok.encode(whole).length);
    }
  });

  it('the CPU engine counts the schema instruction it appends, in the words CpuLlmRuntime uses', async () => {
    const schema = { title: 'relation_labels', type: 'object', properties: { labels: { type: 'array' } } };
    expect(withSchemaInstruction([system('s'), user('x')], schema)[1].content).toBe(`x\n\n${jsonInstruction(schema)}`);
    const tok = await loadTokenizer('qwen2.5', nodeTokenizers);
    const plain = countPrompt(tok, PROFILES['cpu-2048'], [user('x')]);
    const withSchema = countPrompt(tok, PROFILES['cpu-2048'], [user('x')], schema);
    expect(withSchema - plain).toBe(tok.encode(`\n\n${jsonInstruction(schema)}`).length);
    // web-llm constrains by grammar: the schema is not in its prompt.
    expect(countPrompt(tok, PROFILES['webgpu-4096'], [user('x')], schema)).toBe(countPrompt(tok, PROFILES['webgpu-4096'], [user('x')]));
  });
});

describe('counting long texts', () => {
  it('a run of a million characters is counted in pieces, quickly (one run in one piece takes 20 s)', async () => {
    const tok = await loadTokenizer('qwen2.5', nodeTokenizers);
    expect(tok.encode('xxxxxxxx')).toHaveLength(1);
    // Quick by construction, checked by what is encoded rather than by a time: no piece longer
    // than 200 characters goes to the tokenizer (BPE on one long word costs about 20 µs a character).
    let longest = 0;
    const watched = new Proxy(tok, {
      get(target, key) {
        const v: unknown = Reflect.get(target, key, target);
        if (key !== 'encode' || typeof v !== 'function') return v;
        return (text: string) => ((longest = Math.max(longest, text.length)), (v as (t: string) => unknown).call(target, text));
      },
    });
    // Eight x's are one token: 990,000 of them are 123,750; "Hi", the space, " there" 3 more
    // (the space joins the run when it is encoded whole: a token off, as said).
    expect(countText(watched, `Hi ${'x'.repeat(990_000)} there`)).toBe(3 + 123_750);
    expect(longest).toBeLessThanOrEqual(200);
    const prose = 'The user said they moved to Lisbon, and that the move went well. '.repeat(40);
    expect(countText(tok, prose)).toBe(tok.encode(prose).length);
  });

  it('the first tokens of a text, reading only its start', async () => {
    const tok = await loadTokenizer('qwen2.5', nodeTokenizers);
    const text = 'one two three four five six seven eight';
    expect(firstTokens(tok, text, 3)).toEqual({ ids: tok.encode(text).slice(0, 3), more: true });
    expect(firstTokens(tok, text, 8)).toEqual({ ids: tok.encode(text), more: false });
    const long = 'word '.repeat(5000);
    expect(firstTokens(tok, long, 10)).toEqual({ ids: tok.encode(long).slice(0, 10), more: true });
  });
});

describe('profiles', () => {
  it('the default is the default model’s window; the CPU profile is smaller and can count', () => {
    expect(engineProfile()).toMatchObject({ name: 'webgpu-4096', contextTokens: 4096, maxOutputTokens: 1024, exposesCount: true });
    expect(engineProfile('cpu-2048')).toMatchObject({ contextTokens: 2048, maxOutputTokens: 384, exposesCount: true });
    expect(engineProfile('{"profile":"cpu-2048","contextTokens":1000}')).toMatchObject({ name: 'cpu-2048', contextTokens: 1000 });
    expect(() => engineProfile('gpt-9')).toThrow(/Unknown stand-in profile "gpt-9"/);
  });

  it('window.countTokens only where the profile exposes it', async () => {
    expect(enforce(new Talker(''), '{"profile":"webgpu-4096","exposesCount":false}').window.countTokens).toBeUndefined();
    const cpu = enforce(new Talker(''), 'cpu-2048');
    expect(cpu.window).toMatchObject({ contextTokens: 2048, maxOutputTokens: 384 });
    expect(await cpu.window.countTokens!([user('Hello')])).toBe(30);
  });
});

describe('limits', () => {
  const words = 'one two three four five six seven eight';

  it('a prompt over the window throws ContextOverflowError with both numbers, before the model writes', async () => {
    const inner = new Talker(words);
    // "Hello Hello Hello" is 3 tokens: the prompt is 22 under web-llm's ChatML.
    const model = enforce(inner, { ...PROFILES['webgpu-4096'], contextTokens: 21 });
    const err = await model.chat([user('Hello Hello Hello')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect(err).toMatchObject({ name: 'ContextOverflowError', promptTokens: 22, contextTokens: 21 });
    await expect(model.json([user('Hello Hello Hello')], { title: 'x' })).rejects.toMatchObject({ promptTokens: 22, contextTokens: 21 });
    expect(inner.chatCalls + inner.jsonCalls).toBe(0);
    expect(model.calls).toEqual([
      {
        kind: 'chat',
        title: undefined,
        promptTokens: 22,
        outputTokens: 0,
        limit: 0,
        overflowed: true,
        cut: false,
        readAnew: 0,
        cachedTokens: 0,
      },
      { kind: 'json', title: 'x', promptTokens: 22, outputTokens: 0, limit: 0, overflowed: true, cut: false, readAnew: 0, cachedTokens: 0 },
    ]);
  });

  it('a prompt exactly the window is read (web-llm refuses only more)', async () => {
    const model = enforce(new Talker(words), { ...PROFILES['webgpu-4096'], contextTokens: 22 });
    expect(await model.chat([user('Hello Hello Hello')])).toBe('');
    expect(model.calls[0]).toMatchObject({ promptTokens: 22, limit: 0, cut: true, overflowed: false });
  });

  it('the CPU engine refuses a prompt that leaves no room, and a JSON call whose whole cap does not fit', async () => {
    const schema = { title: 'relation_labels', type: 'object' };
    const probe = enforce(new Talker(''), 'cpu-2048');
    const chatPrompt = await probe.countTokens([user('Hello')]);
    const jsonPrompt = await probe.countTokens([user('Hello')], schema);
    expect(jsonPrompt).toBeGreaterThan(chatPrompt);
    // Room for 5 tokens beside the JSON prompt, a cap of 10: refused, with the numbers.
    const cpu = enforce(new Talker(words, '{"labels":[]}'), {
      ...PROFILES['cpu-2048'],
      contextTokens: jsonPrompt + 5,
      maxOutputTokens: 10,
    });
    await expect(cpu.json([user('Hello')], schema)).rejects.toMatchObject({
      name: 'ContextOverflowError',
      promptTokens: jsonPrompt,
      contextTokens: jsonPrompt + 5,
    });
    // Asked for no more than fits, it answers.
    expect(await cpu.json([user('Hello')], schema, { maxTokens: 5 })).toBe('{"labels":[]}');
    // web-llm reads the same call and cuts the answer where the window ends.
    const gpuPrompt = await enforce(new Talker(''), 'webgpu-4096').countTokens([user('Hello')], schema);
    const answer = '{"labels":[{"candidate":1,"relation":"SameTopic"}]}';
    const gpu = enforce(new Talker('', answer), { ...PROFILES['webgpu-4096'], contextTokens: gpuPrompt + 5, maxOutputTokens: 10 });
    const cut = await gpu.json([user('Hello')], schema);
    expect(answer.startsWith(cut) && cut.length < answer.length).toBe(true);
    expect(gpu.calls[0]).toMatchObject({ limit: 5, outputTokens: 5, cut: true });
    // A chat prompt of exactly the window: web-llm reads it, the CPU engine refuses it.
    const full = enforce(new Talker(words), { ...PROFILES['cpu-2048'], contextTokens: chatPrompt });
    await expect(full.chat([user('Hello')])).rejects.toMatchObject({ promptTokens: chatPrompt, contextTokens: chatPrompt });
  });

  it('a streamed reply stops at the output cap: the deltas, the result and the writer all stop', async () => {
    const inner = new Talker(words);
    const model = enforce(inner, { ...PROFILES['webgpu-4096'], maxOutputTokens: 5 });
    const deltas: string[] = [];
    const out = await model.chat([user('Hello')], { onToken: (d) => deltas.push(d) });
    expect(out).toBe('one two three four five');
    expect(deltas.join('')).toBe(out);
    expect(inner.abortedAfter).toBeDefined();
    expect(inner.abortedAfter!).toBeLessThan(words.length);
    expect(model.calls[0]).toMatchObject({ kind: 'chat', promptTokens: 20, outputTokens: 5, limit: 5, cut: true });
  });

  it('the output stops where the window ends, and at the caller’s maxTokens', async () => {
    const atWindow = enforce(new Talker(words), { ...PROFILES['webgpu-4096'], contextTokens: 23 });
    expect(await atWindow.chat([user('Hello')])).toBe('one two three');
    const atMax = enforce(new Talker(words), 'webgpu-4096');
    expect(await atMax.chat([user('Hello')], { maxTokens: 2 })).toBe('one two');
    expect(await atMax.chat([user('Hello')])).toBe(words);
    expect(atMax.calls.map((c) => [c.limit, c.outputTokens, c.cut])).toEqual([
      [2, 2, true],
      [1024, 8, false],
    ]);
  });

  it('JSON is cut mid-way at the cap, as a real engine leaves it', async () => {
    const answer = JSON.stringify({ events: [{ text: 'The user said they moved to Lisbon last spring.', about: 'user', turns: ['T1'] }] });
    const model = enforce(new Talker('', answer), { ...PROFILES['cpu-2048'], maxOutputTokens: 10 });
    const deltas: string[] = [];
    const out = await model.json([user('Summarise.')], { title: 'session_memories' }, { onToken: (d) => deltas.push(d) });
    expect(answer.startsWith(out)).toBe(true);
    expect(out.length).toBeLessThan(answer.length);
    expect(() => JSON.parse(out)).toThrow();
    expect(deltas).toEqual([out]);
    const tok = await loadTokenizer('qwen2.5', nodeTokenizers);
    expect(tok.encode(out)).toHaveLength(10);
    expect(model.calls[0]).toMatchObject({ kind: 'json', title: 'session_memories', outputTokens: 10, limit: 10, cut: true });
    // Under the cap it comes back whole.
    const roomy = enforce(new Talker('', answer), 'cpu-2048');
    expect(await roomy.json([user('Summarise.')], { title: 'session_memories' })).toBe(answer);
  });

  it('the caller’s stop still stops the reply', async () => {
    const stop = new AbortController();
    const model = enforce(new Talker(words), 'webgpu-4096');
    const out = await model.chat([user('Hello')], {
      signal: stop.signal,
      onToken: (d) => {
        if (d.startsWith('two')) stop.abort();
      },
    });
    expect(out).toBe('one two ');
    expect(model.calls[0].cut).toBe(false);
  });
});

describe('faults through the wrapper', () => {
  it('a repeated item runs to the cap and is cut there; the fault is logged and counted', async () => {
    const answer = JSON.stringify({ events: [{ text: 'A', about: 'user', turns: ['T1'] }], userTraits: [] });
    const model = enforce(
      new Talker('', answer),
      { ...PROFILES['webgpu-4096'], maxOutputTokens: 200 },
      { faults: { rate: 1, seed: 3, only: ['repeated-item'] } },
    );
    const out = await model.json([user('Summarise.')], { title: 'session_memories' });
    expect(out.startsWith('{"events":[{"text":"A","about":"user","turns":["T1"]},{"text":"A"')).toBe(true);
    expect(() => JSON.parse(out)).toThrow();
    expect(model.calls[0]).toMatchObject({ fault: 'repeated-item', cut: true, outputTokens: 200 });
    expect(model.faultCounts['repeated-item']).toBe(1);
  });

  it('without a faults mode the answer is the model’s own', async () => {
    const answer = '{"labels":[{"candidate":1,"relation":"SameTopic"}]}';
    const model = enforce(new Talker('', answer), 'webgpu-4096');
    for (let i = 0; i < 20; i++) expect(await model.json([user('Label.')], { title: 'relation_labels' })).toBe(answer);
    expect(model.faultCounts).toEqual({});
  });
});
