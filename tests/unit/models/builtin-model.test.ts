// The browser's model (Prompt API) behind a scripted double of the API: the Prompt API takes no
// token limit, so a JSON answer that never ends must be stopped by its size; its window.
import { describe, expect, it } from 'vitest';
import { BuiltinModel, type PromptApi } from '../../../src/models/builtin-model';
import { JSON_LIMITS } from '../../../src/models/call-limits';
import { isContextOverflow } from '../../../src/ports';

/** A Prompt API whose answers start as `start` and then, with `endless`, never end. */
function fakeApi(start: string, endless: boolean) {
  const seen: Array<{ constraint: unknown }> = [];
  let cancelled = false;
  const api: PromptApi = {
    availability: async () => 'available',
    create: async () => ({
      prompt: async () => start,
      promptStreaming: (_input, options) => {
        seen.push({ constraint: options?.responseConstraint });
        let sent = false;
        return new ReadableStream<string>({
          pull(controller) {
            if (!sent) {
              sent = true;
              controller.enqueue(start);
            } else if (endless) controller.enqueue(' '.repeat(512));
            else controller.close();
          },
          cancel() {
            cancelled = true;
          },
        });
      },
      destroy: () => undefined,
    }),
  };
  return { api, seen, cancelled: () => cancelled };
}

const ask = [{ role: 'user' as const, content: 'Summarise' }];

describe('BuiltinModel', () => {
  it('streams a JSON answer with the schema as its constraint', async () => {
    const { api, seen } = fakeApi('{"ok":true}', false);
    const model = await BuiltinModel.start(undefined, undefined, api);
    expect(await model.json(ask, { type: 'object' })).toBe('{"ok":true}');
    expect(seen).toEqual([{ constraint: { type: 'object' } }]);
  });

  it('stops a JSON answer that never ends at the size limit, and lets go of the stream', async () => {
    const fake = fakeApi('{"events": [', true);
    const model = await BuiltinModel.start(undefined, undefined, fake.api);
    await expect(model.json(ask, { type: 'object' })).rejects.toThrow(
      `wrote more than ${JSON_LIMITS.maxChars.toLocaleString('en-US')} characters`,
    );
    expect(fake.cancelled()).toBe(true);
  });

  it('a chat reply stopped by the user resolves with what arrived', async () => {
    const fake = fakeApi('Hello', true);
    const model = await BuiltinModel.start(undefined, undefined, fake.api);
    const controller = new AbortController();
    let seen = '';
    const text = await model.chat(ask, {
      signal: controller.signal,
      onToken: (t) => {
        seen += t;
        if (seen.length > 2000) controller.abort();
      },
    });
    expect(text).toBe(seen);
    expect(text.startsWith('Hello')).toBe(true);
  });
});

// The window of the browser's model, counted by the API itself, and its refusal of a
// prompt past the window read as ContextOverflowError.
type Message = { role: string; content: string };
/** A stand-in token count: a word is a token, a message costs 4 more. */
const tokens = (input: Message[]) => input.reduce((n, m) => n + 4 + (m.content.match(/\S+/g)?.length ?? 0), 0);

/** A QuotaExceededError as the API throws it (a DOMException with the counts). */
function quotaError(requested: number, quota: number): Error {
  return Object.assign(new DOMException('The input is too large.', 'QuotaExceededError'), { requested, quota });
}

/** A Prompt API with a window: `names` picks the current (context*) or the earlier (input*) names. */
function windowedApi(window: number, names: 'context' | 'input' = 'context') {
  const created: Message[][] = [];
  const api = {
    availability: async () => 'available' as const,
    create: async (options: { initialPrompts?: Message[] } = {}) => {
      const initial = options.initialPrompts ?? [];
      created.push(initial);
      const usage = 2 + (initial.length ? tokens(initial) : 0);
      if (usage > window) throw quotaError(usage, window);
      const measure = async (input: Message[]) => tokens(input);
      const session = {
        prompt: async () => 'ok',
        promptStreaming: (input: string) =>
          new ReadableStream<string>({
            start(c) {
              const n = usage + tokens([{ role: 'user', content: input }]);
              if (n > window) c.error(quotaError(n, window));
              else {
                c.enqueue('ok');
                c.close();
              }
            },
          }),
        destroy: () => undefined,
        ...(names === 'context'
          ? { contextWindow: window, contextUsage: usage, measureContextUsage: measure }
          : { inputQuota: window, inputUsage: usage, measureInputUsage: measure }),
      };
      return session;
    },
  } as unknown as PromptApi;
  return { api, created };
}

const conversation = [
  { role: 'system' as const, content: 'Be kind.' },
  { role: 'system' as const, content: 'Memories: tea.' },
  { role: 'user' as const, content: 'Hello there' },
  { role: 'assistant' as const, content: 'Hi!' },
  { role: 'user' as const, content: 'What do I like?' },
];

describe('BuiltinModel: its window', () => {
  it.each(['context', 'input'] as const)('reads the window and measures prompts as a call lays them out (%s* names)', async (names) => {
    const { api } = windowedApi(6144, names);
    const model = await BuiltinModel.start(undefined, undefined, api);
    expect(model.window).toMatchObject({ contextTokens: 6144, maxOutputTokens: 1024 });
    // The blank session's own 2, the system text joined, the dialogue, the prompt.
    const laidOut = [
      { role: 'system', content: 'Be kind.\n\nMemories: tea.' },
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: 'Hi!' },
      { role: 'user', content: 'What do I like?' },
    ];
    expect(await model.window!.countTokens!(conversation)).toBe(2 + tokens(laidOut));
  });

  it('has no window where the browser sets no finite one (callers assume the smallest of the catalog)', async () => {
    expect((await BuiltinModel.start(undefined, undefined, windowedApi(Infinity).api)).window).toBeUndefined();
    expect((await BuiltinModel.start(undefined, undefined, fakeApi('x', false).api)).window).toBeUndefined();
  });

  it("turns the API's QuotaExceededError into ContextOverflowError, from the session's start or from the prompt", async () => {
    const { api } = windowedApi(60);
    const model = await BuiltinModel.start(undefined, undefined, api);
    const longDialogue = [{ role: 'system' as const, content: 'word '.repeat(80) }, ...conversation.slice(2)];
    const e = await model.chat(longDialogue).catch((x: unknown) => x);
    expect(isContextOverflow(e)).toBe(true);
    expect(e).toMatchObject({
      promptTokens: 2 + tokens([{ role: 'system', content: 'word '.repeat(80) }, ...conversation.slice(2, 4)]),
      contextTokens: 60,
    });
    const longPrompt = [{ role: 'user' as const, content: 'word '.repeat(80) }];
    await expect(model.json(longPrompt, { type: 'object' })).rejects.toMatchObject({ name: 'ContextOverflowError', contextTokens: 60 });
    expect(await model.chat(conversation)).toBe('ok');
  });
});

/** A Prompt API whose sessions remember what they read, as the real ones do; each prompt logged with its session. */
function conversationalApi() {
  let made = 0;
  const prompts: Array<{ session: number; input: string; held: number }> = [];
  const destroyed: number[] = [];
  const api = {
    availability: async () => 'available' as const,
    create: async (options: { initialPrompts?: Message[] } = {}) => {
      const id = ++made;
      let held = (options.initialPrompts ?? []).length;
      return {
        prompt: async () => '{}',
        promptStreaming: (input: string, opts: { signal?: AbortSignal } = {}) => {
          prompts.push({ session: id, input, held });
          held += 2;
          const words = ['Sure', ', ', 'noted', '.'];
          return new ReadableStream<string>({
            pull(c) {
              if (opts.signal?.aborted) return c.close();
              const w = words.shift();
              if (w === undefined) c.close();
              else c.enqueue(w);
            },
          });
        },
        destroy: () => destroyed.push(id),
      };
    },
  } as unknown as PromptApi;
  return { api, prompts, destroyed, made: () => made };
}

describe('BuiltinModel: a chat keeps its session, so the model reads only what is new', () => {
  const head = { role: 'system' as const, content: 'Be kind.' };
  const first = [head, { role: 'user' as const, content: 'Hello' }];

  it('prompts only the new message when the request extends the conversation the session holds', async () => {
    const fake = conversationalApi();
    const model = await BuiltinModel.start(undefined, undefined, fake.api);
    const made = fake.made();
    const reply = await model.chat(first);
    expect(reply).toBe('Sure, noted.');
    await model.chat([...first, { role: 'assistant', content: reply }, { role: 'user', content: 'And then?' }]);
    expect(fake.made() - made).toBe(1);
    expect(fake.prompts.map((p) => [p.input, p.held])).toEqual([
      ['Hello', 1],
      ['And then?', 3],
    ]);
  });

  it('opens a session of its own when the request does not extend it (an edit, another chat), and lets the old one go', async () => {
    const fake = conversationalApi();
    const model = await BuiltinModel.start(undefined, undefined, fake.api);
    const made = fake.made();
    const reply = await model.chat(first);
    // The reply as the chat stored it differs from what the session holds (an edit): not the same conversation.
    await model.chat([...first, { role: 'assistant', content: `${reply}!` }, { role: 'user', content: 'And then?' }]);
    expect(fake.made() - made).toBe(2);
    expect(fake.destroyed).toContain(fake.prompts[0]!.session);
    expect(fake.prompts[1]).toMatchObject({ input: 'And then?', held: 3 });
    expect(fake.prompts[1]!.session).not.toBe(fake.prompts[0]!.session);
  });

  it('structured calls between two messages use sessions of their own and leave the chat its session', async () => {
    const fake = conversationalApi();
    const model = await BuiltinModel.start(undefined, undefined, fake.api);
    const reply = await model.chat(first);
    await model.json([{ role: 'user', content: 'Summarise' }], { type: 'object' });
    await model.chat([...first, { role: 'assistant', content: reply }, { role: 'user', content: 'And then?' }]);
    const chats = fake.prompts.filter((p) => p.input !== 'Summarise');
    expect(chats[1]!.session).toBe(chats[0]!.session);
    expect(fake.prompts.find((p) => p.input === 'Summarise')!.session).not.toBe(chats[0]!.session);
  });

  it('a reply stopped half way does not keep its session (it holds an answer the chat does not have)', async () => {
    const fake = conversationalApi();
    const model = await BuiltinModel.start(undefined, undefined, fake.api);
    const stop = new AbortController();
    const partial = await model.chat(first, { signal: stop.signal, onToken: () => stop.abort() });
    await model.chat([...first, { role: 'assistant', content: partial }, { role: 'user', content: 'And then?' }]);
    expect(fake.prompts[1]!.session).not.toBe(fake.prompts[0]!.session);
    expect(fake.destroyed).toContain(fake.prompts[0]!.session);
  });
});
