// Memory commands said in the chat, through the real ChatService, MemoryService and
// repository (the in-memory one and IndexedDB): what is stored, what the answer says, that no model
// is called, that forgetting waits for the user and can be undone, and that memorising the chat
// later makes no second memory of a "remember that".
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { ChatService } from '../../../src/services/chat/chat';
import { MemoryCommands } from '../../../src/services/commands/memory-commands';
import { IdbRepository } from '../../../src/store/repository';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { until as waitUntil } from '../../support/until';
import { ScriptedModel, type ScriptedCall } from '../memory/helpers';
import { freshFactory } from '../store/helpers';
import type { LineReads, Repository } from '../../../src/ports';
import { recordSchemas } from '../../../src/store/backup-format';
import type { Memory, Turn } from '../../../src/memory/types';

const T = Date.UTC(2025, 0, 10);

// The summarising call makes one event per user message, so a command turn fed to it would show.
function answer({ kind, schemaTitle, messages }: ScriptedCall): string {
  const text = messages.map((m) => m.content).join('\n');
  if (kind === 'chat') return 'a model reply';
  if (schemaTitle === 'session_memories') {
    const events = [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)].map((m) => ({
      text: `You said: ${m[2]}`,
      about: 'user',
      turns: [m[1]],
    }));
    return JSON.stringify({ events, userTraits: [], assistantTraits: [], notes: [], topics: [] });
  }
  if (schemaTitle === 'relation_labels') return JSON.stringify({ labels: [] });
  return '{}';
}

const repos: Record<string, () => Promise<Repository & LineReads>> = {
  'in-memory': async () => new InMemoryRepository(),
  indexeddb: async () => IdbRepository.open({ factory: freshFactory() }),
};

/** Waits on the condition, for as long as it takes (tests/support/until.ts). */
const until = (check: () => Promise<boolean>, what: string) => waitUntil(what, check);

function wire(repo: Repository & LineReads, { model = false } = {}) {
  const llm = new ScriptedModel(answer);
  let loaded = model;
  const settings = new SettingsService(repo);
  const memory = new MemoryService(
    repo,
    settings,
    () => (loaded ? llm : undefined),
    () => undefined,
  );
  let now = T;
  const commands = new MemoryCommands({
    repo,
    memory,
    getEmbedder: () => undefined,
    getModel: () => (loaded ? llm : undefined),
    now: () => now,
  });
  const chat = new ChatService({
    repo,
    preparer: memory,
    getModel: () => (loaded ? llm : undefined),
    idleGapMs: () => 3_600_000,
    now: () => (now += 1000),
    commands,
  });
  memory.on('graph', () => void chat.refresh());
  return { llm, settings, memory, commands, chat, load: () => (loaded = true) };
}

const trait = (id: string, text: string, extra: Partial<Memory> = {}): Memory => ({
  id,
  kind: 'user-trait',
  text,
  subject: 'user',
  time: T - 86_400_000,
  sourceTurnIds: [],
  sessionId: 'old',
  edited: false,
  createdAt: T - 86_400_000,
  ...extra,
});

for (const [name, open] of Object.entries(repos)) {
  describe(`memory commands (${name})`, () => {
    it('"remember that …" stores the words as the user\'s own memory with its source turn, with no model loaded and no call', async () => {
      const repo = await open();
      const { chat, memory, llm } = wire(repo);
      await memory.load();
      await chat.send('remember that my sister is called Ana');

      const [stored] = await repo.listMemories();
      const turns = await repo.listTurns(chat.current!.id);
      expect(turns.map((t) => t.role)).toEqual(['user', 'assistant']);
      expect(stored).toMatchObject({
        kind: 'user-trait',
        text: 'Your sister is called Ana.',
        subject: 'user',
        sourceTurnIds: [turns[0].id],
        sessionId: chat.current!.id,
        edited: true,
      });
      expect(turns[1]).toMatchObject({ command: { kind: 'remember', state: 'done' }, text: 'Remembered: “Your sister is called Ana.”' });
      expect(turns[1].usedMemory?.memoryIds).toEqual([stored.id]);
      expect(turns[1].drewOn).toEqual([stored.id]);
      // In the live index at once: the next reply can find it.
      expect(memory.index.search('sister', undefined, 5).map((h) => h.unit.id)).toEqual([stored.id]);
      expect(chat.turns.map((t) => t.id)).toEqual(turns.map((t) => t.id));
      expect(llm.calls).toEqual([]);

      // Said again: nothing new, and it says so.
      await chat.send('Remember: my sister is called Ana');
      expect(await repo.listMemories()).toHaveLength(1);
      expect(chat.turns.at(-1)).toMatchObject({ command: { kind: 'remember', state: 'none' } });
    });

    it('memorising the chat later makes no second memory of a "remember that", and keeps the rest', async () => {
      const repo = await open();
      const { chat, memory, llm, load } = wire(repo);
      load();
      await memory.load();
      await chat.send('remember that my sister is called Ana');
      await chat.send('I started learning the cello');
      const id = chat.current!.id;
      await chat.endCurrent();
      memory.kick();
      await until(async () => (await repo.getSession(id))?.status === 'memorised', 'memorised');
      const texts = (await repo.listMemories()).map((m) => m.text).sort();
      expect(texts).toEqual(['You said: I started learning the cello', 'Your sister is called Ana.']);
      // The summary saw the conversation without the command and its answer.
      const summary = llm.calls.find((c) => c.schemaTitle === 'session_memories')!;
      const conversation = summary.messages
        .map((m) => m.content)
        .join('\n')
        .split('Conversation:')[1];
      expect(conversation).toMatch(/T1 \[user[^\]]*\]: I started learning the cello/);
      expect(conversation).not.toMatch(/sister|Remembered/);
    });

    it('"forget …" asks first; confirmed, the memories go as the explorer deletes them, replies built from them follow, and Undo brings them back', async () => {
      const repo = await open();
      const { chat, memory, commands } = wire(repo);
      const sister = trait('m-sister', 'Your sister Ana lives in Porto.');
      const other = trait('m-tea', 'You drink green tea.');
      // A reply of an earlier chat that drew on the sister memory.
      const reply: Turn = {
        id: 'old-reply',
        sessionId: 'old',
        index: 0,
        role: 'assistant',
        text: 'Say hi to Ana!',
        time: T - 1,
        status: 'complete',
        usedMemory: { memoryIds: ['m-sister', 'm-tea'], segmentIds: [], timelines: [], scores: [] },
      };
      await repo.apply({ sessions: [{ id: 'old', title: 'old', startedAt: T - 9, lastActivityAt: T - 1, status: 'memorised' }] });
      await repo.apply({ memories: [sister, other], turns: [reply] });
      await memory.load();

      await chat.send('forget my sister');
      const card = chat.turns.at(-1)!;
      expect(card).toMatchObject({ command: { kind: 'forget', state: 'asked' } });
      expect(card.usedMemory?.memoryIds).toEqual(['m-sister']);
      expect(card.text).not.toMatch(/Porto/);
      expect((await repo.listMemories()).map((m) => m.id).sort()).toEqual(['m-sister', 'm-tea']);

      const undo = await commands.forget(card.id, ['m-sister']);
      expect((await repo.listMemories()).map((m) => m.id)).toEqual(['m-tea']);
      expect(memory.memories.has('m-sister')).toBe(false);
      expect(await repo.listTombstones('memory')).toEqual([expect.objectContaining({ kind: 'memory', id: 'm-sister' })]);
      const [after] = await repo.getTurns([card.id]);
      expect(after).toMatchObject({ command: { kind: 'forget', state: 'forgotten' }, text: 'Forgot 1 memory.' });
      expect(after.usedMemory).toBeUndefined();
      const [old] = await repo.getTurns(['old-reply']);
      expect(old.usedMemory?.memoryIds).toEqual(['m-tea']);
      // The chat shows the card as stored.
      await until(async () => chat.turns.at(-1)?.command?.state === 'forgotten', 'the card in the chat');

      await commands.undo(undo!);
      expect((await repo.listMemories()).map((m) => m.id).sort()).toEqual(['m-sister', 'm-tea']);
      expect(memory.memories.has('m-sister')).toBe(true);
      expect(await repo.listTombstones('memory')).toEqual([]);
      expect((await repo.getTurns([card.id]))[0]).toMatchObject({ command: { state: 'undone' }, text: 'Undone: the memory is back.' });
      // Asked again, a card that is no longer asking deletes nothing.
      expect(await commands.forget(card.id, ['m-sister'])).toBeUndefined();
      expect(await repo.listMemories()).toHaveLength(2);
    });

    it('"Keep them" deletes nothing; nothing matching is said plainly; Undo of a remember deletes it with a tombstone', async () => {
      const repo = await open();
      const { chat, memory, commands } = wire(repo);
      await memory.load();
      await chat.send('remember that my sister is called Ana');
      const remembered = chat.turns.at(-1)!;
      await chat.send('forget about my sister');
      const card = chat.turns.at(-1)!;
      await commands.keep(card.id);
      expect(await repo.listMemories()).toHaveLength(1);
      expect((await repo.getTurns([card.id]))[0]).toMatchObject({ command: { state: 'kept' }, text: 'Kept them: nothing was forgotten.' });

      await chat.send('forget my dentist');
      expect(chat.turns.at(-1)).toMatchObject({
        command: { kind: 'forget', state: 'none' },
        text: 'Nothing in your memory matches “my dentist”, so nothing was forgotten.',
      });

      await commands.unremember(remembered.id);
      expect(await repo.listMemories()).toEqual([]);
      expect(await repo.listTombstones('memory')).toEqual([expect.objectContaining({ kind: 'memory', id: `said:${chat.turns[0].id}` })]);
      expect((await repo.getTurns([remembered.id]))[0]).toMatchObject({ command: { state: 'undone' } });
    });

    it('"what do you remember about me?" lists the traits true now, not ended or replaced ones; about a topic the model answers when nothing is remembered', async () => {
      const repo = await open();
      const { chat, memory, llm, load } = wire(repo);
      await repo.apply({
        memories: [
          trait('now-1', 'You live in Porto.'),
          trait('ended', 'You work at the bakery.', { endedAt: T - 1000 }),
          trait('old-city', 'You live in Lisbon.', { time: T - 9e8, supersededBy: 'now-1' }),
          trait('now-2', 'You play the cello.', { time: T - 5000 }),
          { ...trait('event', 'You went to the bakery.'), kind: 'event' },
        ],
      });
      await memory.load();
      await chat.send('What do you remember about me?');
      const list = chat.turns.at(-1)!;
      expect(list).toMatchObject({
        command: { kind: 'recall', state: 'done' },
        text: 'What I remember about you that is true now (2 memories):',
      });
      expect(list.usedMemory?.memoryIds).toEqual(['now-2', 'now-1']);

      await chat.send('what do you remember about the bakery?');
      const bakery = chat.turns.at(-1)!;
      expect(bakery.usedMemory?.memoryIds).toEqual(['event']);
      expect(bakery.text).toMatch(/1 memory about it is no longer true/);

      // Nothing about it and no model: said plainly. With a model: the model answers it.
      await chat.send('what do you remember about the French revolution?');
      expect(chat.turns.at(-1)).toMatchObject({ command: { kind: 'recall', state: 'none' } });
      expect(llm.calls).toEqual([]);
      load();
      await chat.send('what do you remember about the Roman empire?');
      expect(chat.turns.at(-1)).toMatchObject({ role: 'assistant', text: 'a model reply' });
      expect(chat.turns.at(-1)!.command).toBeUndefined();
      // A question to the model is no command either.
      await chat.send('do you remember the day we met?');
      expect(chat.turns.at(-1)).toMatchObject({ text: 'a model reply' });
      expect(llm.calls.filter((c) => c.kind === 'chat')).toHaveLength(2);
    });

    it('"what do you remember about me?" with no trait true now lists what the user told (events, notes), not "nothing"', async () => {
      const repo = await open();
      const { chat, memory } = wire(repo);
      await repo.apply({
        memories: [
          { ...trait('moved', 'You moved to Porto last month.', { time: T - 2000 }), kind: 'event' },
          { ...trait('short', 'Keep answers short.', { time: T - 1000 }), kind: 'note' },
          { ...trait('ana', 'Ana has two kids.'), kind: 'event', subject: 'Ana' },
          { ...trait('said-tealeaf', 'Tealeaf likes puns.'), kind: 'assistant-trait', subject: 'assistant' },
          { ...trait('old', 'You went to the old bakery.', { endedAt: T - 500 }), kind: 'event' },
          trait('ended', 'You work at the bakery.', { endedAt: T - 1000 }),
        ],
      });
      await memory.load();
      await chat.send('What do you remember about me?');
      const list = chat.turns.at(-1)!;
      expect(list).toMatchObject({
        command: { kind: 'recall', state: 'done' },
        text: 'I have no lasting facts about you yet. What you told me (2 memories):',
      });
      expect(list.usedMemory?.memoryIds).toEqual(['short', 'moved']);
    });

    it('"what do you remember about me?" after saying things in this chat says they are remembered when it ends, in every state', async () => {
      const repo = await open();
      const { chat, memory, load } = wire(repo);
      await memory.load();
      // Only commands so far: nothing of the person's own is waiting for the chat to end.
      await chat.send('remember that I prefer short answers');
      await chat.send('What do you remember about me?');
      expect(chat.turns.at(-1)!.text).toBe('I have no lasting facts about you yet. What you told me (1 memory):');
      await chat.send('what do you remember about me');
      expect(chat.turns.at(-1)!.text).not.toMatch(/this chat/);
      // Something of their own (answered by the model, or with no model to answer it).
      load();
      await chat.send('I moved to Lisbon last week.');
      await chat.send('What do you remember about me?');
      expect(chat.turns.at(-1)!.text).toBe(
        'I have no lasting facts about you yet. What you said in this chat is remembered when it ends. What you told me (1 memory):',
      );
      // A new chat starts without it; a trait true now is listed after the sentence.
      await chat.newChat();
      await repo.apply({ memories: [trait('porto', 'You live in Porto.')] });
      await memory.load();
      await chat.send('what do you remember about me?');
      expect(chat.turns.at(-1)!.text).toBe('What I remember about you that is true now (1 memory):');
      await chat.send('I play the cello.');
      await chat.send('What do you remember about me?');
      expect(chat.turns.at(-1)!.text).toBe(
        'What you said in this chat is remembered when it ends. What I remember about you that is true now (1 memory):',
      );
    });

    it('in a temporary chat nothing is remembered or forgotten, and it says so', async () => {
      const repo = await open();
      const { chat, memory } = wire(repo);
      await repo.apply({ memories: [trait('m', 'Your sister is called Ana.')] });
      await memory.load();
      await chat.startTemporary();
      await chat.send('remember that I like jazz');
      expect(chat.turns.at(-1)).toMatchObject({ command: { kind: 'remember', state: 'temporary' } });
      expect(chat.turns.at(-1)!.text).toMatch(/temporary chat: nothing is remembered here/);
      await chat.send('forget my sister');
      expect(chat.turns.at(-1)).toMatchObject({ command: { kind: 'forget', state: 'temporary' } });
      expect((await repo.listMemories()).map((m) => m.id)).toEqual(['m']);
      expect(await repo.listSessions()).toEqual([]);
    });

    it('a chat deleted before it was memorised keeps what the user asked to remember', async () => {
      const repo = await open();
      const { chat, memory } = wire(repo);
      await memory.load();
      await chat.send('remember that my sister is called Ana');
      const id = chat.current!.id;
      await memory.deleteSession(id, { deleteMemories: false });
      expect((await repo.listMemories()).map((m) => m.text)).toEqual(['Your sister is called Ana.']);
      await memory.deleteSession(id, { deleteMemories: true });
    });
  });
}

describe('a command answer in a backup', () => {
  it('is accepted with its state, and a state the app does not know is refused', async () => {
    const repo = new InMemoryRepository();
    const { chat, memory } = wire(repo);
    await memory.load();
    await chat.send('remember that my sister is called Ana');
    for (const t of await repo.listTurns(chat.current!.id)) expect(recordSchemas.turns.safeParse(t).success).toBe(true);
    const answer = chat.turns.at(-1)!;
    expect(recordSchemas.turns.safeParse({ ...answer, command: { kind: 'remember', state: 'maybe' } }).success).toBe(false);
  });
});
