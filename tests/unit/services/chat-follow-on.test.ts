// A message sent in a chat that had ended starts a new chat (the ended one is remembered on its
// own), and the new chat follows on from it: its replies see the ended chat's messages as dialogue,
// within the window as any chat, also after a reload. How the chat ended does not matter: the End
// button, the idle gap noticed at sending or by the periodic check, or the chat already memorised.
import { describe, expect, it } from 'vitest';
import { ChatService } from '../../../src/services/chat/chat';
import { plainPreparer, type TurnPreparer } from '../../../src/services/chat/reply-prompt';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { ChatMessage, GenerateOptions, LanguageModel } from '../../../src/ports';

const H = 3600_000;

/** Answers "reply N"; records each call's dialogue (what the model was sent after the system prompt). */
class RecordingModel implements LanguageModel {
  readonly modelId = 'recording';
  n = 0;
  sent: ChatMessage[][] = [];
  async chat(messages: ChatMessage[], o: GenerateOptions = {}): Promise<string> {
    this.sent.push(messages.filter((m) => m.role !== 'system'));
    const text = `reply ${++this.n}`;
    o.onToken?.(text);
    return text;
  }
  async json(): Promise<string> {
    return '{}';
  }
}

type Ending = 'button' | 'idle at sending' | 'idle check' | 'memorised';
const ENDINGS: Ending[] = ['button', 'idle at sending', 'idle check', 'memorised'];
type Prep = 'no memory' | 'memory';

async function setup(prep: Prep, repo = new InMemoryRepository(), clock = { t: 10 * H }) {
  const model = new RecordingModel();
  let preparer: TurnPreparer = plainPreparer;
  if (prep === 'memory') {
    const memory = new MemoryService(
      repo,
      new SettingsService(repo),
      () => undefined,
      () => undefined,
    );
    await memory.load();
    preparer = memory;
  }
  const notices: string[] = [];
  const chat = new ChatService({ repo, preparer, getModel: () => model, idleGapMs: () => H, now: () => (clock.t += 1000), saveEveryMs: 0 });
  chat.on('notice', ({ message }) => notices.push(message));
  await chat.start();
  return { repo, chat, model, clock, notices };
}

/** The texts the model read as dialogue (a memory block before a message left out). */
const dialogueOf = (sent: ChatMessage[]) => sent.map((m) => `${m.role}: ${m.content.replace(/^<memory>[\s\S]*<\/memory>\n\n/, '')}`);

async function endIt(ending: Ending, s: Awaited<ReturnType<typeof setup>>): Promise<void> {
  const id = s.chat.current!.id;
  if (ending === 'button') await s.chat.endCurrent();
  else if (ending === 'idle check') {
    s.clock.t += 2 * H;
    await s.chat.checkIdle();
  } else if (ending === 'idle at sending') s.clock.t += 2 * H;
  else {
    await s.chat.endCurrent();
    const ended = (await s.repo.getSession(id))!;
    await s.repo.apply({ sessions: [{ ...ended, status: 'memorised' }] });
    await s.chat.open(id);
  }
}

describe.each<Prep>(['no memory', 'memory'])('continuing a chat that had ended (%s)', (prep) => {
  it.each(ENDINGS)('ended by %s: the new chat follows on, and its reply sees the messages shown', async (ending) => {
    const s = await setup(prep);
    await s.chat.send('My bike is a red Bianchi.');
    await s.chat.send('Its chain squeaks.');
    const first = s.chat.current!.id;
    await endIt(ending, s);
    await s.chat.send('What should I oil it with?');
    const second = s.chat.current!;
    expect(second.id).not.toBe(first);
    expect(second.follows).toBe(first);
    expect(s.notices.at(-1)).toMatch(/new chat started/i);
    expect(s.notices.at(-1)).toMatch(/sees? (its|the previous chat's) messages/i);
    expect(dialogueOf(s.model.sent.at(-1)!)).toEqual([
      'user: My bike is a red Bianchi.',
      'assistant: reply 1',
      'user: Its chain squeaks.',
      'assistant: reply 2',
      'user: What should I oil it with?',
    ]);
    // Each chat keeps its own turns (and is remembered on its own).
    expect((await s.repo.listTurns(second.id)).map((t) => t.text)).toEqual(['What should I oil it with?', 'reply 3']);
    expect((await s.repo.listTurns(first)).length).toBe(4);
  });

  it.each(ENDINGS)('ended by %s, then a reload: the next reply still sees both chats', async (ending) => {
    const s = await setup(prep);
    await s.chat.send('My bike is a red Bianchi.');
    await endIt(ending, s);
    await s.chat.send('What should I oil it with?');
    const second = s.chat.current!.id;
    // A reload: a new service over the same store shows the open chat again.
    const again = await setup(prep, s.repo, s.clock);
    expect(again.chat.current?.id).toBe(second);
    await again.chat.send('And how often?');
    expect(dialogueOf(again.model.sent.at(-1)!)).toEqual([
      'user: My bike is a red Bianchi.',
      'assistant: reply 1',
      'user: What should I oil it with?',
      'assistant: reply 2',
      'user: And how often?',
    ]);
  });

  it('a new chat by the button follows nothing; nor does a temporary chat', async () => {
    const s = await setup(prep);
    await s.chat.send('My bike is a red Bianchi.');
    await s.chat.newChat();
    await s.chat.send('Hello there');
    expect(s.chat.current!.follows).toBeUndefined();
    expect(dialogueOf(s.model.sent.at(-1)!)).toEqual(['user: Hello there']);
    await s.chat.startTemporary();
    await s.chat.send('Secret');
    expect(dialogueOf(s.model.sent.at(-1)!)).toEqual(['user: Secret']);
  });
});
