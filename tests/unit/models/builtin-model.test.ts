// The browser's model (Prompt API) behind a scripted double of the API: the Prompt API takes no
// token limit, so a JSON answer that never ends must be stopped by its size (issue 21).
import { describe, expect, it } from 'vitest';
import { BuiltinModel, type PromptApi } from '../../../src/models/builtin-model';
import { JSON_LIMITS } from '../../../src/models/call-limits';

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
