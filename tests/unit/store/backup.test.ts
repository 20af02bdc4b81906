import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { datasetArb, dump, freshFactory } from './helpers';
import type { Dataset } from './helpers';
import { IdbRepository } from '../../../src/store/repository';
import {
  BACKUP_LIMITS,
  BACKUP_FORMAT,
  BackupError,
  encodeVector,
  exportBackup,
  importBackup,
  isBackupError,
  serializeBackup,
} from '../../../src/store/backup';
import { isStorageFullError } from '../../../src/store/errors';
import type { Job } from '../../../src/memory/types';

const open = () => IdbRepository.open({ factory: freshFactory() });

const job: Job = { id: 'j1', kind: 'memorise', step: 'summarise', status: 'pending', attempts: 0, createdAt: 1, updatedAt: 1 };

async function fill(repo: IdbRepository, d: Dataset): Promise<void> {
  await repo.apply({
    sessions: d.sessions,
    turns: d.turns,
    memories: d.memories,
    edges: d.edges,
    segments: d.segments,
    vectors: d.vectors,
    tombstones: d.tombstones,
  });
  for (const s of d.settings) await repo.putSetting(s.key, s.value);
}

/** The backup a dataset makes, built by hand (independently of exportBackup). */
function backupOf(d: Dataset, withVectors = true): Record<string, unknown> {
  const data: Record<string, unknown> = {
    sessions: d.sessions,
    turns: d.turns,
    memories: d.memories,
    edges: d.edges,
    segments: d.segments,
    settings: d.settings,
    tombstones: d.tombstones,
  };
  if (withVectors) data.vectors = d.vectors.map(encodeVector);
  return JSON.parse(JSON.stringify({ format: BACKUP_FORMAT, version: 1, exportedAt: 1, data })) as Record<string, unknown>;
}

async function rejection(p: Promise<unknown>): Promise<BackupError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the import should have been rejected').toBeInstanceOf(BackupError);
  expect((err as Error).message.length).toBeGreaterThan(30);
  return err as BackupError;
}

describe('export -> import round trip', () => {
  it('property: replace into an empty database reproduces every record exactly', async () => {
    // Distinct datasets that went through the whole round trip, and of them how many held a text
    // over 100,000 characters or a time at the edge of the Date range (the cases that once failed).
    const seen = new Set<string>();
    let longText = 0;
    let extremeTime = 0;
    await fc.assert(
      fc.asyncProperty(datasetArb('r', 5), async (d) => {
        const a = await open();
        const b = await open();
        await fill(a, d);
        // Junk in the target proves replace really replaces (jobs included).
        await b.apply({ sessions: [{ id: 'junk', title: '', startedAt: 0, lastActivityAt: 0, status: 'open' }], jobs: [job] });

        const text = serializeBackup(await exportBackup(a.db, { includeVectors: true, now: () => 42 }));
        const summary = await importBackup(b.db, text, { mode: 'replace' });
        expect(summary.added).toEqual({
          sessions: d.sessions.length,
          turns: d.turns.length,
          memories: d.memories.length,
          edges: d.edges.length,
          segments: d.segments.length,
          settings: d.settings.length,
          tombstones: d.tombstones.length,
          vectors: d.vectors.length,
        });
        expect(await dump(b.db)).toBe(await dump(a.db));
        expect(serializeBackup(await exportBackup(b.db, { includeVectors: true, now: () => 42 }))).toBe(text);

        // Merging the same file again adds nothing and changes nothing.
        const before = await dump(a.db);
        const again = await importBackup(a.db, text, { mode: 'merge' });
        expect(Object.values(again.added).every((n) => n === 0)).toBe(true);
        expect(await dump(a.db)).toBe(before);
        a.close();
        b.close();
        if (!seen.has(text)) {
          seen.add(text);
          if (/"[^"]{100001,}"/.test(text)) longText++;
          if (text.includes('8640000000000000')) extremeTime++;
        }
      }),
      { numRuns: 150 },
    );
    console.log(
      `[trust] backup round trips: ${seen.size} distinct datasets (${longText} with a text over 100,000 characters, ${extremeTime} with a time at the Date range's edge)`,
    );
    expect(longText).toBeGreaterThan(0);
  });

  it('exports the documented shape; vectors only on request; jobs never', async () => {
    const repo = await open();
    await repo.apply({
      memories: [{ id: 'm', kind: 'note', text: 'x', time: 1, sourceTurnIds: [], sessionId: 's', edited: false, createdAt: 1 }],
      vectors: [{ unitId: 'm', modelId: 'e', vector: new Float32Array([1, -2.5]) }],
      jobs: [job],
    });
    const plain = await exportBackup(repo.db, { now: () => 7 });
    expect(plain.format).toBe('tealeaf-backup');
    expect(plain.version).toBe(1);
    expect(plain.exportedAt).toBe(7);
    expect(Object.keys(plain.data).sort()).toEqual(['edges', 'memories', 'segments', 'sessions', 'settings', 'tombstones', 'turns']);
    const full = await exportBackup(repo.db, { includeVectors: true });
    expect(full.data.vectors).toEqual([
      { unitId: 'm', modelId: 'e', dimension: 2, data: Buffer.from(new Float32Array([1, -2.5]).buffer).toString('base64') },
    ]);
  });
});

describe('import modes', () => {
  it('merge skips records whose id exists, resolves references against the store, and counts', async () => {
    const repo = await open();
    await repo.apply({
      sessions: [{ id: 's1', title: 'mine', startedAt: 1, lastActivityAt: 1, status: 'ended' }],
      turns: [{ id: 't-mine', sessionId: 's1', index: 0, role: 'user', text: 'hi', time: 1, status: 'complete' }],
      memories: [{ id: 'm1', kind: 'event', text: 'mine', time: 1, sourceTurnIds: [], sessionId: 's1', edited: true, createdAt: 1 }],
      jobs: [job],
    });
    await repo.putSetting('theme', 'dark');
    const file = {
      format: 'tealeaf-backup',
      version: 1,
      exportedAt: 5,
      data: {
        sessions: [{ id: 's1', title: 'theirs', startedAt: 1, lastActivityAt: 1, status: 'ended' }],
        turns: [
          { id: 't-other', sessionId: 's1', index: 0, role: 'user', text: 'same place', time: 1, status: 'complete' },
          { id: 't-new', sessionId: 's1', index: 1, role: 'assistant', text: 'new', time: 2, status: 'complete' },
        ],
        memories: [{ id: 'm2', kind: 'event', text: 'theirs', time: 2, sourceTurnIds: [], sessionId: 's1', edited: false, createdAt: 2 }],
        edges: [{ id: 'e', from: 'm1', to: 'm2', relation: 'Cause', origin: 'model', createdAt: 2 }],
        segments: [],
        settings: [
          { key: 'theme', value: 'light' },
          { key: 'k', value: 3 },
        ],
      },
    };
    const summary = await importBackup(repo.db, JSON.stringify(file), { mode: 'merge' });
    expect(summary).toEqual({
      added: { sessions: 0, turns: 1, memories: 1, edges: 1, segments: 0, settings: 1, tombstones: 0, vectors: 0 },
      skipped: { sessions: 1, turns: 1, memories: 0, edges: 0, segments: 0, settings: 1, tombstones: 0, vectors: 0 },
      selfLinks: 0,
    });
    expect((await repo.getSession('s1'))?.title).toBe('mine');
    expect((await repo.listTurns('s1')).map((t) => t.id)).toEqual(['t-mine', 't-new']);
    expect(await repo.getSetting('theme')).toBe('dark');
    expect((await repo.listJobs()).length).toBe(1);

    // A link from a memory to itself is left out and counted (limits.ts, isSelfLink); the rest comes.
    const withLoop = { ...file, data: { ...file.data, edges: [...file.data.edges, { ...file.data.edges[0], id: 'loop', from: 'm2' }] } };
    const looped = await importBackup(repo.db, JSON.stringify(withLoop), { mode: 'merge' });
    expect(looped.selfLinks).toBe(1);
    expect(looped.added.edges).toBe(0);
    expect(looped.skipped.edges).toBe(1);
    expect(await repo.db.get('edges', 'loop')).toBeUndefined();

    // The same edge in replace mode dangles: m1 is not in the file and the store is wiped.
    const before = await dump(repo.db);
    const err = await rejection(importBackup(repo.db, JSON.stringify(file), { mode: 'replace' }));
    expect(err.message).toContain('edges[0].from: no memory "m1"');
    expect(await dump(repo.db)).toBe(before);
  });

  it('replace wipes everything first, jobs and vectors included, in the same transaction', async () => {
    const repo = await open();
    await repo.apply({ jobs: [job], vectors: [{ unitId: 'x', modelId: 'e', vector: new Float32Array([1]) }] });
    const file = {
      format: 'tealeaf-backup',
      version: 1,
      exportedAt: 1,
      data: { sessions: [], turns: [], memories: [], edges: [], segments: [], settings: [] },
    };
    await importBackup(repo.db, file, { mode: 'replace' });
    expect(Object.values(await repo.countAll()).every((n) => n === 0)).toBe(true);
  });
});

describe('import rejects with a message and touches nothing', () => {
  let repo: IdbRepository;
  let before: string;
  beforeAll(async () => {
    repo = await open();
    const seed = fc.sample(datasetArb('seed', 4), { seed: 7, numRuns: 1 })[0];
    await fill(repo, seed);
    await repo.apply({ jobs: [job] });
    before = await dump(repo.db);
    expect(before.length).toBeGreaterThan(100);
  });

  const valid = (): Record<string, unknown> =>
    backupOf({
      sessions: [{ id: 's1', title: 'a', startedAt: 1, lastActivityAt: 2, status: 'ended' }],
      turns: [{ id: 't1', sessionId: 's1', index: 0, role: 'user', text: 'hello', time: 1, status: 'complete' }],
      memories: [
        { id: 'm1', kind: 'event', text: 'x', time: 1, sourceTurnIds: ['t1'], sessionId: 's1', edited: false, createdAt: 1 },
        { id: 'm2', kind: 'event', text: 'y', time: 2, sourceTurnIds: [], sessionId: 's1', edited: false, createdAt: 2 },
        { id: 'm3', kind: 'note', text: 'z', time: 3, sourceTurnIds: [], sessionId: 's1', edited: false, createdAt: 3 },
        { id: 'm4', kind: 'note', text: 'w', time: 4, sourceTurnIds: [], sessionId: 's1', edited: false, createdAt: 4 },
      ],
      edges: [{ id: 'e1', from: 'm1', to: 'm2', relation: 'Cause', origin: 'model', createdAt: 1 }],
      segments: [],
      settings: [{ key: 'k', value: { a: [1, 2] } }],
      vectors: [{ unitId: 'm1', modelId: 'e', vector: new Float32Array([1, 2]) }],
      tombstones: [{ kind: 'session', id: 'gone', deletedAt: 1 }],
    });
  const set = (path: Array<string | number>, value: unknown) => {
    const b = valid();
    let o = b as Record<string | number, unknown>;
    for (const p of path.slice(0, -1)) o = o[p] as Record<string | number, unknown>;
    o[path[path.length - 1]] = value;
    return JSON.stringify(b);
  };

  const cases: Array<[string, () => string, string]> = [
    [
      'a wrong type names the path',
      () => set(['data', 'memories', 3, 'time'], 'soon'),
      'memories[3].time: expected a number, got the string "soon"',
    ],
    ['a missing field', () => set(['data', 'turns', 0, 'text'], undefined), 'turns[0].text: missing (expected a string)'],
    ['an unknown field', () => set(['data', 'edges', 0, 'weight'], 1), 'edges[0]: unknown field "weight"'],
    ['an unknown relation', () => set(['data', 'edges', 0, 'relation'], 'Loves'), 'edges[0].relation: expected one of'],
    ['an unknown version', () => set(['version'], 2), 'backup version 2 is not supported'],
    ['another format', () => set(['format'], 'other-app'), 'not a Tealeaf backup'],
    ['a huge string', () => set(['data', 'turns', 0, 'text'], 'x'.repeat(BACKUP_LIMITS.maxString + 1)), 'turns[0].text: text is too long'],
    ['a time outside the Date range', () => set(['data', 'memories', 0, 'time'], 1e16), 'memories[0].time: too large'],
    ['a negative time outside the Date range', () => set(['data', 'sessions', 0, 'startedAt'], -1e16), 'sessions[0].startedAt: too small'],
    ['a long id', () => set(['data', 'sessions', 0, 'id'], 'i'.repeat(201)), 'sessions[0].id: too long'],
    ['an empty id', () => set(['data', 'memories', 0, 'id'], ''), 'memories[0].id: must not be empty'],
    ['a fractional index', () => set(['data', 'turns', 0, 'index'], 1.5), 'turns[0].index: expected an integer'],
    ['a dangling edge', () => set(['data', 'edges', 0, 'to'], 'nowhere'), 'edges[0].to: no memory "nowhere"'],
    ['a turn without its session', () => set(['data', 'turns', 0, 'sessionId'], 'gone'), 'turns[0].sessionId: no session "gone"'],
    ['a duplicate id', () => set(['data', 'memories', 1, 'id'], 'm1'), 'memories[1]: duplicate id "m1"'],
    [
      'a duplicate tombstone',
      () => set(['data', 'tombstones', 1], { kind: 'session', id: 'gone', deletedAt: 2 }),
      'tombstones[1]: duplicate session "gone"',
    ],
    ['a tombstone of another kind', () => set(['data', 'tombstones', 0, 'kind'], 'edge'), 'tombstones[0].kind: expected one of'],
    [
      'a branch turn without the version it followed',
      () => set(['data', 'turns', 0, 'branches'], [{ id: 'b', role: 'user', text: 'x', time: 1, status: 'complete' }]),
      'turns[0].branches[0].follows: missing',
    ],
    ['bad vector bytes', () => set(['data', 'vectors', 0, 'data'], 'AAAA'), 'vectors[0].data: not base64 of 32-bit floats'],
    ['a wrong vector dimension', () => set(['data', 'vectors', 0, 'dimension'], 3), 'vectors[0].data: holds 2 numbers, dimension says 3'],
    ['text that is not JSON', () => '{"format": "tealeaf-backup", ', 'not valid JSON'],
    ['JSON that is not an object', () => '[1,2,3]', 'not a Tealeaf backup'],
    ['a __proto__ key', () => valid2('{"__proto__":{"polluted":true},', 'data.memories'), 'the key "__proto__" is not allowed'],
    [
      'a constructor key in a setting',
      () => set(['data', 'settings', 0, 'value'], JSON.parse('{"constructor":{"prototype":{"polluted":true}}}')),
      'settings[0].value: the key "constructor"',
    ],
    ['a huge list', () => set(['data', 'sessions'], new Array(1_000_001).fill(0)), 'sessions: list is too long'],
    ['deep nesting', () => set(['data', 'settings', 0, 'value'], JSON.parse('['.repeat(5000) + ']'.repeat(5000))), 'nested too deeply'],
  ];
  // Injects raw text after the opening brace of the first record of a collection.
  function valid2(inject: string, where: string): string {
    const text = JSON.stringify(valid());
    const marker = `"${where.split('.')[1]}":[{`;
    const at = text.indexOf(marker) + marker.length;
    return text.slice(0, at) + inject.slice(1) + text.slice(at);
  }

  for (const [name, make, message] of cases) {
    for (const mode of ['merge', 'replace'] as const) {
      it(`${name} (${mode})`, async () => {
        const err = await rejection(importBackup(repo.db, make(), { mode }));
        expect(err.message).toContain(message);
        expect(isBackupError(err)).toBe(true);
        expect(await dump(repo.db)).toBe(before);
      });
    }
  }

  it('the valid base file of these cases imports (so each case fails for its own reason)', async () => {
    const other = await open();
    await expect(importBackup(other.db, JSON.stringify(valid()), { mode: 'replace' })).resolves.toBeDefined();
  });

  it('a hostile file pollutes no prototype', async () => {
    const text = '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"format":"tealeaf-backup","version":1}';
    await rejection(importBackup(repo.db, text, { mode: 'merge' }));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  describe('a full disk during import', () => {
    const proto = IDBObjectStore.prototype;
    const originalPut = proto.put;
    afterEach(() => {
      proto.put = originalPut;
    });
    for (const mode of ['merge', 'replace'] as const) {
      it(`is a StorageFullError and rolls back (${mode}, the wipe included)`, async () => {
        proto.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
          if (JSON.stringify(value).includes('FILL-DISK')) throw new DOMException('full', 'QuotaExceededError');
          return originalPut.call(this, value, key);
        };
        const err = await importBackup(repo.db, set(['data', 'memories', 2, 'text'], 'FILL-DISK'), { mode }).catch((e: unknown) => e);
        expect(isStorageFullError(err)).toBe(true);
        expect(await dump(repo.db)).toBe(before);
      });
    }
  });

  // -------------------------------------------------------------------------------------------
  // Fuzz: random valid backups with one random hostile mutation each.

  type Kind = 'id' | 'string' | 'number' | 'int' | 'enum' | 'boolean' | 'array' | 'object' | 'base64';
  const FIELDS: Record<string, Record<string, [Kind, boolean]>> = {
    sessions: {
      id: ['id', true],
      title: ['string', true],
      startedAt: ['number', true],
      lastActivityAt: ['number', true],
      endedAt: ['number', false],
      status: ['enum', true],
      endReason: ['enum', false],
    },
    turns: {
      id: ['id', true],
      sessionId: ['id', true],
      index: ['int', true],
      role: ['enum', true],
      text: ['string', true],
      time: ['number', true],
      status: ['enum', true],
      modelId: ['string', false],
      usedMemory: ['object', false],
      externalId: ['string', false],
      versions: ['array', false],
      branches: ['array', false],
    },
    memories: {
      id: ['id', true],
      kind: ['enum', true],
      text: ['string', true],
      subject: ['string', false],
      time: ['number', true],
      sourceTurnIds: ['array', true],
      sessionId: ['id', true],
      supersededBy: ['id', false],
      endedAt: ['number', false],
      edited: ['boolean', true],
      createdAt: ['number', true],
      context: ['string', false],
      worthRemembering: ['boolean', false],
    },
    edges: {
      id: ['id', true],
      from: ['id', true],
      to: ['id', true],
      relation: ['enum', true],
      origin: ['enum', true],
      createdAt: ['number', true],
    },
    segments: {
      id: ['id', true],
      sessionId: ['id', true],
      firstTurn: ['int', true],
      lastTurn: ['int', true],
      turnIds: ['array', true],
      text: ['string', true],
      indexText: ['string', true],
      time: ['number', true],
    },
    settings: { key: ['id', true] },
    tombstones: { kind: ['enum', true], id: ['id', true], deletedAt: ['number', true] },
    vectors: { unitId: ['id', true], modelId: ['id', true], dimension: ['int', true], data: ['base64', true] },
  };
  const WRONG: Record<Kind, unknown[]> = {
    id: [42, null, '', 'i'.repeat(201), {}, [], true],
    string: [42, null, true, [], {}, 's'.repeat(BACKUP_LIMITS.maxString + 1)],
    // 1e16: finite, but outside the Date range (a time the UI cannot format).
    number: ['1', null, true, [], {}, 1e16, -1e16],
    int: ['1', 1.5, -1, null, []],
    enum: ['NotAValue', 7, null, ''],
    boolean: ['true', 0, null, 'false'],
    array: ['x', 5, {}, null, [7]],
    object: ['x', [], 5, null, { memoryIds: [] }],
    base64: [42, null, '!!!!', 'AAAA', 'AAAAAAA='],
  };
  const TEMPLATE: Record<string, Record<string, unknown>> = {
    sessions: { id: 'tpl-s', title: 't', startedAt: 1, lastActivityAt: 1, status: 'open' },
    turns: { id: 'tpl-t', sessionId: 'tpl-s', index: 0, role: 'user', text: 't', time: 1, status: 'complete' },
    memories: { id: 'tpl-m', kind: 'event', text: 't', time: 1, sourceTurnIds: [], sessionId: 'tpl-s', edited: false, createdAt: 1 },
    edges: { id: 'tpl-e', from: 'tpl-m', to: 'tpl-m', relation: 'SameTopic', origin: 'user', createdAt: 1 },
    segments: { id: 'tpl-g', sessionId: 'tpl-s', firstTurn: 0, lastTurn: 0, turnIds: [], text: 't', indexText: 't', time: 1 },
    settings: { key: 'tpl-k', value: 1 },
    tombstones: { kind: 'session', id: 'tpl-x', deletedAt: 1 },
    vectors: { unitId: 'tpl-m', modelId: 'e', dimension: 1, data: 'AACAPw==' },
  };
  const COLLECTIONS = Object.keys(FIELDS);
  const FORBIDDEN = ['__proto__', 'constructor', 'prototype'];

  type Data = Record<string, Array<Record<string, unknown>>>;
  /** Adds the template records (and what they refer to) so `name` has at least one record. */
  function ensure(data: Data, name: string): void {
    data[name] ??= [];
    if (data[name].length > 0) return;
    const needs: Record<string, string[]> = { turns: ['sessions'], edges: ['memories'], vectors: ['memories'], segments: ['sessions'] };
    for (const dep of needs[name] ?? []) if (!data[dep].some((r) => r.id === TEMPLATE[dep].id)) data[dep].push({ ...TEMPLATE[dep] });
    if (name === 'turns' && !data.sessions.some((s) => s.id === 'tpl-s')) data.sessions.push({ ...TEMPLATE.sessions });
    data[name].push({ ...TEMPLATE[name] });
  }

  const defineOwn = (o: object, key: string, value: unknown) =>
    Object.defineProperty(o, key, { value, enumerable: true, configurable: true, writable: true });

  /** Returns the file text and a fragment its rejection message must contain. */
  function mutate(b: Record<string, unknown>, kind: number, r: number[]): [string, string] {
    const data = b.data as Data;
    const pick = <T>(xs: readonly T[], i: number): T => xs[r[i] % xs.length];
    const coll = pick(COLLECTIONS, 0);
    switch (kind) {
      case 0: {
        // wrong type
        ensure(data, coll);
        const i = r[1] % data[coll].length;
        const [field, [type]] = pick(Object.entries(FIELDS[coll]), 2);
        data[coll][i][field] = pick(WRONG[type], 3);
        return [JSON.stringify(b), `${coll}[${i}].${field}`];
      }
      case 1: {
        // missing required field
        ensure(data, coll);
        const i = r[1] % data[coll].length;
        const required = Object.entries(FIELDS[coll]).filter(([, [, req]]) => req);
        const [field] = pick(required, 2);
        delete data[coll][i][field];
        return [JSON.stringify(b), `${coll}[${i}].${field}: missing`];
      }
      case 2: {
        // unknown field
        ensure(data, coll);
        const i = r[1] % data[coll].length;
        data[coll][i][`extra${r[2] % 100}`] = r[3];
        return [JSON.stringify(b), `${coll}[${i}]: unknown field "extra${r[2] % 100}"`];
      }
      case 3: {
        // forbidden key somewhere
        const key = pick(FORBIDDEN, 1);
        const targets: object[] = [b, data];
        for (const c of COLLECTIONS) for (const rec of data[c] ?? []) targets.push(rec);
        for (const t of data.turns) if (t.usedMemory) targets.push(t.usedMemory as object);
        // Arrays are left out: JSON.stringify drops non-index keys, so the mutation would vanish.
        for (const s of data.settings)
          if (s.value && typeof s.value === 'object' && !Array.isArray(s.value)) targets.push(s.value as object);
        defineOwn(pick(targets, 2), key, { polluted: true });
        return [JSON.stringify(b), `the key "${key}" is not allowed`];
      }
      case 4: {
        // bad header
        const choice = r[1] % 4;
        if (choice === 0) b.version = pick([0, 2, 99, '1', null, 1.5], 2);
        else if (choice === 1) delete b.version;
        else if (choice === 2) b.format = pick(['', 'tealeaf', 'TEALEAF-BACKUP', 5], 2);
        else delete b.format;
        return [JSON.stringify(b), choice < 2 ? 'version' : 'not a Tealeaf backup'];
      }
      case 5: {
        // dangling edge end
        ensure(data, 'edges');
        const i = r[1] % data.edges.length;
        const end = r[2] % 2 === 0 ? 'from' : 'to';
        data.edges[i][end] = `missing-${r[3]}`;
        return [JSON.stringify(b), `edges[${i}].${end}: no memory "missing-${r[3]}"`];
      }
      case 6: {
        // turn without its session
        ensure(data, 'turns');
        const i = r[1] % data.turns.length;
        data.turns[i].sessionId = `missing-${r[3]}`;
        return [JSON.stringify(b), `turns[${i}].sessionId: no session`];
      }
      case 7: {
        // duplicate record
        ensure(data, coll);
        const i = r[1] % data[coll].length;
        data[coll].push(JSON.parse(JSON.stringify(data[coll][i])) as Record<string, unknown>);
        return [JSON.stringify(b), `${coll}[${data[coll].length - 1}]: duplicate`];
      }
      case 8: {
        // truncated text
        const text = JSON.stringify(b);
        return [text.slice(0, r[1] % text.length), 'not valid JSON'];
      }
      case 9: {
        // not a backup object at all
        return [pick(['null', '42', '"x"', '[]', '[{"format":"tealeaf-backup"}]', 'true'], 1), 'not a Tealeaf backup'];
      }
      case 10: {
        // collection missing or of the wrong type
        const name = pick(['sessions', 'turns', 'memories', 'edges', 'segments', 'settings'], 1);
        if (r[2] % 2 === 0) delete data[name];
        else (data as Record<string, unknown>)[name] = pick([{}, 'x', 3, null], 3);
        return [JSON.stringify(b), name];
      }
      case 11: {
        // data itself broken
        b.data = pick([null, [], 'x', 5], 1);
        return [JSON.stringify(b), 'data'];
      }
      default: {
        // a huge string anywhere string-typed
        ensure(data, coll);
        const i = r[1] % data[coll].length;
        const stringFields = Object.entries(FIELDS[coll]).filter(([, [t]]) => t === 'string' || t === 'id' || t === 'base64');
        const [field] = pick(stringFields, 2);
        data[coll][i][field] = 'h'.repeat(BACKUP_LIMITS.maxString + 1 + (r[3] % 1000));
        return [JSON.stringify(b), `${coll}[${i}].${field}: text is too long`];
      }
    }
  }

  it('property: 1,000 random malformed or hostile backups are each rejected with a message', async () => {
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(
        datasetArb('f', 4),
        fc.boolean(),
        fc.integer({ min: 0, max: 12 }),
        fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
        fc.constantFrom('merge' as const, 'replace' as const),
        async (d, withVectors, kind, r, mode) => {
          const [text, expected] = mutate(backupOf(d, withVectors || kind === 0), kind, r);
          const err = await rejection(importBackup(repo.db, text, { mode }));
          expect(err.message).toContain(expected);
          expect(await dump(repo.db)).toBe(before);
          rejected++;
        },
      ),
      { numRuns: 1000, endOnFailure: true },
    );
    expect(rejected).toBeGreaterThanOrEqual(1000);
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});
