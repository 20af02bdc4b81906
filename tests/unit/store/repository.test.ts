import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { datasetArb, dump, freshFactory } from './helpers';
import { IdbRepository } from '../../../src/store/repository';
import { isStorageFullError, StorageFullError, STORAGE_FULL_MESSAGE } from '../../../src/store/errors';
import type { ChangeSet } from '../../../src/ports';
import type { Edge, Memory, Session, Turn } from '../../../src/memory/types';

const open = () => IdbRepository.open({ factory: freshFactory() });

const session = (id: string, startedAt: number): Session => ({
  id,
  title: id,
  startedAt,
  lastActivityAt: startedAt,
  status: 'open',
});
const turn = (id: string, sessionId: string, index: number, text = id): Turn => ({
  id,
  sessionId,
  index,
  role: index % 2 === 0 ? 'user' : 'assistant',
  text,
  time: 1000 + index,
  status: 'complete',
});
const memory = (id: string, time: number, extra: Partial<Memory> = {}): Memory => ({
  id,
  kind: 'event',
  text: `memory ${id}`,
  time,
  sourceTurnIds: [],
  sessionId: 's1',
  edited: false,
  createdAt: time,
  ...extra,
});
const edge = (id: string, from: string, to: string): Edge => ({
  id,
  from,
  to,
  relation: 'Cause',
  origin: 'model',
  createdAt: 1,
});

/** A seeded repository for the atomicity tests. */
async function seeded(): Promise<IdbRepository> {
  const repo = await open();
  await repo.apply({
    sessions: [session('s1', 1), session('s2', 2)],
    turns: [turn('t0', 's1', 0), turn('t1', 's1', 1)],
    memories: [memory('m1', 1), memory('m2', 2)],
    edges: [edge('e1', 'm1', 'm2')],
    vectors: [{ unitId: 'm1', modelId: 'e', vector: new Float32Array([1, 2, 3]) }],
  });
  await repo.putSetting('model', { id: 'llama' });
  return repo;
}

describe('IdbRepository reads and writes', () => {
  it('returns what was written; vectors come back as Float32Array with the same bytes', async () => {
    const repo = await open();
    const vector = new Float32Array([0.1, -0, NaN, 3.4e38, -Infinity]);
    await repo.apply({ sessions: [session('s1', 5)], memories: [memory('m1', 1)], vectors: [{ unitId: 'm1', modelId: 'minilm', vector }] });
    expect(await repo.getSession('s1')).toEqual(session('s1', 5));
    expect(await repo.getSession('nope')).toBeUndefined();
    const [stored] = await repo.listVectors('minilm');
    expect(stored.vector).toBeInstanceOf(Float32Array);
    expect(Buffer.from(stored.vector.buffer).equals(Buffer.from(vector.buffer))).toBe(true);
    expect(await repo.listVectors('other')).toEqual([]);
  });

  it('lists turns by numeric index, only of that session', async () => {
    const repo = await open();
    await repo.apply({
      sessions: [session('s1', 1), session('s10', 2)],
      turns: [turn('c', 's1', 10), turn('a', 's1', 2), turn('x', 's10', 0), turn('b', 's1', 3)],
    });
    expect((await repo.listTurns('s1')).map((t) => t.id)).toEqual(['a', 'b', 'c']);
    expect((await repo.listTurns('s10')).map((t) => t.id)).toEqual(['x']);
    expect((await repo.getTurns(['c', 'missing', 'a'])).map((t) => t.id)).toEqual(['c', 'a']);
  });

  it('lists sessions oldest first and newest first', async () => {
    const repo = await open();
    await repo.apply({ sessions: [session('b', 20), session('a', 10), session('c', 30)] });
    expect((await repo.listSessions()).map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect((await repo.listSessionsNewestFirst()).map((s) => s.id)).toEqual(['c', 'b', 'a']);
    expect((await repo.listSessionsNewestFirst(2)).map((s) => s.id)).toEqual(['c', 'b']);
    expect((await repo.listSessionsByStatus('open')).length).toBe(3);
  });

  it('queries memories by session and edges touching a memory', async () => {
    const repo = await open();
    await repo.apply({
      memories: [memory('m2', 2, { sessionId: 's2' }), memory('m1', 1), memory('m3', 3)],
      edges: [edge('e1', 'm1', 'm2'), edge('e2', 'm2', 'm3'), edge('e3', 'm1', 'm3'), edge('loop', 'm2', 'm2')],
    });
    // The writer keeps no link from a memory to itself (limits.ts); one stored before still counts.
    expect(await repo.db.get('edges', 'loop')).toBeUndefined();
    await repo.db.put('edges', edge('loop', 'm2', 'm2'));
    expect((await repo.listMemories()).map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
    expect((await repo.listMemoriesBySession('s1')).map((m) => m.id).sort()).toEqual(['m1', 'm3']);
    expect((await repo.listEdgesTouching('m2')).map((e) => e.id).sort()).toEqual(['e1', 'e2', 'loop']);
    expect((await repo.listEdgesTouching('m9')).length).toBe(0);
  });

  it('runs deletes before puts, so a change can replace a record', async () => {
    const repo = await seeded();
    await repo.apply({ deleteMemories: ['m1'], memories: [memory('m1', 1, { text: 'new' })] });
    expect((await repo.getMemory('m1'))?.text).toBe('new');
  });

  it('settings, jobs, countAll and wipeAll', async () => {
    const repo = await seeded();
    expect(await repo.getSetting<{ id: string }>('model')).toEqual({ id: 'llama' });
    expect(await repo.getSetting('missing')).toBeUndefined();
    await repo.apply({
      jobs: [
        { id: 'j1', kind: 'memorise', sessionId: 's1', step: 'summarise', status: 'pending', attempts: 0, createdAt: 1, updatedAt: 1 },
      ],
      tombstones: [{ kind: 'session', id: 'gone', deletedAt: 5 }],
    });
    expect((await repo.listJobsByStatus('pending')).map((j) => j.id)).toEqual(['j1']);
    expect(await repo.listTombstones('session')).toEqual([{ kind: 'session', id: 'gone', deletedAt: 5 }]);
    expect(await repo.listTombstones('memory')).toEqual([]);
    const before = await repo.countAll();
    expect(before).toEqual({
      sessions: 2,
      turns: 2,
      memories: 2,
      edges: 1,
      segments: 0,
      vectors: 1,
      jobs: 1,
      settings: 1,
      vectorPacks: 0,
      tombstones: 1,
    });
    // The wipe says what it deleted (the words after "Delete everything" come from it).
    expect(await repo.wipeAll()).toEqual(before);
    expect(await repo.wipeAll()).toEqual(Object.fromEntries(Object.keys(before).map((k) => [k, 0])));
    expect(Object.values(await repo.countAll()).every((n) => n === 0)).toBe(true);
  });
});

describe('apply is atomic', () => {
  const failing: Array<[string, ChangeSet, RegExp]> = [
    [
      'a record without its key (synchronous DataError)',
      { deleteEdges: ['e1'], memories: [memory('m3', 3)], turns: [{ ...turn('t9', 's1', 9), id: undefined as unknown as string }] },
      /DataError|key/i,
    ],
    [
      'a second turn at a taken position (ConstraintError at the request)',
      { deleteMemories: ['m2'], sessions: [session('s3', 3)], turns: [turn('t2', 's1', 2), turn('dup', 's1', 0)] },
      /Constraint/i,
    ],
    [
      'a value that cannot be cloned (DataCloneError)',
      { deleteSessions: ['s2'], memories: [{ ...memory('m4', 4), context: (() => 1) as unknown as string }] },
      /clone/i,
    ],
  ];
  for (const [name, change, error] of failing) {
    it(`leaves the store byte-identical on ${name}`, async () => {
      const repo = await seeded();
      const before = await dump(repo.db);
      const err = await repo.apply(change).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(`${(err as Error).name} ${(err as Error).message}`).toMatch(error);
      expect(await dump(repo.db)).toBe(before);
      // The connection still works afterwards.
      await repo.apply({ sessions: [session('ok', 9)] });
      expect(await repo.getSession('ok')).toBeDefined();
    });
  }

  it('property: a change with one bad record anywhere changes nothing', async () => {
    const repo = await open();
    await fc.assert(
      fc.asyncProperty(datasetArb('p', 4), fc.nat(), fc.nat(), async (data, where, dropAt) => {
        await repo.wipeAll();
        await repo.apply({ sessions: data.sessions, memories: data.memories.slice(0, 2) });
        const before = await dump(repo.db);
        const change: ChangeSet = {
          turns: data.turns,
          memories: data.memories,
          edges: data.edges,
          segments: data.segments,
          vectors: data.vectors,
          deleteSessions: data.sessions.slice(0, dropAt % 3).map((s) => s.id),
        };
        // Insert a keyless memory at a random position of the puts.
        const bad = { ...memory('bad', 1), id: undefined as unknown as string };
        const list = [...(change.memories ?? [])];
        list.splice(where % (list.length + 1), 0, bad);
        change.memories = list;
        await expect(repo.apply(change)).rejects.toThrow();
        expect(await dump(repo.db)).toBe(before);
      }),
      { numRuns: 100 },
    );
  });
});

describe('full disk', () => {
  const proto = IDBObjectStore.prototype;
  const originalPut = proto.put;
  afterEach(() => {
    proto.put = originalPut;
  });

  const isMarked = (value: unknown) => JSON.stringify(value).includes('FILL-DISK');

  it('a put throwing QuotaExceededError becomes StorageFullError and nothing is half-written', async () => {
    const repo = await seeded();
    const before = await dump(repo.db);
    proto.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      if (isMarked(value)) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return originalPut.call(this, value, key);
    };
    const err = await repo
      .apply({ deleteEdges: ['e1'], sessions: [session('s9', 9)], memories: [memory('m9', 9), memory('big', 10, { text: 'FILL-DISK' })] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageFullError);
    expect(isStorageFullError(err)).toBe(true);
    expect((err as Error).message).toBe(STORAGE_FULL_MESSAGE);
    expect((err as Error).message).toMatch(/model caches in Settings/);
    expect((err as Error).message).toMatch(/export a backup/);
    expect(((err as Error).cause as DOMException).name).toBe('QuotaExceededError');
    expect(await dump(repo.db)).toBe(before);
  });

  it('a transaction aborted at commit with QuotaExceededError (as Chromium does) becomes StorageFullError', async () => {
    const repo = await seeded();
    const before = await dump(repo.db);
    proto.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      const request = originalPut.call(this, value, key);
      if (isMarked(value)) {
        const tx = this.transaction as IDBTransaction & { _abort(name: string): void };
        // The write itself succeeds; the browser then aborts the whole transaction.
        request.addEventListener('success', () => tx._abort('QuotaExceededError'));
      }
      return request;
    };
    const err = await repo
      .apply({ sessions: [session('s9', 9)], memories: [memory('big', 10, { text: 'FILL-DISK' }), memory('m9', 9)] })
      .catch((e: unknown) => e);
    expect(isStorageFullError(err)).toBe(true);
    expect(await dump(repo.db)).toBe(before);
    const settingErr = await repo.putSetting('x', { text: 'FILL-DISK' }).catch((e: unknown) => e);
    expect(settingErr).toBeInstanceOf(Error);
  });

  it('tells onStorage when writes start being refused for a full disk and when one lands again', async () => {
    const repo = await seeded();
    const heard: boolean[] = [];
    repo.onStorage((full) => heard.push(full));
    let full = true;
    proto.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      if (full) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return originalPut.call(this, value, key);
    };
    await repo.apply({ sessions: [session('s9', 9)] }).catch(() => undefined);
    await repo.putSetting('x', 1).catch(() => undefined);
    expect(heard).toEqual([true]); // said once, not at every refused write
    full = false;
    await repo.apply({ sessions: [session('s9', 9)] });
    await repo.apply({ sessions: [session('s10', 10)] });
    expect(heard).toEqual([true, false]);
    // Other failures say nothing about the disk.
    await repo
      .apply({ turns: [turn('t-bad', 'nowhere', 0)], sessions: [{ ...session('s11', 11), id: 42 as unknown as string }] })
      .catch(() => undefined);
    expect(heard).toEqual([true, false]);
  });

  it("recognises quota errors wrapped in causes and under Firefox's name", async () => {
    const { isQuotaError, toStoreError } = await import('../../../src/store/errors');
    expect(isQuotaError(new Error('wrapped', { cause: new DOMException('q', 'QuotaExceededError') }))).toBe(true);
    expect(isQuotaError({ name: 'NS_ERROR_DOM_QUOTA_REACHED' })).toBe(true);
    expect(isQuotaError({ target: { error: { name: 'QuotaExceededError' } } })).toBe(true);
    expect(isQuotaError(new DOMException('x', 'AbortError'))).toBe(false);
    expect(isQuotaError(undefined)).toBe(false);
    const other = new Error('other');
    expect(toStoreError(other)).toBe(other);
    expect(toStoreError(new DOMException('x', 'AbortError'), new DOMException('q', 'QuotaExceededError'))).toBeInstanceOf(StorageFullError);
  });
});

describe('deleting a memory cascades inside the transaction', () => {
  it('removes the memory, its edges and vectors, and un-supersedes what pointed at it', async () => {
    const repo = await open();
    await repo.apply({
      memories: [
        memory('old', 1, { kind: 'user-trait', supersededBy: 'b' }),
        memory('b', 2),
        memory('b2', 3, { supersededBy: 'c' }),
        memory('c', 4),
      ],
      edges: [edge('e-old-b', 'old', 'b'), edge('e-b-c', 'b', 'c'), edge('e-b2-c', 'b2', 'c')],
      vectors: [
        { unitId: 'b', modelId: 'minilm', vector: new Float32Array([1]) },
        { unitId: 'b', modelId: 'bge', vector: new Float32Array([2]) },
        { unitId: 'b2', modelId: 'minilm', vector: new Float32Array([3]) },
        { unitId: 'c', modelId: 'minilm', vector: new Float32Array([4]) },
      ],
    });
    // A self-link stored before the writer refused them goes with its memory too.
    await repo.db.put('edges', edge('loop', 'b', 'b'));
    const change = await repo.apply({ deleteMemories: ['b'] });
    expect(change.deleteMemories).toEqual(['b']);
    expect([...(change.deleteEdges ?? [])].sort()).toEqual(['e-b-c', 'e-old-b', 'loop']);
    expect(change.deleteVectors).toEqual([
      ['b', 'bge'],
      ['b', 'minilm'],
    ]);
    expect(change.memories?.map((m) => m.id)).toEqual(['old']);

    expect(await repo.getMemory('b')).toBeUndefined();
    const old = await repo.getMemory('old');
    expect(old).toBeDefined();
    expect('supersededBy' in (old as Memory)).toBe(false);
    expect((await repo.getMemory('b2'))?.supersededBy).toBe('c');
    expect((await repo.listEdges()).map((e) => e.id)).toEqual(['e-b2-c']);
    expect((await repo.listVectorsOfUnit('b')).length).toBe(0);
    expect((await repo.listVectors('minilm')).map((v) => v.unitId).sort()).toEqual(['b2', 'c']);
  });

  it('of a memory that does not exist is a harmless change', async () => {
    const repo = await seeded();
    const before = await dump(repo.db);
    await repo.apply({ deleteMemories: ['ghost'] });
    expect(await dump(repo.db)).toBe(before);
  });
});

describe('vector packs', () => {
  const vec = (unitId: string, modelId: string, seed: number) => ({
    unitId,
    modelId,
    vector: Float32Array.from({ length: 4 }, (_, i) => seed + i / 10),
  });
  const plain = (rs: Array<{ unitId: string; modelId: string; vector: Float32Array }>) =>
    rs.map((r) => [r.unitId, r.modelId, [...r.vector]]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

  it('a second read comes from packs with the same content', async () => {
    const repo = await open();
    await repo.apply({
      memories: ['a', 'b', 'c'].map((id) => memory(id, 1)),
      vectors: [vec('a', 'm', 1), vec('b', 'm', 2), vec('c', 'other', 3)],
    });
    const first = await repo.listVectors('m');
    expect((await repo.countAll()).vectorPacks).toBe(1);
    const second = await repo.listVectors('m');
    expect(plain(second)).toEqual(plain(first));
    expect(plain(second)).toEqual(plain([vec('a', 'm', 1), vec('b', 'm', 2)]));
    repo.close();
  });

  it("every write to a model's vectors makes its packs stale, in the same transaction", async () => {
    const repo = await open();
    await repo.apply({ memories: ['a', 'b', 'n'].map((id) => memory(id, 1)), vectors: [vec('a', 'm', 1), vec('b', 'other', 2)] });
    await repo.listVectors('m');
    await repo.listVectors('other');
    expect((await repo.countAll()).vectorPacks).toBe(2);
    await repo.apply({ vectors: [vec('n', 'm', 5)] });
    expect((await repo.countAll()).vectorPacks).toBe(1); // only m's pack went
    expect(plain(await repo.listVectors('m'))).toEqual(plain([vec('a', 'm', 1), vec('n', 'm', 5)]));
    await repo.apply({ deleteVectors: [['a', 'm']] });
    expect(plain(await repo.listVectors('m'))).toEqual(plain([vec('n', 'm', 5)]));
    await repo.apply({ deleteMemories: ['n'] });
    expect(await repo.listVectors('m')).toEqual([]);
    expect(plain(await repo.listVectors('other'))).toEqual(plain([vec('b', 'other', 2)]));
    repo.close();
  });
});

describe('vector packs and backup import', () => {
  it('importing vectors makes the packs stale', async () => {
    const { exportBackup, importBackup } = await import('../../../src/store/backup');
    const source = await open();
    await source.apply({ memories: [memory('x', 1)], vectors: [{ unitId: 'x', modelId: 'm', vector: Float32Array.from([1, 2]) }] });
    const backup = await exportBackup(source.db, { includeVectors: true });
    const target = await open();
    await target.apply({ memories: [memory('y', 1)], vectors: [{ unitId: 'y', modelId: 'm', vector: Float32Array.from([3, 4]) }] });
    expect((await target.listVectors('m')).map((v) => v.unitId)).toEqual(['y']);
    await importBackup(target.db, backup, { mode: 'merge' });
    expect((await target.listVectors('m')).map((v) => v.unitId).sort()).toEqual(['x', 'y']);
    source.close();
    target.close();
  });
});
