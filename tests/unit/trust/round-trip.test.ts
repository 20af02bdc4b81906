// What the app stores it can export and import back; a value that would
// break the app after an import is refused with a message that names it.
import { describe, expect, it } from 'vitest';
import { ChatService } from '../../../src/services/chat/chat';
import { plainPreparer } from '../../../src/services/chat/reply-prompt';
import { importLocomo, type LocomoImportDeps } from '../../../src/services/memory/locomo-import';
import { IdbRepository } from '../../../src/store/repository';
import { exportBackup, importBackup, serializeBackup, BackupError } from '../../../src/store/backup';
import { MAX_MESSAGE, MAX_TEXT, clampText } from '../../../src/memory/limits';
import { promptDate } from '../../../src/memory/text';
import { formatDate, formatDateTime } from '../../../src/app/explorer/format';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { MemoryGraph } from '../../../src/memory/graph';
import { withDefaults } from '../../../src/memory/settings';
import type { ChatMessage, GenerateOptions, LanguageModel } from '../../../src/ports';
import type { Id, Memory } from '../../../src/memory/types';
import { dump, freshFactory } from '../store/helpers';

const open = () => IdbRepository.open({ factory: freshFactory() });

class EchoModel implements LanguageModel {
  readonly modelId = 'echo';
  async chat(messages: ChatMessage[], o: GenerateOptions = {}): Promise<string> {
    const text = `You said ${messages.at(-1)?.content.length ?? 0} characters.`;
    o.onToken?.(text);
    return text;
  }
  async json(): Promise<string> {
    return '{}';
  }
}

/** What a backup holds (jobs are machine state; vector packs are derived). */
const DATA = ['sessions', 'turns', 'memories', 'edges', 'segments', 'vectors', 'settings'] as const;

/** Export from `repo`, import into a fresh store (replace), and compare every data store. */
async function roundTrip(repo: IdbRepository) {
  const text = serializeBackup(await exportBackup(repo.db, { includeVectors: true, now: () => 1 }));
  const target = await open();
  await importBackup(target.db, text, { mode: 'replace' });
  expect(await dump(target.db, DATA)).toBe(await dump(repo.db, DATA));
  return target;
}

describe('round trip of what the app writes', () => {
  it('a 150,000-character chat message is stored whole and the backup imports', async () => {
    const repo = await open();
    const chat = new ChatService({
      repo,
      preparer: plainPreparer,
      getModel: () => new EchoModel(),
      idleGapMs: () => 3_600_000,
      saveEveryMs: 0,
    });
    const long = 'The whole story, again and again. '.repeat(4500).trim();
    expect(long.length).toBeGreaterThan(150_000);
    await chat.send(long);
    const [session] = await repo.listSessions();
    const [user] = await repo.listTurns(session.id);
    expect(user.text).toBe(long);
    await roundTrip(repo);
  });

  it('a reply longer than a message may be (a model that does not stop) is cut with a note, stored, and still round-trips', async () => {
    const repo = await open();
    const endless: LanguageModel = {
      modelId: 'endless',
      async chat(_m: ChatMessage[], o: GenerateOptions = {}) {
        const text = 'and on '.repeat(Math.ceil((MAX_TEXT + 10) / 7));
        for (let i = 0; i < text.length; i += 100_000) o.onToken?.(text.slice(i, i + 100_000));
        return text;
      },
      async json() {
        return '{}';
      },
    };
    const chat = new ChatService({ repo, preparer: plainPreparer, getModel: () => endless, idleGapMs: () => 3_600_000, saveEveryMs: 0 });
    await chat.send('Tell me a story');
    const [session] = await repo.listSessions();
    const [, reply] = await repo.listTurns(session.id);
    expect(reply.text.length).toBe(MAX_MESSAGE);
    expect(reply.text).toMatch(/Cut here: Tealeaf keeps at most 990,000 characters of one text\.\]$/);
    await roundTrip(repo);
  });

  it('a LoCoMo turn whose photo caption takes it past 100,000 characters imports, exports and imports again', async () => {
    const repo = await open();
    // Under the old backup limit on its own; the caption appended at import took it over.
    const text = 'word '.repeat(19_998).trim();
    const file = {
      speaker_a: 'Ann',
      speaker_b: 'Bo',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        { speaker: 'Ann', dia_id: 'D1:1', text, img_url: ['x'], blip_caption: 'a photo of a dog on a beach' },
        { speaker: 'Bo', dia_id: 'D1:2', text: 'Lovely!' },
      ],
    };
    const deps: LocomoImportDeps = {
      repo,
      index: createHybridIndex(),
      graph: new MemoryGraph(),
      memories: new Map<Id, Memory>(),
      settings: withDefaults({}),
      now: () => Date.UTC(2024, 5, 1),
    };
    await importLocomo({ conversation: file }, deps);
    const [session] = await repo.listSessions();
    const [first] = await repo.listTurns(session.id);
    expect(first.text.length).toBeGreaterThan(100_000);
    expect(first.text.length).toBeLessThanOrEqual(MAX_TEXT);
    await roundTrip(repo);
  });

  it('clampText keeps short text and never splits a surrogate pair', () => {
    expect(clampText('hello')).toBe('hello');
    const emoji = '😀'.repeat(MAX_TEXT);
    const cut = clampText(emoji);
    expect(cut.length).toBeLessThanOrEqual(MAX_MESSAGE);
    expect(clampText(emoji, MAX_TEXT).length).toBeLessThanOrEqual(MAX_TEXT);
    expect(cut.replace(/\n\n\[Cut here[^\]]*\]$/, '')).toMatch(/^(?:😀)+$/u);
  });
});

describe('values that would break the app after an import are refused, naming the field', () => {
  const backup = (time: number) => ({
    format: 'tealeaf-backup',
    version: 1,
    exportedAt: 1,
    data: {
      sessions: [{ id: 's', title: 't', startedAt: 1, lastActivityAt: 1, status: 'ended' }],
      turns: [],
      edges: [],
      segments: [],
      settings: [],
      memories: [{ id: 'm', kind: 'event', text: 'x', time, sourceTurnIds: [], sessionId: 's', edited: false, createdAt: 1 }],
    },
  });

  it('a memory time outside the Date range (1e16)', async () => {
    const repo = await open();
    const before = await dump(repo.db);
    const err = await importBackup(repo.db, JSON.stringify(backup(1e16)), { mode: 'merge' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BackupError);
    expect((err as Error).message).toContain('memories[0].time');
    expect(await dump(repo.db)).toBe(before);
    // The extremes JavaScript can still show import fine.
    await importBackup(repo.db, JSON.stringify(backup(8.64e15)), { mode: 'merge' });
    expect((await repo.getMemory('m'))?.time).toBe(8.64e15);
  });

  it('formatting a time never throws, even one from before this check existed', () => {
    for (const t of [1e16, -1e16, Number.NaN, Infinity]) {
      expect(promptDate(t)).toBe('unknown date');
      expect(formatDate(t)).toBe('unknown date');
      expect(formatDateTime(t)).toBe('unknown date');
    }
    expect(promptDate(Date.UTC(2024, 0, 2))).toBe('2024-01-02');
  });
});
