// Edit and resend, regenerate with versions, rename, search, and ended chats: through ChatService
// and the store, as the UI calls them.
import { describe, expect, it } from 'vitest';
import { ChatService } from '../../../src/services/chat/chat';
import { plainPreparer } from '../../../src/services/chat/reply-prompt';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { ChatMessage, GenerateOptions, LanguageModel } from '../../../src/ports';

const H = 3600_000;

/** Answers "reply N to <last user message>"; records the options of every call. */
class CountingModel implements LanguageModel {
  readonly modelId = 'count';
  n = 0;
  options: GenerateOptions[] = [];
  histories: string[][] = [];
  async chat(messages: ChatMessage[], o: GenerateOptions = {}): Promise<string> {
    this.options.push(o);
    this.histories.push(messages.filter((m) => m.role !== 'system').map((m) => m.content));
    const last = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const text = `reply ${++this.n} to ${last}`;
    o.onToken?.(text);
    return text;
  }
  async json(): Promise<string> {
    return '{}';
  }
}

function setup(temperature?: number) {
  const repo = new InMemoryRepository();
  const model = new CountingModel();
  const clock = { t: 10 * H };
  const notices: string[] = [];
  const chat = new ChatService({
    repo,
    preparer: plainPreparer,
    getModel: () => model,
    idleGapMs: () => H,
    now: () => (clock.t += 1000),
    saveEveryMs: 0,
    temperature: () => temperature,
  });
  chat.on('notice', ({ message }) => notices.push(message));
  return { repo, chat, model, clock, notices };
}

const stored = async (repo: InMemoryRepository) => {
  const [s] = await repo.listSessions();
  return (await repo.listTurns(s.id)).map((t) => t.text);
};

describe('ChatService versions', () => {
  it('regenerating a middle reply branches; flipping back restores the later turns from the store', async () => {
    const { repo, chat } = setup();
    await chat.send('one');
    await chat.send('two');
    expect(await stored(repo)).toEqual(['one', 'reply 1 to one', 'two', 'reply 2 to two']);
    await chat.regenerate(chat.turns[1].id);
    expect(await stored(repo)).toEqual(['one', 'reply 3 to one']);
    const [s] = await repo.listSessions();
    const again = new ChatService({
      repo,
      preparer: plainPreparer,
      getModel: () => undefined,
      idleGapMs: () => H,
      now: () => 10 * H + 5000,
    });
    await again.open(s.id); // as after a reload
    expect(again.turns[1].versions?.map((v) => v.text)).toEqual(['reply 1 to one']);
    await again.showVersion(again.turns[1].id, 0);
    expect(await stored(repo)).toEqual(['one', 'reply 1 to one', 'two', 'reply 2 to two']);
    await again.showVersion(again.turns[1].id, 1);
    expect(await stored(repo)).toEqual(['one', 'reply 3 to one']);
  });

  it('edit and resend answers the edited message with only the turns before it', async () => {
    const { repo, chat, model } = setup();
    await chat.send('I like tea');
    await chat.send('and cake');
    await chat.editAndResend(chat.turns[0].id, 'I like coffee');
    expect(await stored(repo)).toEqual(['I like coffee', 'reply 3 to I like coffee']);
    expect(model.histories.at(-1)).toEqual(['I like coffee']);
    const first = chat.turns[0];
    expect(first.versions?.[0]).toMatchObject({ text: 'I like tea' });
    // Put away flat, each naming the version it followed.
    expect(first.branches?.map((t) => [t.text, t.follows.version])).toEqual([
      ['reply 1 to I like tea', 0],
      ['and cake', 0],
      ['reply 2 to and cake', 0],
    ]);
    expect(first.branches?.map((t) => t.follows.turnId)).toEqual([first.id, first.branches![0].id, first.branches![1].id]);
    // Unchanged text or an ended chat: nothing happens.
    await chat.editAndResend(chat.turns[0].id, 'I like coffee');
    expect(model.n).toBe(3);
  });

  it('passes the temperature setting to the model', async () => {
    const { chat, model } = setup(1.3);
    await chat.send('hi');
    expect(model.options[0].temperature).toBe(1.3);
  });
});

describe('ChatService chats', () => {
  it('renames a chat, and a reply finishing afterwards keeps the new title', async () => {
    const { repo, chat } = setup();
    await chat.send('hello');
    const id = chat.current!.id;
    await chat.rename(id, '  Morning   talk ');
    await chat.send('more');
    expect((await repo.getSession(id))?.title).toBe('Morning talk');
    await chat.rename(id, '   ');
    expect((await repo.getSession(id))?.title).toBe('Morning talk');
  });

  it('searches titles and message text, and sees new messages', async () => {
    const { chat } = setup();
    await chat.send('My ginkgo tree grows');
    const first = chat.current!.id;
    await chat.newChat();
    await chat.send('Planning a trip');
    expect((await chat.search('ginkgo')).map((m) => m.sessionId)).toEqual([first]);
    expect((await chat.search('planning')).map((m) => m.in)).toEqual(['title']);
    expect(await chat.search('cactus')).toEqual([]);
    await chat.send('and a cactus');
    expect((await chat.search('cactus')).length).toBe(1);
  });

  it('sending in an ended chat starts a new one and says so', async () => {
    const { repo, chat, notices } = setup();
    await chat.send('hello');
    const first = chat.current!.id;
    await chat.endCurrent();
    expect(chat.current?.status).toBe('ended');
    await chat.send('again');
    expect(chat.current!.id).not.toBe(first);
    expect(notices[0]).toMatch(/new chat started/i);
    expect((await repo.listSessions()).length).toBe(2);
    // An ended chat's messages cannot be edited or regenerated.
    await chat.open(first);
    await chat.editAndResend(chat.turns[0].id, 'changed');
    await chat.regenerate(chat.turns[1].id);
    expect((await repo.listTurns(first)).map((t) => t.text)).toEqual(['hello', 'reply 1 to hello']);
  });

  it('a chat deleted (in another tab) while its reply streams stays deleted, also after the next message', async () => {
    const { repo, chat, model, notices } = setup();
    await chat.send('hello');
    const id = chat.current!.id;
    // The next reply: the chat is deleted from the store while it streams.
    const chatCall = model.chat.bind(model);
    model.chat = async (m, o) => {
      await repo.apply({ deleteSessions: [id], deleteTurns: (await repo.listTurns(id)).map((t) => t.id) });
      return chatCall(m, o);
    };
    await chat.send('more');
    expect(await repo.getSession(id)).toBeUndefined();
    expect(await repo.listTurns(id)).toEqual([]);
    expect(chat.current).toBeUndefined();
    expect(notices).toContain('This chat was deleted in another tab.');
    model.chat = chatCall;
    await chat.send('a fresh start');
    const sessions = await repo.listSessions();
    expect(sessions.map((x) => x.title)).toEqual(['a fresh start']);
    expect(sessions[0]!.id).not.toBe(id);
  });

  it('forget shows an empty chat when the shown one was deleted', async () => {
    const { repo, chat } = setup();
    await chat.send('hello');
    const id = chat.current!.id;
    await repo.apply({ deleteSessions: [id], deleteTurns: chat.turns.map((t) => t.id) });
    await chat.open(id);
    expect(chat.current).toBeUndefined();
    expect(chat.turns).toEqual([]);
  });
});
