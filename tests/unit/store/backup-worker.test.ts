// Backup through the worker's code path, run in-process: the page's client
// (backup-client.ts) talks to the worker's handler (backup-worker-core.ts) through asynchronous
// messages as a real Worker would, and the file travels as a Blob both ways. Covers the round trip
// law over app-reachable data, progress, cancel at every phase, and errors across the boundary.
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { IDBFactory } from 'fake-indexeddb';
import { datasetArb, dump, freshFactory } from './helpers';
import type { Dataset } from './helpers';
import { IdbRepository } from '../../../src/store/repository';
import { openTealeafDb } from '../../../src/store/db';
import type { TealeafDb } from '../../../src/store/db';
import { STORE_NAMES } from '../../../src/store/schema';
import {
  BACKUP_COLLECTIONS,
  BACKUP_LIMITS,
  exportBackup,
  exportBackupParts,
  importBackup,
  serializeBackup,
} from '../../../src/store/backup';
import { createBackupWorker } from '../../../src/store/backup-worker-core';
import { exportBackupInWorker, importBackupInWorker, type BackupRunOptions, type BackupWorkerPort } from '../../../src/store/backup-client';
import {
  BackupCancelledError,
  BackupError,
  type BackupControl,
  type BackupProgress,
  type BackupReply,
  type BackupRequest,
} from '../../../src/store/backup-messages';
import { StorageFullError } from '../../../src/store/errors';
import type { Memory, Session } from '../../../src/memory/types';

interface Store {
  factory: IDBFactory;
  repo: IdbRepository;
}

async function openStore(): Promise<Store> {
  const factory = freshFactory();
  return { factory, repo: await IdbRepository.open({ factory }) };
}

/** A Worker stand-in: messages cross asynchronously, in both directions, as with a real one. */
function inProcessWorker(factory: IDBFactory, log?: { started: number; terminated: number }): BackupWorkerPort {
  let ended = false;
  const port: BackupWorkerPort = {
    onmessage: null,
    onerror: null,
    postMessage: (message: BackupRequest) => {
      setTimeout(() => void handle(message), 0);
    },
    terminate: () => {
      ended = true;
      if (log) log.terminated++;
    },
  };
  const handle = createBackupWorker({
    openDb: () => openTealeafDb({ factory }),
    post: (reply: BackupReply) => {
      setTimeout(() => {
        if (!ended) port.onmessage?.({ data: reply } as MessageEvent<BackupReply>);
      }, 0);
    },
  });
  if (log) log.started++;
  return port;
}

/** Run options for a store: the given ones, with the in-process worker. */
function via<T extends BackupControl & { includeVectors?: boolean }>(s: Store, extra?: T): T & BackupRunOptions {
  return { ...(extra ?? ({} as T)), startWorker: () => inProcessWorker(s.factory) };
}

async function fill(repo: IdbRepository, d: Dataset): Promise<void> {
  await repo.apply({
    sessions: d.sessions,
    turns: d.turns,
    memories: d.memories,
    edges: d.edges,
    segments: d.segments,
    vectors: d.vectors,
  });
  for (const s of d.settings) await repo.putSetting(s.key, s.value);
}

/** Every record of every store, as stored (typed arrays included), for toEqual. */
async function records(db: TealeafDb): Promise<Record<string, unknown[]>> {
  const tx = db.transaction([...STORE_NAMES]);
  const all = await Promise.all(STORE_NAMES.map((name) => tx.objectStore(name).getAll()));
  return Object.fromEntries(STORE_NAMES.map((n, i) => [n, all[i]]));
}

// fast-check's 'binary' strings hold no lone surrogates, but the app can store them: a reply
// saved mid-stream may end between the two halves of an emoji. So some datasets get them here.
const loneSurrogate = fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', 'x\ud83d', '\ude00y');
const appDataArb = fc.tuple(datasetArb('w', 5), fc.option(loneSurrogate, { freq: 3 })).map(([d, lone]): Dataset => {
  if (lone === null) return d;
  return {
    ...d,
    sessions: d.sessions.map((x) => ({ ...x, title: x.title + lone })),
    turns: d.turns.map((x) => ({ ...x, text: x.text + lone })),
    memories: d.memories.map((x) => ({ ...x, text: lone + x.text })),
  };
});
// JSON.stringify writes a lone surrogate as an escape such as \ud800 (a pair stays as it is).
const hasLoneSurrogate = (text: string) => /\\ud[89a-f][0-9a-f]{2}/i.test(text);

describe('round trip through the worker: store -> file (Blob) -> store', () => {
  it('property: export, import into a fresh store (replace, and merge into empty), export again: every store equal', async () => {
    const seen = new Set<string>();
    const counts = { longText: 0, extremeTime: 0, loneSurrogate: 0, usedMemory: 0, supersededBy: 0, vectors: 0, settings: 0, segments: 0 };
    await fc.assert(
      fc.asyncProperty(appDataArb, async (d) => {
        const a = await openStore();
        await fill(a.repo, d);
        const { file: blob, counts: told } = await exportBackupInWorker(via(a, { includeVectors: true }));
        const text = await blob.text();
        // The worker's file is the text exportBackup + serializeBackup make: one format.
        const direct = JSON.parse(serializeBackup(await exportBackup(a.repo.db, { includeVectors: true }))) as { exportedAt: number };
        const file = JSON.parse(text) as { exportedAt: number; data: Record<string, unknown[] | undefined> };
        expect(file).toEqual({ ...direct, exportedAt: file.exportedAt });
        // The counts the user is told are those of the file itself, collection by collection.
        expect(told).toEqual(Object.fromEntries(BACKUP_COLLECTIONS.map((c) => [c, file.data[c]?.length ?? 0])));

        const b = await openStore();
        const c = await openStore();
        await b.repo.apply({ sessions: [{ id: 'junk', title: 'replaced', startedAt: 0, lastActivityAt: 0, status: 'open' }] });
        await importBackupInWorker(new Blob([text]), 'replace', via(b));
        await importBackupInWorker(new Blob([text]), 'merge', via(c));
        const expected = await records(a.repo.db);
        expect(await records(b.repo.db)).toEqual(expected);
        expect(await records(c.repo.db)).toEqual(expected);
        expect(await dump(b.repo.db)).toBe(await dump(a.repo.db));
        expect(await dump(c.repo.db)).toBe(await dump(a.repo.db));

        // Exported again, the same file (but for the time of export).
        const again = await (await exportBackupInWorker(via(b, { includeVectors: true }))).file.text();
        expect(again.replace(/"exportedAt":\d+/, '')).toBe(text.replace(/"exportedAt":\d+/, ''));
        for (const s of [a, b, c]) s.repo.close();

        if (!seen.has(text)) {
          seen.add(text);
          if (/"[^"]{100001,}"/.test(text)) counts.longText++;
          if (text.includes('8640000000000000')) counts.extremeTime++;
          if (hasLoneSurrogate(text)) counts.loneSurrogate++;
          if (d.turns.some((t) => t.usedMemory)) counts.usedMemory++;
          if (d.memories.some((m) => m.supersededBy !== undefined)) counts.supersededBy++;
          if (d.vectors.length > 0) counts.vectors++;
          if (d.settings.length > 0) counts.settings++;
          if (d.segments.length > 0) counts.segments++;
        }
      }),
      { numRuns: 120 },
    );
    console.log(
      `[trust] backup round trips through the worker (Blob file, replace and merge into empty, exported again): ${seen.size} distinct datasets ${JSON.stringify(counts)}`,
    );
    // The cases the law is about must actually have been run, not just be possible.
    expect(seen.size).toBeGreaterThanOrEqual(100);
    for (const [what, n] of Object.entries(counts)) expect(n, what).toBeGreaterThan(0);
  });

  it('a large export is built in parts of whole records, each well-formed text, that join to the file', async () => {
    const a = await openStore();
    const sessions: Session[] = [{ id: 's', title: 'big', startedAt: 1, lastActivityAt: 1, status: 'ended' }];
    // Emoji (surrogate pairs) everywhere: a part boundary inside a pair would corrupt the file.
    const memories: Memory[] = Array.from({ length: 3_000 }, (_, i) => ({
      id: `m${i}`,
      kind: 'event',
      text: `😀 memory ${i} `.repeat(40),
      time: i,
      sourceTurnIds: [],
      sessionId: 's',
      edited: false,
      createdAt: i,
    }));
    await a.repo.apply({ sessions, memories });
    const parts = await exportBackupParts(a.repo.db, { now: () => 5 });
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(p.isWellFormed()).toBe(true);
    expect(parts.join('')).toBe(serializeBackup(await exportBackup(a.repo.db, { now: () => 5 })));
    const { file: blob, counts } = await exportBackupInWorker(via(a, { includeVectors: false }));
    expect(counts).toMatchObject({ sessions: sessions.length, memories: memories.length, vectors: 0 });
    const b = await openStore();
    await importBackupInWorker(blob, 'replace', via(b));
    expect(await dump(b.repo.db)).toBe(await dump(a.repo.db));
  });
});

// ---------------------------------------------------------------------------------------------

/** A store with some data of its own, and a backup file (Blob) of 3,000 other memories. */
async function setup(): Promise<{ target: Store; before: string; file: Blob; records: number }> {
  const source = await openStore();
  const sessions: Session[] = [{ id: 'bs', title: 'from the backup', startedAt: 1, lastActivityAt: 1, status: 'ended' }];
  const memories: Memory[] = Array.from({ length: 3_000 }, (_, i) => ({
    id: `bm${i}`,
    kind: 'event',
    text: `backup memory ${i}`,
    time: i,
    sourceTurnIds: [],
    sessionId: 'bs',
    edited: false,
    createdAt: i,
  }));
  await source.repo.apply({ sessions, memories });
  const file = new Blob(await exportBackupParts(source.repo.db, { now: () => 1 }), { type: 'application/json' });
  source.repo.close();

  const target = await openStore();
  await target.repo.apply({
    sessions: [{ id: 'mine', title: 'my own', startedAt: 2, lastActivityAt: 2, status: 'open' }],
    memories: [{ id: 'my-m', kind: 'note', text: 'keep me', time: 2, sourceTurnIds: [], sessionId: 'mine', edited: false, createdAt: 2 }],
  });
  await target.repo.putSetting('app', { idleGapMinutes: 5 });
  return { target, before: await dump(target.repo.db), file, records: sessions.length + memories.length };
}

describe('progress', () => {
  it('import reports reading, parsing, checking and writing in order, each counting up to its total', async () => {
    const { target, file, records } = await setup();
    const seen: BackupProgress[] = [];
    const summary = await importBackupInWorker(file, 'merge', via(target, { onProgress: (p) => seen.push(p) }));
    expect(summary.added.memories).toBe(3_000);
    const phases = seen.map((p) => p.phase).filter((p, i, all) => all[i - 1] !== p);
    expect(phases).toEqual(['reading', 'parsing', 'checking', 'writing']);
    for (const phase of phases) {
      const ps = seen.filter((p) => p.phase === phase);
      for (let i = 1; i < ps.length; i++) expect(ps[i].done).toBeGreaterThanOrEqual(ps[i - 1].done);
      for (const p of ps) expect(p.done).toBeLessThanOrEqual(p.total);
      expect(ps[ps.length - 1].done).toBe(ps[ps.length - 1].total);
    }
    expect(seen.find((p) => p.phase === 'reading')!.total).toBe(file.size);
    expect(seen.find((p) => p.phase === 'checking')!.total).toBe(records);
    expect(seen.filter((p) => p.phase === 'writing').at(-1)!.total).toBe(records);
  });

  it('export reports collecting, up to the number of records', async () => {
    const { target } = await setup();
    const seen: BackupProgress[] = [];
    await exportBackupInWorker(via(target, { includeVectors: true, onProgress: (p: BackupProgress) => seen.push(p) }));
    expect(new Set(seen.map((p) => p.phase))).toEqual(new Set(['collecting']));
    expect(seen.at(-1)).toEqual({ phase: 'collecting', done: 3, total: 3 });
  });
});

describe('cancel', () => {
  const original = IDBObjectStore.prototype.put;
  afterEach(() => {
    IDBObjectStore.prototype.put = original;
  });

  for (const mode of ['merge', 'replace'] as const) {
    for (const phase of ['reading', 'parsing', 'checking', 'writing'] as const) {
      it(`during ${phase} (${mode}): the import stops, the store is unchanged, the worker is ended`, async () => {
        const { target, before, file } = await setup();
        const controller = new AbortController();
        const log = { started: 0, terminated: 0 };
        let puts = 0;
        IDBObjectStore.prototype.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
          puts++;
          return original.call(this, value, key);
        };
        const seen: string[] = [];
        const run = importBackupInWorker(file, mode, {
          startWorker: () => inProcessWorker(target.factory, log),
          signal: controller.signal,
          onProgress: (p) => {
            seen.push(p.phase);
            if (p.phase === phase) controller.abort();
          },
        });
        const err = await run.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(BackupCancelledError);
        expect((err as Error).message).toBe('Cancelled. Nothing was changed.');
        expect(seen).toContain(phase);
        if (phase === 'writing') expect(puts, 'the cancel reached the write itself').toBeGreaterThan(0);
        expect(await dump(target.repo.db)).toBe(before);
        expect(log).toEqual({ started: 1, terminated: 1 });
      });
    }
  }

  it('an export can be cancelled too; a signal already aborted starts no worker', async () => {
    const { target } = await setup();
    const controller = new AbortController();
    const err = await exportBackupInWorker(
      via(target, { includeVectors: false, signal: controller.signal, onProgress: () => controller.abort() }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackupCancelledError);
    const log = { started: 0, terminated: 0 };
    const err2 = await importBackupInWorker(new Blob(['{}']), 'merge', {
      signal: AbortSignal.abort(),
      startWorker: () => inProcessWorker(target.factory, log),
    }).catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(BackupCancelledError);
    expect(log.started).toBe(0);
  });
});

describe('errors cross the worker boundary as the store throws them', () => {
  const original = IDBObjectStore.prototype.put;
  afterEach(() => {
    IDBObjectStore.prototype.put = original;
  });

  it('a refused file is a BackupError with the same issues as a direct import', async () => {
    const { target, before } = await setup();
    const bad = JSON.stringify({
      format: 'tealeaf-backup',
      version: 1,
      exportedAt: 1,
      data: {
        sessions: [],
        turns: [],
        edges: [],
        segments: [],
        settings: [],
        memories: [{ id: 'm', kind: 'event', text: 'x', time: 1e16, sourceTurnIds: [], sessionId: 'nowhere', edited: false, createdAt: 1 }],
      },
    });
    const direct = await importBackup(target.repo.db, bad, { mode: 'merge' }).catch((e: unknown) => e);
    const viaWorker = await importBackupInWorker(new Blob([bad]), 'merge', via(target)).catch((e: unknown) => e);
    expect(viaWorker).toBeInstanceOf(BackupError);
    expect((viaWorker as BackupError).issues).toEqual((direct as BackupError).issues);
    expect((viaWorker as BackupError).message).toBe((direct as BackupError).message);
    expect((viaWorker as Error).message).toContain('memories[0].time: too large');
    expect(await dump(target.repo.db)).toBe(before);
  });

  it('a full disk is a StorageFullError, and nothing changed', async () => {
    const { target, before, file } = await setup();
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      if ((value as { id?: string }).id === 'bm2500') throw new DOMException('full', 'QuotaExceededError');
      return original.call(this, value, key);
    };
    const err = await importBackupInWorker(file, 'replace', via(target)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageFullError);
    expect(await dump(target.repo.db)).toBe(before);
  });

  it('a file that is not UTF-8, or larger than can be read, is refused with a message', async () => {
    const { target, before } = await setup();
    const latin1 = new Blob([new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x7d])]);
    const e1 = await importBackupInWorker(latin1, 'merge', via(target)).catch((e: unknown) => e);
    expect((e1 as Error).message).toContain('not UTF-8');
    const huge = new Blob(['{}']);
    Object.defineProperty(huge, 'size', { value: BACKUP_LIMITS.maxFileBytes + 1 });
    const e2 = await importBackupInWorker(huge, 'merge', via(target)).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(BackupError);
    expect((e2 as Error).message).toContain('Tealeaf can import backups up to 512 MB');
    expect(await dump(target.repo.db)).toBe(before);
  });

  it('a file with a byte order mark imports (editors add one)', async () => {
    const { target, file } = await setup();
    const withBom = new Blob([new Uint8Array([0xef, 0xbb, 0xbf]), file]);
    const summary = await importBackupInWorker(withBom, 'merge', via(target));
    expect(summary.added.memories).toBe(3_000);
  });
});
