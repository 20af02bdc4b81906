// The wrappers around a chat model pass its window on, read when asked: a server's window is known
// only once the server has answered, after the wrapper was made.
import { describe, expect, it } from 'vitest';
import { watchServer } from '../../../src/services/models/server-probe';
import { observationSummariser } from '../../../src/memory/locomo';
import type { LanguageModel, ModelWindow } from '../../../src/ports';

function model(): LanguageModel & { window?: ModelWindow } {
  return { modelId: 'm', window: undefined, chat: async () => 'hi', json: async () => '{}' };
}

describe('window of wrapped models', () => {
  it('watchServer and the LoCoMo summariser read the window of the model they wrap, as it is now', () => {
    const inner = model();
    const watched = watchServer(inner, 'http://127.0.0.1:1', () => undefined);
    const summariser = observationSummariser(() => undefined, watched);
    expect(watched.window).toBeUndefined();
    expect(summariser.window).toBeUndefined();
    inner.window = { contextTokens: 8192, maxOutputTokens: 1024 };
    expect(watched.window).toBe(inner.window);
    expect(summariser.window).toBe(inner.window);
    expect(observationSummariser(() => undefined).window).toBeUndefined();
  });
});
