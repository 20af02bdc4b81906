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
});
