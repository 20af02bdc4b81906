// A reply that reached the model's token limit stops mid-way; the chat says so (a `cut` event per
// reply that ends), so the view can tell the person and offer to go on. Only what the engine says
// counts: a reply that simply ends, one the person stopped, and one that failed are not cut.
import { describe, expect, it } from 'vitest';
import { ChatService } from '../../../src/services/chat/chat';
import type { TurnPreparer } from '../../../src/services/chat/reply-prompt';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { AnswerFinish, ChatMessage, GenerateOptions, LanguageModel } from '../../../src/ports';

const H = 3600_000;
const preparer: TurnPreparer = {
  async prepare({ history }) {
    return { messages: history.map((t) => ({ role: t.role, content: t.text })), promptTokens: 100 };
  },
};

/** Answers "Part of it" and then says why it ended: each call takes the next of `ends`. */
function model(ends: Array<AnswerFinish | 'silent' | 'throws'>): LanguageModel {
  let call = 0;
  return {
    modelId: 'cut-test',
    async chat(_m: ChatMessage[], o: GenerateOptions = {}) {
      const end = ends[call++];
      if (end === 'throws') throw new Error('The model failed.');
      o.onToken?.('Part of it');
      if (end !== 'silent') o.onFinish?.(end);
      return 'Part of it';
    },
    json: async () => '{}',
  };
}

async function cuts(ends: Array<AnswerFinish | 'silent' | 'throws'>, act: (chat: ChatService) => Promise<void>) {
  const repo = new InMemoryRepository();
  const llm = model(ends);
  const chat = new ChatService({ repo, preparer, getModel: () => llm, idleGapMs: () => H, now: () => 10 * H, saveEveryMs: 0 });
  const seen: boolean[] = [];
  chat.on('cut', ({ cut }) => seen.push(cut));
  await act(chat);
  return seen;
}

describe('a reply cut at the token limit', () => {
  it('is told when the engine says length; a regenerated reply that finishes clears it', async () => {
    const seen = await cuts(['length', 'stop'], async (chat) => {
      await chat.send('Tell me everything');
      await chat.regenerate();
    });
    expect(seen).toEqual([true, false]);
  });

  it('an engine that does not say why, and a failed reply, are not cut', async () => {
    expect(await cuts(['silent'], (chat) => chat.send('Hello'))).toEqual([false]);
    expect(await cuts(['throws'], (chat) => chat.send('Hello'))).toEqual([false]);
  });

  it('a reply the person stopped is not cut, whatever the engine said after', async () => {
    const repo = new InMemoryRepository();
    // The model presses Stop itself, mid-reply, through the chat it answers.
    const box: { chat?: ChatService } = {};
    const llm: LanguageModel = {
      modelId: 'cut-test',
      async chat(_m: ChatMessage[], o: GenerateOptions = {}) {
        o.onToken?.('Part');
        box.chat?.stop();
        o.onFinish?.('length');
        return 'Part of it';
      },
      json: async () => '{}',
    };
    const chat = (box.chat = new ChatService({
      repo,
      preparer,
      getModel: () => llm,
      idleGapMs: () => H,
      now: () => 10 * H,
      saveEveryMs: 0,
    }));
    const seen: boolean[] = [];
    chat.on('cut', ({ cut }) => seen.push(cut));
    await chat.send('Tell me everything');
    expect(seen).toEqual([false]);
  });
});
