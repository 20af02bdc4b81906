// Two devices (in-memory repositories) syncing through the relay on 127.0.0.1: local and remote
// changes both go through `apply`, and the stores converge (docs/SYNC.md, "Rules").
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import type { Edge, Memory, Segment, Session, Turn } from '../../../src/memory/types';
import { Sealer } from '../../../src/services/sync/envelope';
import { generateDevice, generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { onRotationOf, signedRotation } from './ring-helpers';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { SyncEngine, type SyncEngineOptions } from '../../../src/services/sync/engine';
import { writeLocal } from './local-write';
import { InMemoryRepository } from '../../support/in-memory-repository';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const T = 1_700_000_000_000;
const session = (id: string): Session => ({ id, title: id, startedAt: T, lastActivityAt: T, status: 'ended', endedAt: T });
const turn = (sessionId: string, index: number, text: string): Turn => ({
  id: `${sessionId}/t${index}`,
  sessionId,
  index,
  role: index % 2 ? 'assistant' : 'user',
  text,
  time: T + index,
  status: 'complete',
});
const memory = (id: string, text: string, sessionId = 's1'): Memory => ({
  id,
  kind: 'event',
  text,
  time: T,
  sourceTurnIds: [`${sessionId}/t0`],
  sessionId,
  edited: false,
  createdAt: T,
});
const edge = (from: string, to: string): Edge => ({
  id: `edge:${from}->${to}`,
  from,
  to,
  relation: 'Cause',
  origin: 'model',
  createdAt: T,
});
const segment = (sessionId: string): Segment => ({
  id: `${sessionId}/seg/${sessionId}/t0`,
  sessionId,
  firstTurn: 0,
  lastTurn: 1,
  turnIds: [`${sessionId}/t0`, `${sessionId}/t1`],
  text: 'hi',
  indexText: 'hi',
  time: T,
});

function wipe(repo: InMemoryRepository): Promise<void> {
  for (const m of [repo.sessions, repo.turns, repo.memories, repo.edges, repo.segments, repo.vectors, repo.jobs, repo.tombstones])
    m.clear();
  return Promise.resolve();
}

/** What must be equal on both devices. */
function contents(repo: InMemoryRepository) {
  const sorted = <V>(m: Map<string, V>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
  return {
    sessions: sorted(repo.sessions),
    turns: sorted(repo.turns),
    memories: sorted(repo.memories),
    edges: sorted(repo.edges),
    segments: sorted(repo.segments),
    tombstones: sorted(repo.tombstones).map((t) => ({ kind: t.kind, id: t.id })),
  };
}

async function world() {
  const dir = mkdtempSync(join(tmpdir(), 'tealeaf-sync-'));
  let relay = await startRelay({ port: 0, dir });
  const port = Number(new URL(relay.url).port);
  closers.push(() => relay.close());
  const key = await generateSyncKey();
  const room = await roomOf(key);
  const sealer = await Sealer.of(key, room);
  const client = new RelayClient(relay.url);
  const device = (name: string, opts: Partial<SyncEngineOptions> & { store?: InMemoryRepository } = {}) => {
    const store = opts.store ?? new InMemoryRepository();
    const id = opts.deviceId ?? name.padEnd(32, '0').slice(0, 32);
    const engine = new SyncEngine({ relay: client, room, sealer, wipe: () => wipe(store), ...opts, store, deviceId: id });
    return { store, engine, id };
  };
  return {
    client,
    key,
    room,
    sealer,
    device,
    stopRelay: () => relay.close(),
    startRelay: async () => {
      relay = await startRelay({ port, dir });
    },
  };
}

/** Each sends, then each reads, in rounds: the "reconnect" of devices that were offline. */
async function exchange(...engines: SyncEngine[]) {
  for (let round = 0; round < 3; round++) {
    for (const e of engines) if (!e.unpaired) await e.push();
    for (const e of engines) await e.pull();
  }
}

async function chat(engine: SyncEngine) {
  await writeLocal(engine, {
    sessions: [session('s1')],
    turns: [turn('s1', 0, 'I moved to Lisbon'), turn('s1', 1, 'How is Lisbon?')],
    memories: [memory('m1', 'moved to Lisbon'), memory('m2', 'likes hiking'), memory('m3', 'has a sister'), memory('m4', 'sister visits')],
    edges: [edge('m1', 'm2'), edge('m3', 'm4')],
    segments: [segment('s1')],
  });
}

describe('two devices through the relay', () => {
  it('a chat and its memories on one device arrive on the other, through apply', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    expect(a.engine.pending).toBe(true);
    await exchange(a.engine, b.engine);
    expect(a.engine.pending).toBe(false);
    expect(contents(b.store).memories.map((m) => m.text)).toEqual(['moved to Lisbon', 'likes hiking', 'has a sister', 'sister visits']);
    expect(contents(b.store)).toEqual(contents(a.store));
    expect(b.store.commits).toBeGreaterThan(0);
    // Nothing to send back: B only received.
    expect(b.engine.pending).toBe(false);
  });

  it('a device sends back nothing it received, also for a later change (no echo)', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await exchange(a.engine, b.engine);
    // A second change of A's: an update that does not start at A's first clock.
    await writeLocal(a.engine, { memoryPatches: [{ id: 'm1', text: 'moved to Porto', edited: true }] });
    await a.engine.push();
    const before = (await w.client.read(w.room, 0)).last;
    await b.engine.pull();
    expect((await b.store.getMemory('m1'))?.text).toBe('moved to Porto');
    expect(b.engine.pending).toBe(false);
    expect(await b.engine.push()).toBe(false);
    expect((await w.client.read(w.room, 0)).last).toBe(before);
  });

  it('a change that only deletes (a link removed) is pending and reaches the other device', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await exchange(a.engine, b.engine);
    await writeLocal(a.engine, { deleteEdges: ['edge:m1->m2'] });
    expect(a.engine.pending).toBe(true);
    expect(await a.engine.push()).toBe(true);
    await b.engine.pull();
    expect([...b.store.edges.keys()]).toEqual(['edge:m3->m4']);
    // Sent once: nothing is left pending on either side, also after a restart from the saved state.
    expect(a.engine.pending).toBe(false);
    expect(b.engine.pending).toBe(false);
    const again = w.device('aa', { store: a.store, state: a.engine.state() });
    expect(again.engine.pending).toBe(false);
  });

  it('edits on both while offline converge', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await exchange(a.engine, b.engine);
    await writeLocal(a.engine, { memoryPatches: [{ id: 'm1', text: 'moved to Porto', edited: true }] });
    await writeLocal(b.engine, {
      memoryPatches: [{ id: 'm2', text: 'likes climbing', edited: true }],
      memories: [memory('n1', 'a note from the phone')],
    });
    await exchange(b.engine, a.engine);
    const texts = contents(a.store).memories.map((m) => m.text);
    expect(texts).toEqual(['moved to Porto', 'likes climbing', 'has a sister', 'sister visits', 'a note from the phone']);
    expect(contents(b.store)).toEqual(contents(a.store));
  });

  it('a memory deleted on one device and edited on the other stays deleted, and no edge points at it', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await exchange(a.engine, b.engine);
    // A deletes m3 (the store cascades its edge); B, offline, edits m3 and links it to m1.
    await writeLocal(a.engine, { deleteMemories: ['m3'], tombstones: [{ kind: 'memory', id: 'm3', deletedAt: T + 5 }] });
    await writeLocal(b.engine, { memoryPatches: [{ id: 'm3', text: 'has two sisters', edited: true }], edges: [edge('m1', 'm3')] });
    // B's edit reaches the relay last: "the last write wins" would bring m3 back.
    await a.engine.push();
    await b.engine.push();
    await exchange(a.engine, b.engine);
    for (const d of [a, b]) {
      expect(d.store.memories.has('m3')).toBe(false);
      expect([...d.store.edges.values()].filter((e) => e.from === 'm3' || e.to === 'm3')).toEqual([]);
      expect(d.store.tombstones.size).toBe(1);
    }
    expect(contents(b.store)).toEqual(contents(a.store));
    // Undo on A (the memory put back, its tombstone removed) brings it back on B too.
    await writeLocal(a.engine, { memories: [memory('m3', 'has a sister')], deleteTombstones: [['memory', 'm3']] });
    await exchange(a.engine, b.engine);
    expect(b.store.memories.get('m3')?.text).toBe('has a sister');
    expect(b.store.tombstones.size).toBe(0);
    expect(contents(b.store)).toEqual(contents(a.store));
  });

  it('a chat deleted on one device takes the turns the other added to it offline', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await exchange(a.engine, b.engine);
    await writeLocal(a.engine, {
      deleteSessions: ['s1'],
      deleteTurns: ['s1/t0', 's1/t1'],
      deleteSegments: ['s1/seg/s1/t0'],
      tombstones: [{ kind: 'session', id: 's1', deletedAt: T + 9 }],
    });
    await writeLocal(b.engine, { turns: [turn('s1', 2, 'one more thing')] });
    await exchange(b.engine, a.engine);
    for (const d of [a, b]) {
      expect([...d.store.sessions.keys()]).toEqual([]);
      expect([...d.store.turns.keys()]).toEqual([]);
      expect([...d.store.segments.keys()]).toEqual([]);
    }
    // Memories are kept unless the user asked otherwise (as on one device).
    expect(contents(b.store)).toEqual(contents(a.store));
    expect(a.store.memories.size).toBe(4);
  });

  it('three devices: two append to one chat apart; all three end with every turn, in one order, with no position shared', async () => {
    const w = await world();
    const [a, b, c] = [w.device('aa'), w.device('bb'), w.device('cc')];
    await chat(a.engine);
    await exchange(a.engine, b.engine, c.engine);
    const at = (id: string, index: number, dt: number): Turn => ({ ...turn('s1', index, id), id, time: T + dt });
    // a's turns are on a first, but b's was said earlier: b's goes first everywhere.
    await writeLocal(a.engine, { turns: [at('a2', 2, 100)] });
    await writeLocal(a.engine, { turns: [at('a3', 3, 101)] });
    await writeLocal(b.engine, { turns: [at('b2', 2, 50)] });
    await exchange(a.engine, b.engine, c.engine);
    const order = (d: { store: InMemoryRepository }) =>
      [...d.store.turns.values()].sort((x, y) => x.index - y.index).map((t) => `${t.index}:${t.id}`);
    for (const d of [a, b, c]) expect(order(d)).toEqual(['0:s1/t0', '1:s1/t1', '2:b2', '3:a2', '4:a3']);
    expect(contents(b.store)).toEqual(contents(a.store));
    expect(contents(c.store)).toEqual(contents(a.store));
    // The document holds the same positions (what a device joining later reads).
    const inDoc = (d: { engine: SyncEngine }) => [...d.engine.records.map('turns').values()].map((t) => `${t.index}:${t.id}`).sort();
    expect(inDoc(b)).toEqual(inDoc(a));
    expect(inDoc(c)).toEqual(order(a).sort());
  });

  it('delete-all is not undone by what another device wrote offline, unless that device keeps it', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await exchange(a.engine, b.engine);
    await wipe(a.store);
    const epoch = await a.engine.deleteAll(T + 100);
    expect(epoch.by).toBe(a.id);
    await writeLocal(b.engine, { memories: [memory('late', 'written offline before the wipe was heard')] });
    // B reconnects and sends first: its write lands after the wipe in the relay's order.
    await b.engine.push();
    await exchange(a.engine, b.engine);
    for (const d of [a, b])
      expect(contents(d.store)).toEqual({ sessions: [], turns: [], memories: [], edges: [], segments: [], tombstones: [] });
    // Life goes on in the new epoch.
    await writeLocal(a.engine, { memories: [memory('fresh', 'after the wipe')] });
    await exchange(a.engine, b.engine);
    expect([...b.store.memories.keys()]).toEqual(['fresh']);

    // The same with a device whose user chooses to keep its data: it comes back everywhere.
    const w2 = await world();
    const c = w2.device('cc');
    const d = w2.device('dd', { onReset: async () => 'keep' });
    await chat(c.engine);
    await exchange(c.engine, d.engine);
    await wipe(c.store);
    await c.engine.deleteAll(T + 200);
    await exchange(c.engine, d.engine);
    expect(c.store.memories.size).toBe(4);
    expect(contents(d.store)).toEqual(contents(c.store));
  });
  it('two delete-alls at once end in one epoch, the same on both, and syncing goes on', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await exchange(a.engine, b.engine);
    await wipe(a.store);
    await wipe(b.store);
    await a.engine.deleteAll(T + 300);
    await b.engine.deleteAll(T + 301);
    await exchange(a.engine, b.engine);
    expect(a.engine.records.epoch).toEqual(b.engine.records.epoch);
    await writeLocal(b.engine, { memories: [memory('after', 'after both wipes')] });
    await exchange(a.engine, b.engine);
    expect([...a.store.memories.keys()]).toEqual(['after']);
    expect(contents(b.store)).toEqual(contents(a.store));
  });
});

describe('faults', () => {
  it('the relay stopped mid-sync: the change stays pending, then arrives once', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await w.stopRelay();
    await expect(a.engine.push()).rejects.toThrow(/cannot be reached/);
    expect(a.engine.pending).toBe(true);
    expect(a.engine.lastError).toMatch(/cannot be reached/);
    await w.startRelay();
    await exchange(a.engine, b.engine);
    expect(contents(b.store)).toEqual(contents(a.store));
    expect((await w.client.read(w.room, 0)).last).toBe(1);
  });

  it('corrupt, replayed and wrong-key messages are refused and nothing is applied twice', async () => {
    const w = await world();
    const a = w.device('aa');
    const b = w.device('bb');
    await chat(a.engine);
    await a.engine.push();
    const [first] = (await w.client.read(w.room, 0)).messages;
    const corrupt = first.bytes.slice();
    corrupt[60] ^= 0xff;
    const other = await Sealer.of(await generateSyncKey(), w.room);
    await w.client.post(w.room, corrupt);
    await w.client.post(w.room, first.bytes);
    await w.client.post(w.room, await other.seal(a.id, 99, new Uint8Array([1, 2, 3])));
    await w.client.post(w.room, new Uint8Array([9, 9, 9]));
    await b.engine.pull();
    expect(b.engine.refused).toBe(4);
    expect(b.store.commits).toBe(1);
    expect(contents(b.store)).toEqual(contents(a.store));
    // A later real change still gets through.
    await writeLocal(a.engine, { memoryPatches: [{ id: 'm1', text: 'moved to Porto', edited: true }] });
    await exchange(a.engine, b.engine);
    expect(b.store.memories.get('m1')?.text).toBe('moved to Porto');
  });

  it('a device killed mid-merge resumes from its saved state and converges', async () => {
    const w = await world();
    const a = w.device('aa');
    let crash = true;
    const store = new InMemoryRepository({
      beforeApply: () => {
        if (crash) throw new Error('killed');
      },
    });
    const b = w.device('bb', { store });
    const saved = b.engine.state();
    await chat(a.engine);
    await a.engine.push();
    await expect(b.engine.pull()).rejects.toThrow('killed');
    expect(store.memories.size).toBe(0);
    // The device restarts from what it had saved before the merge.
    crash = false;
    const again = w.device('bb', { store, state: saved });
    await again.engine.pull();
    expect(contents(store)).toEqual(contents(a.store));
    expect(store.commits).toBe(1);
    // Its saved state after that pull: nothing is taken again.
    const after = w.device('bb', { store, state: again.engine.state() });
    await after.engine.pull();
    expect(store.commits).toBe(1);
  });

  it('a store write that fails once is made at the next pull, not lost and not refused as a replay', async () => {
    const w = await world();
    const a = w.device('aa');
    let fail = 1;
    const store = new InMemoryRepository({
      beforeApply: () => {
        if (fail-- > 0) throw new Error('disk full');
      },
    });
    const b = w.device('bb', { store });
    await chat(a.engine);
    await a.engine.push();
    await expect(b.engine.pull()).rejects.toThrow('disk full');
    expect(b.engine.state().unapplied?.length).toBeGreaterThan(0);
    await b.engine.pull();
    expect(b.engine.refused).toBe(0);
    expect(contents(store)).toEqual(contents(a.store));
    expect(b.engine.state().unapplied).toEqual([]);
  });
});

describe('unpairing and large updates', () => {
  it('a device left out of a rotation stops syncing; the others move to the new room and go on', async () => {
    const w = await world();
    const [laptop, phone, lost] = await Promise.all([generateDevice('Laptop'), generateDevice('Phone'), generateDevice('Lost')]);
    const ring = [laptop.info, phone.info, lost.info];
    const a = w.device('a', { deviceId: laptop.info.id });
    const b = w.device('b', { deviceId: phone.info.id, onRotation: onRotationOf(phone, w.key, ring) });
    const c = w.device('c', { deviceId: lost.info.id, onRotation: onRotationOf(lost, w.key, ring) });
    await chat(a.engine);
    await exchange(a.engine, b.engine, c.engine);
    expect(c.store.memories.size).toBe(4);

    const { key, notice } = await signedRotation(laptop, w.key, ring, [laptop.info, phone.info]);
    await a.engine.rekey(key, notice);
    await exchange(a.engine, b.engine, c.engine);
    expect(b.engine.state().room).toBe(await roomOf(key));
    expect(c.engine.unpaired).toBe(true);
    await expect(c.engine.push()).rejects.toThrow(/unpaired/);

    // Life goes on without the lost device; the old room was closed by the notice: it posts nothing there.
    await writeLocal(a.engine, { memoryPatches: [{ id: 'm1', text: 'moved to Porto', edited: true }] });
    await expect(w.client.post(w.room, await w.sealer.seal(lost.info.id, 1000, new Uint8Array([1, 9, 9])))).rejects.toMatchObject({
      reason: 'room-closed',
    });
    await exchange(a.engine, b.engine, c.engine);
    expect(b.store.memories.get('m1')?.text).toBe('moved to Porto');
    expect(c.store.memories.get('m1')?.text).toBe('moved to Lisbon');
    expect(contents(b.store)).toEqual(contents(a.store));
    expect(b.engine.refused).toBe(0);
    // The phone restarts: its saved state goes with the new key, not the old one.
    const saved = b.engine.state();
    expect(() => w.device('b', { deviceId: phone.info.id, state: saved })).toThrow(/another key/);
    const newRoom = await roomOf(key);
    const resumed = w.device('b', {
      deviceId: phone.info.id,
      store: b.store,
      state: saved,
      room: newRoom,
      sealer: await Sealer.of(key, newRoom),
    });
    await writeLocal(a.engine, { memoryPatches: [{ id: 'm2', text: 'likes climbing', edited: true }] });
    await exchange(a.engine, resumed.engine);
    expect(resumed.engine.refused).toBe(0);
    expect(b.store.memories.get('m2')?.text).toBe('likes climbing');
    // A device paired later, from the new key only, gets everything from the new room.
    const late = new SyncEngine({
      store: new InMemoryRepository(),
      relay: w.client,
      room: await roomOf(key),
      sealer: await Sealer.of(key, await roomOf(key)),
      deviceId: 'd'.repeat(32),
      wipe: async () => undefined,
    });
    await late.pull();
    expect((await late.o.store.listMemories()).find((m) => m.id === 'm1')?.text).toBe('moved to Porto');
  });

  it('an update larger than one message goes in pieces and arrives whole', async () => {
    const w = await world();
    const a = w.device('aa', { pieceBytes: 100 });
    const b = w.device('bb');
    await chat(a.engine);
    await a.engine.push();
    expect((await w.client.read(w.room, 0)).last).toBeGreaterThan(2);
    await b.engine.pull();
    expect(contents(b.store)).toEqual(contents(a.store));
    expect(b.engine.state().partial).toEqual({});
  });
});
