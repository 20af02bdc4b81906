// Importing the same export again never overwrites what the user changed.
// Exports are cumulative, so a second import of conversations.json is normal. A chat the user
// deleted stays deleted (a tombstone remembers it, and the result says so); a memory the user
// corrected, ended or deleted stays as the user left it, even when a memorise job makes the same
// memory ids again.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { historyResultMessage, importHistory, type HistoryImportDeps } from '../../../src/services/history/import';
import { IdbRepository } from '../../../src/store/repository';
import { exportBackup, importBackup, serializeBackup } from '../../../src/store/backup';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { until } from '../../support/until';
import { ScriptedModel } from '../memory/helpers';
import { dump, freshFactory } from '../store/helpers';
import type { LineReads, Repository } from '../../../src/ports';
import type { Memory } from '../../../src/memory/types';

const CLAUDE = readFileSync(resolve(import.meta.dirname, '../../fixtures/claude-conversations.json'), 'utf8');
const NOW = Date.UTC(2025, 4, 1);
const file = () => new Blob([CLAUDE], { type: 'application/json' });

const stores = {
  indexeddb: async (): Promise<Repository & LineReads> => IdbRepository.open({ factory: freshFactory() }),
  'in-memory': async (): Promise<Repository & LineReads> => new InMemoryRepository(),
};

/** Every user line becomes an event about the user. */
const summariser = () =>
  new ScriptedModel(({ kind, schemaTitle, messages }) => {
    if (kind === 'chat') return 'ok';
    if (schemaTitle === 'session_memories') {
      const text = messages.map((m) => m.content).join('\n');
      const lines = [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)];
      const events = lines.map((m) => ({ text: `The user said: ${m[2]}`, about: 'user', turns: [m[1]] }));
      return JSON.stringify({ events, userTraits: [], assistantTraits: [], notes: [], topics: [] });
    }
    if (schemaTitle === 'relation_labels') return JSON.stringify({ labels: [] });
    return '{}';
  });

async function settled(repo: Repository & LineReads) {
  const ended = async () => (await repo.listJobs()).every((j) => j.status === 'done' || j.status === 'failed');
  await until('every job done or failed', ended);
  return repo.listJobs();
}

async function setup(open: () => Promise<Repository & LineReads>) {
  const repo = await open();
  const llm = summariser();
  const settings = new SettingsService(repo);
  const memory = new MemoryService(
    repo,
    settings,
    () => llm,
    () => undefined,
  );
  const deps: HistoryImportDeps = { repo, exclusive: (fn) => memory.exclusive(fn), now: () => NOW };
  const first = await importHistory(file(), deps);
  expect(first.imported).toBe(2);
  await memory.load();
  memory.kick();
  await settled(repo);
  const cello = (await repo.listSessions()).find((s) => s.title === 'Learning the cello')!;
  const ofCello = (await repo.listMemories()).filter((m) => m.sessionId === cello.id).sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(ofCello.length).toBeGreaterThanOrEqual(2);
  return { repo, memory, deps, cello, ofCello };
}

const byId = async (repo: Repository & LineReads, id: string): Promise<Memory | undefined> => repo.getMemory(id);

describe.each(Object.entries(stores))('importing the same export again (%s store)', (_name, open) => {
  it('a deleted chat is not brought back, and a corrected or deleted memory stays as the user left it', async () => {
    const { repo, memory, deps, cello, ofCello } = await setup(open);
    const [edited, removed] = ofCello;
    await memory.editMemory(edited.id, 'My cello teacher is Mrs Okafor-Byrne.');
    await memory.deleteMemory(removed.id);
    await memory.deleteSession(cello.id, { deleteMemories: false });
    const memoriesBefore = (await repo.listMemories()).map((m) => m.id).sort();

    const again = await importHistory(file(), deps);
    expect(again).toMatchObject({ imported: 0, alreadyThere: 1, deleted: 1 });
    expect(historyResultMessage(again, { creationOff: false, noModel: false })).toBe(
      'Nothing new to import from Claude (1 chat was already there; 1 chat you deleted was not brought back; 1 chat without messages was left out).',
    );
    memory.kick();
    await settled(repo);
    expect(await repo.getSession(cello.id)).toBeUndefined();
    expect(await repo.listTurns(cello.id)).toEqual([]);
    expect((await repo.listMemories()).map((m) => m.id).sort()).toEqual(memoriesBefore);
    expect(await byId(repo, edited.id)).toMatchObject({ text: 'My cello teacher is Mrs Okafor-Byrne.', edited: true });
    expect(await byId(repo, removed.id)).toBeUndefined();
  });

  it('a chat brought back anyway (deleted before tombstones existed) is memorised again without undoing a correction', async () => {
    const { repo, memory, deps, cello, ofCello } = await setup(open);
    const [edited, removed, ended] = [ofCello[0], ofCello[1], ofCello[2] ?? ofCello[0]];
    await memory.editMemory(edited.id, 'My cello teacher is Mrs Okafor-Byrne.');
    await memory.deleteMemory(removed.id);
    // "No longer true", as the explorer's button writes it.
    if (ended !== edited) await memory.applyLive({ memoryPatches: [{ id: ended.id, endedAt: NOW }] });
    await memory.deleteSession(cello.id, { deleteMemories: false });
    // As an older version deleted chats: no tombstone for the chat.
    await repo.apply({ deleteTombstones: [['session', cello.id]] });

    const again = await importHistory(file(), deps);
    expect(again.imported).toBe(1);
    memory.kick();
    await settled(repo);
    // The chat was memorised again, under the same memory ids, and nothing the user did was undone.
    expect((await repo.getSession(cello.id))?.status).toBe('memorised');
    expect(await byId(repo, edited.id)).toMatchObject({ text: 'My cello teacher is Mrs Okafor-Byrne.', edited: true });
    expect(await byId(repo, removed.id)).toBeUndefined();
    if (ended !== edited) expect((await byId(repo, ended.id))?.endedAt).toBe(NOW);
  });
});

describe('the tombstones travel with a backup', () => {
  it('export and import (replace and merge) keep them; a restored backup still keeps a deleted chat out', async () => {
    const { repo, memory, cello } = await setup(stores.indexeddb);
    await memory.deleteSession(cello.id, { deleteMemories: false });
    const idb = repo as IdbRepository;
    const text = serializeBackup(await exportBackup(idb.db, { now: () => 1 }));
    expect(JSON.parse(text).data.tombstones).toEqual([{ kind: 'session', id: cello.id, deletedAt: expect.any(Number) }]);
    const target = await IdbRepository.open({ factory: freshFactory() });
    await importBackup(target.db, text, { mode: 'replace' });
    expect(await dump(target.db, ['tombstones'])).toBe(await dump(idb.db, ['tombstones']));
    const merged = await IdbRepository.open({ factory: freshFactory() });
    const summary = await importBackup(merged.db, text, { mode: 'merge' });
    expect(summary.added.tombstones).toBe(1);
    expect((await importBackup(merged.db, text, { mode: 'merge' })).skipped.tombstones).toBe(1);

    const restored = new MemoryService(
      target,
      new SettingsService(target),
      () => undefined,
      () => undefined,
    );
    const result = await importHistory(file(), { repo: target, exclusive: (fn) => restored.exclusive(fn), now: () => NOW });
    expect(result).toMatchObject({ imported: 0, deleted: 1, alreadyThere: 1 });
  });
});

describe.each(Object.entries(stores))('the integrity rule: a job never undoes what the user did (%s store)', (_name, open) => {
  const mem = (id: string, extra: Partial<Memory> = {}): Memory => ({
    id,
    kind: 'event',
    text: `model text ${id}`,
    time: 1,
    sourceTurnIds: [],
    sessionId: 's',
    edited: false,
    createdAt: 1,
    ...extra,
  });
  const job = {
    id: 'j',
    kind: 'memorise' as const,
    sessionId: 's',
    step: 'summarise',
    status: 'running' as const,
    attempts: 0,
    createdAt: 1,
    updatedAt: 1,
  };

  it('a job put over an edited or ended memory, or one the user deleted, is dropped and named; the user may put them', async () => {
    const repo = await open();
    await repo.apply({
      sessions: [{ id: 's', title: 's', startedAt: 1, lastActivityAt: 1, status: 'ended' }],
      memories: [mem('edited', { text: 'corrected', edited: true }), mem('ended', { endedAt: 5 }), mem('plain')],
      tombstones: [{ kind: 'memory', id: 'deleted', deletedAt: 3 }],
      jobs: [job],
    });
    const applied = await repo.apply({
      memories: [mem('edited'), mem('ended'), mem('plain'), mem('deleted'), mem('new')],
      edges: [{ id: 'e', from: 'deleted', to: 'new', relation: 'Cause', origin: 'model', createdAt: 2 }],
      jobs: [{ ...job, updatedAt: 2 }],
      expectJob: { id: 'j', updatedAt: 1 },
    });
    expect(applied.dropped).toEqual([
      'memory edited: the user changed it, kept as the user left it',
      'memory ended: the user changed it, kept as the user left it',
      'memory deleted: the user deleted it',
      'edge e: an end is gone',
    ]);
    expect(await repo.getMemory('edited')).toMatchObject({ text: 'corrected', edited: true });
    expect((await repo.getMemory('ended'))?.endedAt).toBe(5);
    expect(await repo.getMemory('deleted')).toBeUndefined();
    expect((await repo.getMemory('plain'))?.text).toBe('model text plain');
    expect((await repo.getMemory('new'))?.text).toBe('model text new');

    // Not a job: the user's own undo puts the deleted memory back and forgets the tombstone.
    await repo.apply({ memories: [mem('deleted', { text: 'back' })], deleteTombstones: [['memory', 'deleted']] });
    expect((await repo.getMemory('deleted'))?.text).toBe('back');
    expect(await repo.listTombstones('memory')).toEqual([]);
  });

  it('deleting a memory in the explorer remembers it, and Undo forgets it', async () => {
    const repo = await open();
    await repo.apply({ sessions: [{ id: 's', title: 's', startedAt: 1, lastActivityAt: 1, status: 'ended' }], memories: [mem('m')] });
    const memory = new MemoryService(
      repo,
      new SettingsService(repo),
      () => undefined,
      () => undefined,
    );
    await memory.load();
    const undo = await memory.deleteMemory('m');
    expect((await repo.listTombstones('memory')).map((t) => t.id)).toEqual(['m']);
    await memory.applyLive(undo!);
    expect(await repo.getMemory('m')).toBeDefined();
    expect(await repo.listTombstones('memory')).toEqual([]);
  });
});
