// The promise: a "remember …" about how to answer, in any wording, becomes a standing instruction
// followed in every reply — the next reply of the same chat, a new chat, and after a reload; where
// the words leave it open the loaded model is asked; the person moves it between instruction and
// fact in one click, and the answer that made it says which it is.
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { ChatService } from '../../../src/services/chat/chat';
import { MemoryCommands } from '../../../src/services/commands/memory-commands';
import { IdbRepository } from '../../../src/store/repository';
import { ScriptedModel, type ScriptedCall } from '../memory/helpers';
import { freshFactory } from '../store/helpers';
import type { LineReads, Repository } from '../../../src/ports';

const T = Date.UTC(2025, 0, 10);

function script(kindAnswer: 'instruction' | 'fact' | 'garbled') {
  return ({ kind, schemaTitle }: ScriptedCall): string => {
    if (kind === 'chat') return 'a model reply';
    if (schemaTitle === 'instruction_or_fact') return kindAnswer === 'garbled' ? 'I think so' : JSON.stringify({ kind: kindAnswer });
    return '{}';
  };
}

function wire(repo: Repository & LineReads, kindAnswer: 'instruction' | 'fact' | 'garbled' = 'instruction', model = true) {
  const llm = new ScriptedModel(script(kindAnswer));
  const settings = new SettingsService(repo);
  const memory = new MemoryService(
    repo,
    settings,
    () => (model ? llm : undefined),
    () => undefined,
  );
  let now = T;
  const commands = new MemoryCommands({
    repo,
    memory,
    getEmbedder: () => undefined,
    getModel: () => (model ? llm : undefined),
    now: () => now,
  });
  const chat = new ChatService({
    repo,
    preparer: memory,
    getModel: () => (model ? llm : undefined),
    idleGapMs: () => 3_600_000,
    now: () => (now += 1000),
    commands,
  });
  memory.on('graph', () => void chat.refresh());
  return { llm, memory, commands, chat };
}

/** The system part of the last reply request: where standing instructions go. */
const lastReplyPrompt = (llm: ScriptedModel) =>
  llm.calls
    .filter((c) => c.kind === 'chat')
    .at(-1)!
    .messages.map((m) => m.content)
    .join('\n');

// Wordings about how to answer that a word list at the start of the sentence missed or caught.
const WORDINGS = [
  ['answers should always be short', 'Answers should always be short.'],
  ['I prefer short answers', 'I prefer short answers.'],
  ['your replies must be in French', 'Your replies must be in French.'],
  ['when you explain something, give an example', 'When you explain something, give an example.'],
  ['I hate bullet points', 'I hate bullet points.'],
  ['remember to always answer me in British English', 'Always answer me in British English.'],
  ['no emoji in your replies', 'No emoji in your replies.'],
  ["I'd like you to use metric units", "I'd like you to use metric units."],
] as const;

describe('a standing instruction in any wording is followed in every reply', () => {
  it.each(WORDINGS)('"%s": kept as an instruction; the same chat, a new chat and after a reload send it', async (said, kept) => {
    const factory = freshFactory();
    const repo = await IdbRepository.open({ factory });
    const first = wire(repo);
    await first.memory.load();
    await first.chat.send('Hello there');
    const command = said.startsWith('remember') ? said : `remember that ${said}`;
    await first.chat.send(command);
    const memories = await repo.listMemories();
    expect(memories.map((m) => [m.kind, m.text])).toEqual([['instruction', kept]]);
    expect(first.chat.turns.at(-1)!.text).toBe(`Remembered, and followed in every reply: “${kept}”`);

    await first.chat.send('Tell me about tea');
    expect(lastReplyPrompt(first.llm)).toContain('follow these instructions in every reply');
    expect(lastReplyPrompt(first.llm)).toContain(kept);
    // Its own line and answer are never model input.
    expect(lastReplyPrompt(first.llm)).not.toContain('Remembered, and followed');

    await first.chat.endCurrent();
    await first.chat.send('A new chat about coffee');
    expect(lastReplyPrompt(first.llm)).toContain(kept);

    // A reload: new services over the same store.
    const again = wire(await IdbRepository.open({ factory }));
    await again.memory.load();
    await again.chat.send('After a reload, about cocoa');
    expect(lastReplyPrompt(again.llm)).toContain(kept);
  });

  it('words that leave it open ask the loaded model; its answer decides, and without a model it is a fact', async () => {
    const said = 'remember that all answers in plain English';
    for (const [answer, model, kind] of [
      ['instruction', true, 'instruction'],
      ['fact', true, 'note'],
      ['garbled', true, 'note'],
      ['instruction', false, 'note'],
    ] as const) {
      const repo = await IdbRepository.open({ factory: freshFactory() });
      const { memory, chat, llm } = wire(repo, answer, model);
      await memory.load();
      await chat.send(said);
      expect(
        (await repo.listMemories()).map((m) => m.kind),
        `${answer}, model ${model}`,
      ).toEqual([kind]);
      expect(llm.count('instruction_or_fact')).toBe(model ? 1 : 0);
    }
    // Words that settle it ask nothing.
    const repo = await IdbRepository.open({ factory: freshFactory() });
    const { memory, chat, llm } = wire(repo);
    await memory.load();
    await chat.send('remember that answers should always be short');
    await chat.send('remember that I live in Oslo');
    expect(llm.count('instruction_or_fact')).toBe(0);
    expect((await repo.listMemories()).map((m) => m.kind).sort()).toEqual(['instruction', 'user-trait']);
  });

  it('one click moves it between instruction and fact: the memory, the answer that made it and the next reply follow', async () => {
    const repo = await IdbRepository.open({ factory: freshFactory() });
    const { memory, chat, llm, commands } = wire(repo);
    await memory.load();
    await chat.send('remember that I prefer short answers');
    const [made] = await repo.listMemories();
    expect(made.kind).toBe('instruction');

    await commands.setKind(made.id, 'fact');
    let [now] = await repo.listMemories();
    expect(now).toMatchObject({ id: made.id, kind: 'user-trait', text: 'You prefer short answers.', edited: true });
    let card = (await repo.listTurns(chat.current!.id)).find((t) => t.command?.kind === 'remember')!;
    expect(card.text).toBe('Remembered: “You prefer short answers.”');
    expect(card.usedMemory?.memoryIds).toEqual([made.id]);
    await chat.send('Tell me about tea');
    expect(lastReplyPrompt(llm)).not.toContain('follow these instructions in every reply');
    expect(lastReplyPrompt(llm)).not.toContain('I prefer short answers.');

    await commands.setKind(made.id, 'instruction');
    [now] = await repo.listMemories();
    expect(now).toMatchObject({ kind: 'instruction', text: 'I prefer short answers.' });
    card = (await repo.listTurns(chat.current!.id)).find((t) => t.command?.kind === 'remember')!;
    expect(card.text).toBe('Remembered, and followed in every reply: “I prefer short answers.”');
    await chat.send('Tell me about coffee');
    expect(lastReplyPrompt(llm)).toContain('follow these instructions in every reply');
    expect(lastReplyPrompt(llm)).toContain('I prefer short answers.');

    // A memory the model made moves too, its own text kept.
    await repo.apply({
      memories: [
        {
          id: 'n',
          kind: 'note',
          text: 'Keep replies under five lines.',
          subject: 'user',
          time: T,
          sourceTurnIds: [],
          sessionId: 's',
          edited: false,
          createdAt: T,
        },
      ],
    });
    await memory.reload();
    await commands.setKind('n', 'instruction');
    expect((await repo.getMemory('n'))?.kind).toBe('instruction');
    // Already that kind: nothing changes.
    const before = await repo.getMemory('n');
    await commands.setKind('n', 'instruction');
    expect(await repo.getMemory('n')).toEqual(before);
  });
});
