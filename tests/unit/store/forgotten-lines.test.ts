// The store's part of forgetting, on IndexedDB (fake-indexeddb) and the in-memory store.
// A mark on a line rebuilds every passage holding it in the same transaction (its stale vectors
// deleted), whoever writes it; a job's passage is rebuilt too; a job cannot write a memory made
// only from forgotten lines; an undo brings the passage back; v6 finds passages by their turns.
import { describe, expect, it } from 'vitest';
import { openTealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { MIGRATIONS } from '../../../src/store/schema';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { ChangeSet, LineReads, Repository } from '../../../src/ports';
import type { Memory, Segment, Session, Turn } from '../../../src/memory/types';
import { buildSegments } from '../../../src/memory/ingest/segments';
import { createMemoriseJob } from '../../../src/memory/ingest/memorise';
import { exportBackup, importBackup, serializeBackup } from '../../../src/store/backup';
import { freshFactory } from './helpers';

const T = Date.UTC(2025, 11, 1);
const session: Session = { id: 's1', title: 'Plans', startedAt: T, lastActivityAt: T, status: 'memorised' };
const turns: Turn[] = [
  { id: 'a', sessionId: 's1', index: 0, role: 'user', text: 'My sister Ingrid is coming at Christmas', time: T, status: 'complete' },
  { id: 'b', sessionId: 's1', index: 1, role: 'assistant', text: 'Lovely!', time: T + 1, status: 'complete' },
  { id: 'c', sessionId: 's1', index: 2, role: 'user', text: 'I bake sourdough', time: T + 2, status: 'complete' },
];
const [passage] = buildSegments(turns, [{ first: 0, last: 2 }]);
const vector = { unitId: passage.id, modelId: 'e', vector: new Float32Array([1, 0]) };

const repos: Record<string, () => Promise<Repository & LineReads>> = {
  'in-memory': async () => new InMemoryRepository(),
  indexeddb: async () => IdbRepository.open({ factory: freshFactory() }),
};

for (const [name, open] of Object.entries(repos)) {
  describe(`forgotten lines in the store (${name})`, () => {
    async function seeded() {
      const repo = await open();
      await repo.apply({ sessions: [session], turns, segments: [passage], vectors: [vector] });
      return repo;
    }

    it('a mark rebuilds the passage holding the line and deletes its vector in the same change; the undo rebuilds it back', async () => {
      const repo = await seeded();
      expect((await repo.listSegmentsOfTurn('a')).map((s) => s.id)).toEqual([passage.id]);
      const applied = await repo.apply({ turnPatches: [{ id: 'a', forget: { at: T + 9, by: ['m1'] } }] });
      expect(applied.turns?.map((t) => t.id)).toEqual(['a']);
      expect(applied.turnPatches).toBeUndefined();
      expect(applied.deleteVectors).toEqual([[passage.id, 'e']]);
      const [rebuilt] = await repo.listSegments();
      expect(rebuilt.text).toBe('assistant: Lovely!\nuser: I bake sourdough');
      expect(rebuilt.indexText).not.toMatch(/Christmas/);
      expect(await repo.listVectorsOfUnit(passage.id)).toEqual([]);
      expect((await repo.getTurns(['a']))[0].forgotten).toEqual({ at: T + 9, by: ['m1'] });

      // A second forget of the same line; undoing the first keeps it forgotten.
      await repo.apply({ turnPatches: [{ id: 'a', forget: { at: T + 10, by: ['m2'] } }] });
      await repo.apply({ turnPatches: [{ id: 'a', unforget: ['m1'] }] });
      expect((await repo.listSegments())[0].text).not.toMatch(/Christmas/);
      await repo.apply({ turnPatches: [{ id: 'a', unforget: ['m2'] }] });
      expect((await repo.listSegments())[0]).toEqual(passage);
      expect((await repo.getTurns(['a']))[0]).not.toHaveProperty('forgotten');
    });

    it('a job writes neither a passage holding a forgotten line nor a memory made only from one', async () => {
      const repo = await seeded();
      await repo.apply({ turnPatches: [{ id: 'a', forget: { at: T + 9, by: ['m1'] } }] });
      const job = createMemoriseJob('s1', T + 50);
      await repo.apply({ jobs: [job] });
      const made = (id: string, sourceTurnIds: string[]): Memory => ({
        id,
        kind: 'event',
        text: id,
        time: T,
        sourceTurnIds,
        sessionId: 's1',
        edited: false,
        createdAt: T,
      });
      const applied = await repo.apply({
        memories: [made('from-forgotten', ['a']), made('mixed', ['a', 'c'])],
        segments: [passage],
        jobs: [{ ...job, updatedAt: job.updatedAt + 1 }],
        expectJob: { id: job.id, updatedAt: job.updatedAt },
      });
      expect(applied.dropped).toContain('memory from-forgotten: made from lines the user forgot');
      expect((await repo.listMemories()).map((m) => m.id)).toEqual(['mixed']);
      expect((await repo.listSegments())[0].text).toBe('assistant: Lovely!\nuser: I bake sourdough');
    });

    it('a turn written with its mark by another device (sync) rebuilds the passage too, and so does its undo', async () => {
      const repo = await seeded();
      const remote = (c: ChangeSet) => (repo as InMemoryRepository | IdbRepository).apply(c, { remote: true });
      await remote({ turns: [{ ...turns[2], forgotten: { at: T, by: ['m9'] } }] });
      expect((await repo.listSegments())[0].text).toBe('user: My sister Ingrid is coming at Christmas\nassistant: Lovely!');
      await remote({ turns: [turns[2]] });
      expect((await repo.listSegments())[0]).toEqual(passage);
    });

    it('a local write of a whole turn keeps the stored mark (a reply saved from an old copy neither undoes a forget nor redoes one)', async () => {
      const repo = await seeded();
      await repo.apply({ turnPatches: [{ id: 'b', forget: { at: T + 9, by: ['m1'] } }] });
      await repo.apply({ turns: [{ ...turns[1], text: 'Lovely!' }] });
      expect((await repo.getTurns(['b']))[0].forgotten).toEqual({ at: T + 9, by: ['m1'] });
      expect((await repo.listSegments())[0].text).not.toMatch(/Lovely/);
      const marked = (await repo.getTurns(['b']))[0];
      await repo.apply({ turnPatches: [{ id: 'b', unforget: ['m1'] }] });
      await repo.apply({ turns: [marked] });
      expect((await repo.getTurns(['b']))[0]).not.toHaveProperty('forgotten');
      expect((await repo.listSegments())[0]).toEqual(passage);
    });
  });
}

describe('forgotten lines in backups and the v6 migration', () => {
  it('a backup keeps the marks and the rebuilt passages; an import keeps them; a file whose passage still holds a forgotten line is rebuilt', async () => {
    const repo = await IdbRepository.open({ factory: freshFactory() });
    await repo.apply({ sessions: [session], turns, segments: [passage] });
    await repo.apply({ turnPatches: [{ id: 'a', forget: { at: T + 9, by: ['m1'] } }] });
    const file = await exportBackup(repo.db);
    expect(JSON.stringify(file.data.segments)).not.toMatch(/Christmas/);
    expect(file.data.turns.find((t) => t.id === 'a')?.forgotten).toEqual({ at: T + 9, by: ['m1'] });

    const other = await IdbRepository.open({ factory: freshFactory() });
    await importBackup(other.db, serializeBackup(file), { mode: 'replace' });
    expect((await other.getTurns(['a']))[0].forgotten).toEqual({ at: T + 9, by: ['m1'] });
    expect((await other.listSegments())[0].text).not.toMatch(/Christmas/);

    // A file that marks the line but still holds it in its passage.
    const stale = { ...file, data: { ...file.data, segments: [passage] as Segment[] } };
    const third = await IdbRepository.open({ factory: freshFactory() });
    await importBackup(third.db, serializeBackup(stale), { mode: 'replace' });
    expect((await third.listSegments())[0].text).toBe('assistant: Lovely!\nuser: I bake sourdough');
  });

  it('v6 finds the passages already stored by their turns', async () => {
    const factory = freshFactory();
    const v5 = await openTealeafDb({ factory, migrations: MIGRATIONS.slice(0, 5) });
    const tx = v5.transaction(['sessions', 'turns', 'segments'], 'readwrite');
    await tx.objectStore('sessions').put(session);
    for (const t of turns) await tx.objectStore('turns').put(t);
    await tx.objectStore('segments').put(passage);
    await tx.done;
    v5.close();
    const repo = new IdbRepository(await openTealeafDb({ factory }));
    expect((await repo.listSegmentsOfTurn('c')).map((s) => s.id)).toEqual([passage.id]);
    await repo.apply({ turnPatches: [{ id: 'c', forget: { at: T, by: ['m'] } }] });
    expect((await repo.listSegments())[0].text).not.toMatch(/sourdough/);
  });
});
