// "Forget means forget": one act of forgetting reaches every copy of a fact. Through the
// real ChatService, MemoryService, commands and repository (in memory and IndexedDB), with a
// scripted model that records every prompt: after a forget (the explorer's Delete or the "forget"
// command) no prompt holds the fact, nor after a reload, nor once the chat it was said in is deleted;
// a later memorising of that chat does not make it again; Undo brings it all back.
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
import { createMemoriseJob } from '../../../src/memory/ingest/memorise';
import type { Turn } from '../../../src/memory/types';

const T = Date.UTC(2025, 11, 1);
const FACT = 'My sister Ingrid is coming to visit me at Christmas';

// One event per user line; the reply to the question quotes the fact, as a model would.
function answer({ kind, schemaTitle, messages }: ScriptedCall): string {
  const text = messages.map((m) => m.content).join('\n');
  if (kind === 'chat')
    return /When is my sister Ingrid visiting\?$/.test(messages.at(-1)!.content) ? 'Ingrid is coming at Christmas.' : 'Noted.';
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

/** The app's services on a repository (a second call on the same one is a reload). */
function wire(repo: Repository & LineReads, llm: ScriptedModel) {
  const settings = new SettingsService(repo);
  const memory = new MemoryService(
    repo,
    settings,
    () => llm,
    () => undefined,
  );
  let now = T;
  const commands = new MemoryCommands({ repo, memory, getEmbedder: () => undefined, getModel: () => llm, now: () => now });
  const chat = new ChatService({
    repo,
    preparer: memory,
    getModel: () => llm,
    idleGapMs: () => 3_600_000,
    now: () => (now += 1000),
    commands,
  });
  memory.on('graph', () => void chat.refresh());
  return { memory, commands, chat };
}

type App = ReturnType<typeof wire>;

/** Every model call from `from` on, as one text. */
const sent = (llm: ScriptedModel, from: number) =>
  llm.calls
    .slice(from)
    .flatMap((c) => c.messages.map((m) => m.content))
    .join('\n');

async function chatAndRemember(app: App, repo: Repository, lines: string[]): Promise<string> {
  await app.chat.newChat();
  for (const line of lines) await app.chat.send(line);
  const id = app.chat.current!.id;
  await app.chat.endCurrent();
  app.memory.kick();
  await until(async () => (await repo.getSession(id))?.status === 'memorised', 'the chat memorised');
  return id;
}

/** Asks in a new chat; returns everything the model was sent for it. */
async function ask(app: App, llm: ScriptedModel, text = 'When is my sister Ingrid visiting?'): Promise<string> {
  const from = llm.calls.length;
  await app.chat.newChat();
  await app.chat.send(text);
  return sent(llm, from);
}

/** What the store could still recall: passages, memories, and lines not marked forgotten. */
async function recallable(repo: Repository): Promise<string> {
  const sessions = await repo.listSessions();
  const turns = (await Promise.all(sessions.map((s) => repo.listTurns(s.id)))).flat();
  return [
    ...(await repo.listSegments()).flatMap((s) => [s.text, s.indexText]),
    ...(await repo.listMemories()).map((m) => m.text),
    ...turns.filter((t) => !t.forgotten).map((t) => t.text),
  ].join('\n');
}

for (const [name, open] of Object.entries(repos)) {
  describe(`forgetting reaches every copy of a fact (${name})`, () => {
    async function setUp() {
      const repo = await open();
      const llm = new ScriptedModel(answer);
      const app = wire(repo, llm);
      await app.memory.load();
      const source = await chatAndRemember(app, repo, [FACT, 'I bake sourdough on Sundays']);
      // A later chat asks; the reply quotes the fact (drawn from the memory and its passage).
      expect(await ask(app, llm)).toContain('Christmas');
      const quoting = app.chat.current!.id;
      await app.chat.endCurrent();
      app.memory.kick();
      await until(async () => (await repo.getSession(quoting))?.status === 'memorised', 'the second chat memorised');
      const fact = [...app.memory.memories.values()].find((m) => m.text.includes('Christmas'))!;
      expect(fact).toBeDefined();
      return { repo, llm, app, source, quoting, fact };
    }

    it('the Delete of a memory: no prompt holds the fact after it, after a reload, or once its chat is deleted; Undo brings it back', async () => {
      const { repo, llm, app, source, quoting, fact } = await setUp();
      const undo = await app.memory.deleteMemories([fact.id]);
      expect(undo).toBeDefined();

      // The store: the memory gone, its lines and the quoting reply marked, no passage holds them.
      expect(await recallable(repo)).not.toMatch(/Christmas/);
      const [said, answered] = await repo.listTurns(source);
      expect(said.forgotten?.by).toEqual([fact.id]);
      expect(answered.forgotten?.by).toEqual([fact.id]);
      expect(said.text).toBe(FACT);
      const [question, reply] = await repo.listTurns(quoting);
      expect(question.forgotten).toBeUndefined();
      expect(reply.forgotten?.by).toEqual([fact.id]);
      // The rest of the chat is still recalled.
      expect((await repo.listSegmentsBySession(source)).map((s) => s.text).join('\n')).toMatch(/user: I bake sourdough on Sundays/);
      // The live index too.
      expect(
        app.memory.index
          .search('Christmas Ingrid visit', undefined, 20)
          .map((h) => h.unit.text)
          .join('\n'),
      ).not.toMatch(/Christmas/);

      expect(await ask(app, llm)).not.toMatch(/Christmas/);

      // A reload: everything read again from the store.
      const again = wire(repo, llm);
      await again.memory.load();
      expect(await ask(again, llm)).not.toMatch(/Christmas/);

      // Undo brings it all back: the memory, the lines, the passages.
      await again.memory.applyLive(undo!);
      expect((await repo.listTurns(source))[0].forgotten).toBeUndefined();
      expect((await repo.listSegmentsBySession(source)).map((s) => s.text).join('\n')).toContain(`user: ${FACT}`);
      expect(await repo.getMemory(fact.id)).toBeDefined();
      expect(await repo.listTombstones('memory')).toEqual([]);
      expect(await ask(again, llm)).toContain('Christmas');

      // Forgotten again, then the chat it was said in deleted (its memories kept): still nowhere.
      await again.memory.deleteMemories([fact.id]);
      await again.memory.deleteSession(source, { deleteMemories: false });
      expect(await recallable(repo)).not.toMatch(/Christmas/);
      expect(await ask(again, llm)).not.toMatch(/Christmas/);
    });

    it('"forget …" in the chat: the card names what goes, the next prompt does not hold it, Undo brings it back', async () => {
      const { repo, llm, app } = await setUp();
      await app.chat.newChat();
      await app.chat.send('forget my sister Ingrid');
      const card = app.chat.turns.at(-1)!;
      expect(card.command).toEqual({ kind: 'forget', state: 'asked' });
      const ids = card.usedMemory!.memoryIds;
      const preview = await app.memory.forgetting.preview(ids);
      expect(preview.chats.reduce((n, c) => n + c.yours + c.replies, 0)).toBeGreaterThanOrEqual(3);
      expect(preview.passages).toBeGreaterThanOrEqual(2);
      const undo = await app.commands.forget(card.id, ids);
      expect(await recallable(repo)).not.toMatch(/Christmas/);
      const from = llm.calls.length;
      await app.chat.send('What should I cook for the holidays?');
      expect(sent(llm, from)).not.toMatch(/Christmas/);
      expect(await ask(app, llm)).not.toMatch(/Christmas/);

      await app.commands.undo(undo!);
      expect(await ask(app, llm)).toContain('Christmas');
    });

    it('"forget …" offers the user\'s own message when no memory holds it yet (the chat is still open); forgotten, it is never sent or memorised', async () => {
      const repo = await open();
      const llm = new ScriptedModel(answer);
      const app = wire(repo, llm);
      await app.memory.load();
      await app.chat.send(FACT);
      await app.chat.send('I bake sourdough on Sundays');
      await app.chat.send('forget my sister Ingrid');
      const card = app.chat.turns.at(-1)!;
      const said = app.chat.turns[0];
      expect(card.command).toEqual({ kind: 'forget', state: 'asked', lines: [said.id] });
      expect(card.text).toBe('Forget this message of yours about “my sister Ingrid”? Nothing is deleted until you confirm.');
      expect(card.usedMemory).toBeUndefined();
      expect((await app.memory.forgetting.preview([], [said.id])).chats).toEqual([{ sessionId: said.sessionId, yours: 1, replies: 1 }]);
      const undo = await app.commands.forget(card.id, [], [said.id]);
      expect((await repo.getTurns([card.id]))[0].text).toBe('Forgot 1 message.');
      const from = llm.calls.length;
      await app.chat.send('What should I cook for the holidays?');
      expect(sent(llm, from)).not.toMatch(/Christmas/);
      // Ended and memorised: nothing of it is remembered; the rest is.
      const id = app.chat.current!.id;
      await app.chat.endCurrent();
      app.memory.kick();
      await until(async () => (await repo.getSession(id))?.status === 'memorised', 'memorised');
      expect(await recallable(repo)).not.toMatch(/Christmas/);
      expect((await repo.listMemories()).map((m) => m.text)).toContain('You said: I bake sourdough on Sundays');
      // Undo: the line is back (in its passage too).
      await app.commands.undo(undo!);
      expect((await repo.listTurns(id))[0].forgotten).toBeUndefined();
      expect((await repo.listSegmentsBySession(id)).map((s) => s.text).join('\n')).toContain(FACT);
    });

    it("Undo brings back the forgotten memory's search vectors, which the forget took from the store", async () => {
      const { repo, app, fact } = await setUp();
      const vector = { unitId: fact.id, modelId: 'an-embedder', vector: Float32Array.from([0.6, 0.8]) };
      await repo.apply({ vectors: [vector] });
      expect(await repo.listVectorsOfUnit(fact.id)).toEqual([vector]);
      const undo = await app.memory.deleteMemories([fact.id]);
      expect(await repo.listVectorsOfUnit(fact.id)).toEqual([]);
      await app.memory.applyLive(undo!);
      expect(await repo.getMemory(fact.id)).toBeDefined();
      expect(await repo.listVectorsOfUnit(fact.id)).toEqual([vector]);
    });

    it('memorising the chat again makes no memory or passage of a forgotten line', async () => {
      const { repo, app, source, fact } = await setUp();
      await app.memory.deleteMemories([fact.id]);
      await repo.apply({ jobs: [createMemoriseJob(source, T + 86_400_000)] });
      app.memory.kick();
      await until(async () => (await repo.listJobs()).every((j) => j.status === 'done'), 'the second memorising');
      expect(await recallable(repo)).not.toMatch(/Christmas/);
      expect((await repo.listMemories()).map((m) => m.text)).toContain('You said: I bake sourdough on Sundays');
    });
  });
}

describe('a forgotten line is not sent with its own chat', () => {
  it('neither as a recent turn nor recalled from earlier in the chat', async () => {
    const repo = new InMemoryRepository();
    const llm = new ScriptedModel(answer);
    const { memory } = wire(repo, llm);
    await memory.load();
    const session = { id: 's', title: 's', startedAt: T, lastActivityAt: T, status: 'open' as const };
    const line = (index: number, role: Turn['role'], text: string): Turn => ({
      id: `t${index}`,
      sessionId: 's',
      index,
      role,
      text,
      time: T + index,
      status: 'complete',
    });
    // A long chat: the fact at its start is recalled into the prompt when asked about.
    const filler = Array.from({ length: 120 }, (_, i) =>
      line(i + 2, i % 2 ? 'assistant' : 'user', `Talk about gardening number ${i} with tomatoes and beans.`),
    );
    const history = [
      line(0, 'user', FACT),
      line(1, 'assistant', 'How lovely, Christmas with Ingrid!'),
      ...filler,
      line(122, 'user', 'When is Ingrid coming at all?'),
    ];
    const prompt = async (turns: Turn[]) =>
      (await memory.prepare({ session, history: turns, now: T + 200, llm, signal: new AbortController().signal })).messages
        .map((m) => m.content)
        .join('\n');
    expect(await prompt(history)).toContain('Christmas');
    const forgotten = history.map((t) => (t.index < 2 ? { ...t, forgotten: { at: T + 100, by: ['m'] } } : t));
    expect(await prompt(forgotten)).not.toContain('Christmas');
    expect(await prompt(forgotten.slice(0, 2).concat(forgotten.slice(-1)))).not.toContain('Christmas');
  });
});
