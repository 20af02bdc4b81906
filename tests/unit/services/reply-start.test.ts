// A reply says how it started: the wait from the request to its first word (on the service's
// clock), and the tokens of its prompt the model had to read (all of them, or only what was new
// when the prompt extended the chat's previous request). Stored with the reply, and per version.
import { describe, expect, it } from 'vitest';
import { ChatService } from '../../../src/services/chat/chat';
import type { TurnPreparer } from '../../../src/services/chat/reply-prompt';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { ChatMessage, GenerateOptions, LanguageModel } from '../../../src/ports';

const H = 3600_000;

describe('how a reply started', () => {
  it('the wait before the first word and what was read are stored with the reply', async () => {
    const clock = { t: 10 * H };
    // The model takes 1.5 s (on the service's clock) before its first word, then writes at once.
    const model: LanguageModel = {
      modelId: 'start-test',
      async chat(_m: ChatMessage[], o: GenerateOptions = {}) {
        clock.t += 1500;
        o.onToken?.('Hello');
        clock.t += 4000;
        o.onToken?.(' there');
        return 'Hello there';
      },
      json: async () => '{}',
    };
    let n = 0;
    const preparer: TurnPreparer = {
      async prepare({ history }) {
        n++;
        return {
          messages: history.map((t) => ({ role: t.role, content: t.text })),
          promptTokens: 2000 + n,
          readTokens: n === 1 ? 2000 + n : 300,
        };
      },
    };
    const repo = new InMemoryRepository();
    const chat = new ChatService({ repo, preparer, getModel: () => model, idleGapMs: () => H, now: () => clock.t, saveEveryMs: 0 });
    await chat.send('First message');
    await chat.send('Second message');
    const replies = (await repo.listTurns(chat.current!.id)).filter((t) => t.role === 'assistant');
    expect(replies.map((r) => r.start)).toEqual([
      { waitMs: 1500, promptTokens: 2001, readTokens: 2001 },
      { waitMs: 1500, promptTokens: 2002, readTokens: 300 },
    ]);
  });

  it("where the engine reports what it read, its figures replace the app's count", async () => {
    const clock = { t: 10 * H };
    // A model server that reports, at the end of each answer, its cache's reuse: a different
    // prompt size by its own tokenizer, and what it read anew (nothing on the first call, a
    // server that never reports, in the third).
    const reports = [undefined, { readTokens: 41, promptTokens: 2100 }, { readTokens: 5000 }];
    let call = 0;
    const model: LanguageModel = {
      modelId: 'engine-read-test',
      async chat(_m: ChatMessage[], o: GenerateOptions = {}) {
        const report = reports[call++];
        clock.t += 200;
        o.onToken?.('Hi');
        if (report) o.onRead?.(report);
        return 'Hi';
      },
      json: async () => '{}',
    };
    const preparer: TurnPreparer = {
      async prepare() {
        return { messages: [{ role: 'user', content: 'x' }], promptTokens: 2000, readTokens: 300 };
      },
    };
    const repo = new InMemoryRepository();
    const chat = new ChatService({ repo, preparer, getModel: () => model, idleGapMs: () => H, now: () => clock.t, saveEveryMs: 0 });
    for (const text of ['One', 'Two', 'Three']) await chat.send(text);
    const replies = (await repo.listTurns(chat.current!.id)).filter((t) => t.role === 'assistant');
    expect(replies.map((r) => r.start)).toEqual([
      { waitMs: 200, promptTokens: 2000, readTokens: 300 },
      { waitMs: 200, promptTokens: 2100, readTokens: 41 },
      // No prompt size reported: the app's, and never more read than the prompt holds.
      { waitMs: 200, promptTokens: 5000, readTokens: 5000 },
    ]);
  });
});
