// What the app writes it can always read back. Each case makes its data through
// the app's own paths (a history import memorised by the job runner, edit-and-resend in the chat,
// replies from a model server), exports a backup and imports it into an empty store: on the old
// code each import was refused and nothing of the file could be restored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatService } from '../../../src/services/chat/chat';
import { plainPreparer, type TurnPreparer } from '../../../src/services/chat/reply-prompt';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService, sanitiseSettings } from '../../../src/services/settings';
import { importHistory } from '../../../src/services/history/import';
import { LocalServerModel } from '../../../src/models/local-server';
import { IdbRepository } from '../../../src/store/repository';
import { exportBackup, importBackup, serializeBackup } from '../../../src/store/backup';
import { MAX_MESSAGE, MAX_MODEL_ID, MAX_TEXT } from '../../../src/memory/limits';
import type { ChatMessage, GenerateOptions, LanguageModel, Repository } from '../../../src/ports';
import type { UsedMemory } from '../../../src/memory/types';
import { ScriptedModel } from '../memory/helpers';
import { dump, freshFactory } from '../store/helpers';
import { startFakeOpenAiServer } from '../../support/fake-openai-server.mjs';
import { until } from '../../support/until';

const open = () => IdbRepository.open({ factory: freshFactory() });
const DATA = ['sessions', 'turns', 'memories', 'edges', 'segments', 'vectors', 'settings'] as const;

/** Export from `repo`, import into an empty store, and compare every data store. */
async function roundTrip(repo: IdbRepository): Promise<string> {
  const text = serializeBackup(await exportBackup(repo.db, { includeVectors: true, now: () => 1 }));
  const target = await open();
  await importBackup(target.db, text, { mode: 'replace' });
  expect(await dump(target.db, DATA)).toBe(await dump(repo.db, DATA));
  target.close();
  return text;
}

async function jobsSettled(repo: Repository) {
  const ended = async () => {
    const jobs = await repo.listJobs();
    return jobs.length > 0 && jobs.every((j) => j.status === 'done' || j.status === 'failed');
  };
  await until('every job done or failed', ended);
  return repo.listJobs();
}

/** Every user message becomes an event; no topics, so the segmenter decides on its own. */
const summariser = () =>
  new ScriptedModel(({ kind, schemaTitle, messages }) => {
    if (kind === 'chat') return 'ok';
    if (schemaTitle === 'session_memories') {
      const text = messages.map((m) => m.content).join('\n');
      const first = /^(T\d+) \[user/m.exec(text)?.[1] ?? 'T0';
      return JSON.stringify({ events: [{ text: 'The user wrote a very long message.', about: 'user', turns: [first] }], topics: [] });
    }
    if (schemaTitle === 'relation_labels') return JSON.stringify({ labels: [] });
    return '{}';
  });

describe('a history with long messages, memorised', () => {
  it('two 600,000-character messages: every segment fits a record and the backup imports', async () => {
    const repo = await open();
    const llm = summariser();
    const settings = new SettingsService(repo);
    const memory = new MemoryService(
      repo,
      settings,
      () => llm,
      () => undefined,
    );
    const long = (word: string) => `${word} `.repeat(600_000 / (word.length + 1)).trim();
    const conversations = [
      {
        uuid: 'conv-long',
        name: 'Two long letters',
        created_at: '2024-03-01T10:00:00Z',
        updated_at: '2024-03-01T10:05:00Z',
        chat_messages: [
          { uuid: 'a', sender: 'human', text: long('dear'), created_at: '2024-03-01T10:00:00Z' },
          { uuid: 'b', sender: 'assistant', text: long('reply'), created_at: '2024-03-01T10:05:00Z' },
        ],
      },
    ];
    const file = new Blob([JSON.stringify(conversations)], { type: 'application/json' });
    const result = await importHistory(file, { repo, exclusive: (fn) => memory.exclusive(fn), now: () => Date.UTC(2025, 0, 1) });
    expect(result.imported).toBe(1);
    await memory.load();
    memory.kick();
    expect((await jobsSettled(repo)).map((j) => j.status)).toEqual(['done']);
    const segments = await repo.listSegments();
    expect(segments.length).toBeGreaterThan(0);
    // Together the passages still hold both messages whole.
    expect(segments.map((s) => s.text).join('\n')).toContain(long('reply'));
    for (const s of segments) {
      expect(s.text.length).toBeLessThanOrEqual(MAX_TEXT);
      expect(s.indexText.length).toBeLessThanOrEqual(MAX_TEXT);
    }
    await roundTrip(repo);
    // A safety net, not a budget: this is CPU work (about 40 s here with other work running; past
    // 60 s on a machine busier still, which then starved the next test too).
  }, 600_000);
});

describe('edit and resend, many times', () => {
  /** Every reply draws on a memory, as a remembering reply does (the deepest part of a turn). */
  const remembering: TurnPreparer = {
    async prepare(input) {
      const usedMemory: UsedMemory = {
        memoryIds: ['m1'],
        segmentIds: [],
        timelines: [{ memoryIds: ['m1'], relations: [], through: 'm1' }],
        refined: ['a note'],
        scores: [{ unitId: 'm1', unitKind: 'memory', fused: 1 }],
      };
      return { ...(await plainPreparer.prepare(input)), usedMemory };
    },
  };

  class Echo implements LanguageModel {
    readonly modelId = 'echo';
    async chat(messages: ChatMessage[], o: GenerateOptions = {}): Promise<string> {
      const text = `re: ${messages.at(-1)?.content ?? ''}`;
      o.onToken?.(text);
      return text;
    }
    async json(): Promise<string> {
      return '{}';
    }
  }

  it('16 messages, then Edit › Send on each from the last back to the first: the backup imports, every version kept', async () => {
    const repo = await open();
    await repo.apply({
      memories: [{ id: 'm1', kind: 'event', text: 'x', time: 1, sourceTurnIds: [], sessionId: 'old', edited: false, createdAt: 1 }],
    });
    let t = Date.UTC(2024, 0, 1);
    const chat = new ChatService({
      repo,
      preparer: remembering,
      getModel: () => new Echo(),
      idleGapMs: () => 3_600_000,
      now: () => (t += 1000),
      saveEveryMs: 0,
    });
    for (let i = 1; i <= 16; i++) await chat.send(`message ${i}`);
    for (let i = 16; i >= 1; i--) {
      const turn = chat.turns.find((x) => x.role === 'user' && x.text === `message ${i}`)!;
      await chat.editAndResend(turn.id, `message ${i}, edited`);
    }
    const [session] = await repo.listSessions();
    const stored = await repo.listTurns(session.id);
    expect(stored.map((x) => x.text)).toEqual(['message 1, edited', 're: message 1, edited']);
    expect(stored[0].drewOn).toEqual(['m1']);
    expect(stored[0].versions).toHaveLength(1);
    await roundTrip(repo);
    // Every earlier version is still there to flip back to, all the way down.
    for (let i = 1; i <= 16; i++) {
      const turn = chat.turns.find((x) => x.role === 'user' && x.text === `message ${i}, edited`)!;
      await chat.showVersion(turn.id, 0);
      const originals = Array.from({ length: i }, (_, k) => [`message ${k + 1}`, `re: message ${k + 1}`]).flat();
      const next = i < 16 ? [`message ${i + 1}, edited`, `re: message ${i + 1}, edited`] : [];
      expect(chat.turns.map((x) => x.text)).toEqual([...originals, ...next]);
    }
    // The replies put away and brought back keep what they drew on; every turn finds them.
    const back = await repo.listTurns(session.id);
    expect(back).toHaveLength(32);
    expect(back.every((x) => x.drewOn?.includes('m1'))).toBe(true);
    await roundTrip(repo);
  }, 600_000);
});

describe('a model server whose model id is over 1,000,000 characters', () => {
  type Fake = Awaited<ReturnType<typeof startFakeOpenAiServer>>;
  let fake: Fake;
  const huge = `model-${'x'.repeat(1_000_001)}`;
  beforeAll(async () => {
    fake = await startFakeOpenAiServer({ models: ['tiny-chat', huge] });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('is not offered, cannot be chosen, and is not read from settings', async () => {
    const listed = await new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat' }).listModels();
    expect(listed).toEqual(['tiny-chat']);
    expect(() => new LocalServerModel({ baseUrl: fake.url, model: huge })).toThrow(/model name is .* characters long/);
    expect(sanitiseSettings({ serverModel: huge, chatModelId: huge }).serverModel).toBeUndefined();
    expect(sanitiseSettings({ serverModel: huge, chatModelId: huge }).chatModelId).toBeUndefined();
  });

  it('an engine that reports such an id anyway: the replies keep a bounded one, and the backup imports', async () => {
    const repo = await open();
    const model: LanguageModel = {
      modelId: huge,
      async chat(_m, o: GenerateOptions = {}) {
        o.onToken?.('hello');
        return 'hello';
      },
      async json() {
        return '{}';
      },
    };
    const chat = new ChatService({ repo, preparer: plainPreparer, getModel: () => model, idleGapMs: () => 3_600_000, saveEveryMs: 0 });
    await chat.send('hi');
    await chat.regenerate();
    const [session] = await repo.listSessions();
    const turns = await repo.listTurns(session.id);
    await roundTrip(repo);
    expect(turns[1].modelId!.length).toBeLessThanOrEqual(MAX_MODEL_ID);
    expect(turns[1].versions?.[0]?.modelId?.length).toBeLessThanOrEqual(MAX_MODEL_ID);
  });
});

describe('a message longer than one message may be', () => {
  it('is refused up front with an error, and nothing is stored', async () => {
    const repo = await open();
    const errors: string[] = [];
    const chat = new ChatService({
      repo,
      preparer: plainPreparer,
      getModel: () => undefined,
      idleGapMs: () => 3_600_000,
      saveEveryMs: 0,
    });
    chat.on('error', ({ message }) => errors.push(message));
    await chat.send('x'.repeat(MAX_MESSAGE + 1));
    expect(await repo.listSessions()).toEqual([]);
    expect(errors).toEqual([expect.stringMatching(/990,001 characters.*at most 990,000.*Split it/)]);
  });
});
