// A forget wins every race (docs/SYNC.md, "The rules across devices"): a line the user forgot on
// one device stays forgotten on every device, whatever another device wrote to the same turn
// meanwhile (a reply it finished streaming offline, a write from a store that had not heard of the
// forget yet), whichever device's record Yjs keeps, in whatever order the updates arrive, and after
// a reload or a compaction. Its undo wins the same way. Devices here are engines over in-memory
// stores syncing through the relay on 127.0.0.1, written as the app writes: a local write goes to
// the store, then into the document (the out-box); a remote one goes through `apply` as another
// device's records (`remote`), as SyncService does.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as Y from 'yjs';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import type { ChangeSet } from '../../../src/ports';
import type { Memory, Session, Turn } from '../../../src/memory/types';
import { replyDialogue } from '../../../src/services/chat/reply-prompt';
import { Sealer } from '../../../src/services/sync/envelope';
import { generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { RecordDoc } from '../../../src/services/sync/record-doc';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { SyncEngine, type SyncState } from '../../../src/services/sync/engine';
import { InMemoryRepository } from '../../support/in-memory-repository';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const T = 1_700_000_000_000;
const session: Session = { id: 's1', title: 's1', startedAt: T, lastActivityAt: T, status: 'open' };
const said: Turn = { id: 's1/t0', sessionId: 's1', index: 0, role: 'user', text: 'I moved to Lisbon', time: T, status: 'complete' };
const streaming: Turn = {
  id: 's1/t1',
  sessionId: 's1',
  index: 1,
  role: 'assistant',
  text: 'Lisbon is',
  time: T + 1,
  status: 'streaming',
};
const finished: Turn = { ...streaming, text: 'Lisbon is lovely in spring.', status: 'complete' };
const fact: Memory = {
  id: 'm1',
  kind: 'event',
  text: 'moved to Lisbon',
  time: T,
  sourceTurnIds: [said.id],
  sessionId: 's1',
  edited: false,
  createdAt: T,
};

/** The forget of m1 as Forgetting.forget writes it: the memory deleted, both lines marked. */
const forget: ChangeSet = {
  deleteMemories: ['m1'],
  tombstones: [{ kind: 'memory', id: 'm1', deletedAt: T + 5 }],
  turnPatches: [said.id, streaming.id].map((id) => ({ id, forget: { at: T + 5, by: ['m1'] } })),
};
/** Its undo. */
const undo: ChangeSet = {
  memories: [fact],
  deleteTombstones: [['memory', 'm1']],
  turnPatches: [said.id, streaming.id].map((id) => ({ id, unforget: ['m1'] })),
};

interface Device {
  name: string;
  store: InMemoryRepository;
  engine: SyncEngine;
  /** A local write as the app makes it: the store, then the document (the out-box drained). */
  write(change: ChangeSet): Promise<void>;
}

async function world() {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-forget-')) });
  closers.push(() => relay.close());
  const key = await generateSyncKey();
  const room = await roomOf(key);
  const sealer = await Sealer.of(key, room);
  const client = new RelayClient(relay.url);
  /** `clientId`: the Yjs client id, which decides whose record Yjs keeps when two write one key. */
  const device = (name: string, clientId: number, state?: SyncState, store = new InMemoryRepository()): Device => {
    // Remote writes take another device's records as they are, as SyncService's store does.
    const remote = Object.create(store) as InMemoryRepository;
    remote.apply = (change: ChangeSet) => store.apply(change, { remote: true });
    const engine = new SyncEngine({
      store: remote,
      relay: client,
      room,
      sealer,
      deviceId: name.padEnd(32, '0'),
      wipe: () => Promise.resolve(),
      state,
    });
    engine.records.doc.clientID = clientId;
    const write = async (change: ChangeSet) => {
      await engine.recordLocal(await store.apply(change));
    };
    return { name, store, engine, write };
  };
  return { device };
}

/** Three devices holding the chat: the reply still streaming, the fact memorised. */
async function threeDevices(winner: 'A' | 'B') {
  const w = await world();
  // Yjs keeps the record of the higher client id: `winner` decides whose whole turn stays.
  const a = w.device('a', winner === 'A' ? 20 : 10);
  const b = w.device('b', winner === 'A' ? 10 : 20);
  const c = w.device('c', 30);
  await a.write({ sessions: [session], turns: [said, streaming], memories: [fact] });
  await a.engine.push();
  for (const d of [b, c]) await d.engine.pull();
  expect(b.store.turns.get(streaming.id)?.text).toBe('Lisbon is');
  return { w, a, b, c };
}

async function everyonePulls(...devices: Device[]) {
  for (let round = 0; round < 2; round++) {
    for (const d of devices) await d.engine.push();
    for (const d of devices) await d.engine.pull();
  }
}

/** The lines forgotten on this device, and what a reply's prompt would hold of the chat. */
async function seen(d: Device) {
  const turns = await d.store.listTurns('s1');
  return {
    forgotten: turns.filter((t) => t.forgotten?.by.includes('m1')).map((t) => t.id),
    prompt: replyDialogue({ history: turns }).map((x) => x.text),
  };
}

const FORGOTTEN = { forgotten: [said.id, streaming.id], prompt: [] };

describe('a forget wins every race', () => {
  for (const winner of ['A', 'B'] as const) {
    for (const first of ['A', 'B'] as const) {
      it(`A forgets while B finishes the reply offline: Yjs keeps ${winner}'s turn, ${first}'s update reaches the relay first`, async () => {
        const { a, b, c } = await threeDevices(winner);
        await a.write(forget);
        await b.write({ turns: [finished] });
        // The third device takes each update as it reaches the relay, in that order.
        const order = first === 'A' ? [a, b] : [b, a];
        for (const d of order) {
          await d.engine.push();
          await c.engine.pull();
        }
        await everyonePulls(a, b, c);
        for (const d of [a, b, c]) expect({ device: d.name, ...(await seen(d)) }).toEqual({ device: d.name, ...FORGOTTEN });
      });
    }
  }

  it('a write from a store that had not heard of the forget yet, recorded after the forget merged, does not clear it', async () => {
    const { a, b, c } = await threeDevices('A');
    await a.write(forget);
    await a.engine.push();
    // B's reply is written to its store before the forget arrives; its out-box is drained after.
    const applied = await b.store.apply({ turns: [finished] });
    await b.engine.pull();
    await b.engine.recordLocal(applied);
    await everyonePulls(a, b, c);
    for (const d of [a, b, c]) expect({ device: d.name, ...(await seen(d)) }).toEqual({ device: d.name, ...FORGOTTEN });
  });

  it('stays forgotten after a reload from the saved state and on a device that reads a compaction snapshot', async () => {
    const { w, a, b, c } = await threeDevices('B');
    await a.write(forget);
    await b.write({ turns: [finished] });
    await everyonePulls(a, b, c);
    // B's tab reloads into an empty store: everything is written again from its saved document.
    const reloaded = w.device('b', 21, b.engine.state());
    await reloaded.engine.catchUp(reloaded.engine.records.everything());
    expect(await seen(reloaded)).toEqual(FORGOTTEN);
    // A compacts the relay; a device paired later gets the snapshot, not the history.
    expect(await a.engine.compact()).toBe(true);
    const later = w.device('d', 40);
    await later.engine.pull();
    expect(await seen(later)).toEqual(FORGOTTEN);
  });

  it('its undo wins the same way, over a write of the turn that still carries the mark', async () => {
    const { a, b, c } = await threeDevices('B');
    await a.write(forget);
    await everyonePulls(a, b, c);
    expect(await seen(b)).toEqual(FORGOTTEN);
    await a.write(undo);
    // B, offline, writes the whole turn from its store, where the line is still forgotten.
    await b.write({ turns: [finished] });
    await everyonePulls(a, b, c);
    for (const d of [a, b, c]) {
      const { forgotten, prompt } = await seen(d);
      expect({ device: d.name, forgotten, prompt: prompt.length }).toEqual({ device: d.name, forgotten: [], prompt: 2 });
    }
  });

  it('two devices forgetting one line for different memories keep both marks; undoing one leaves the other', async () => {
    const { a, b, c } = await threeDevices('B');
    await a.write(forget);
    await b.write({ turnPatches: [{ id: streaming.id, forget: { at: T + 6, by: ['m2'] } }] });
    await everyonePulls(a, b, c);
    for (const d of [a, b, c])
      expect([d.name, d.store.turns.get(streaming.id)?.forgotten]).toEqual([d.name, { at: T + 5, by: ['m1', 'm2'] }]);
    await a.write(undo);
    await everyonePulls(a, b, c);
    for (const d of [a, b, c]) expect([d.name, d.store.turns.get(streaming.id)?.forgotten]).toEqual([d.name, { at: T + 5, by: ['m2'] }]);
  });

  it('a mark entry out of shape or filed under another key counts for nothing', async () => {
    const { a, b, c } = await threeDevices('A');
    // Another device (buggy, or a newer version) writes entries this one cannot read.
    b.engine.records.doc.transact(() => {
      const marks = b.engine.records.marks() as Y.Map<unknown>;
      marks.set(JSON.stringify([streaming.id, 'm9']), { turn: streaming.id, by: 'm8', at: T });
      marks.set(JSON.stringify([said.id, 'm9']), { turn: said.id, by: 'm9', at: 'yesterday' });
      marks.set('not json', { turn: said.id, by: 'm9', at: T });
    });
    await b.write({ turns: [finished] });
    await everyonePulls(a, b, c);
    for (const d of [a, b, c]) expect([d.name, (await seen(d)).forgotten]).toEqual([d.name, []]);
  });

  it('a document of the previous version (marks only inside turn records) still loads and merges', async () => {
    // What a device on the previous version wrote: the mark inside the turn's record, nothing else.
    const old = new Y.Doc();
    old.transact(() => {
      old.getMap('e0/sessions').set(session.id, session);
      old.getMap('e0/turns').set(said.id, { ...said, forgotten: { at: T + 5, by: ['m1'] } });
      old.getMap('e0/turns').set(finished.id, finished);
    });
    const doc = new Y.Doc();
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(old));
    const records = new RecordDoc(doc);
    const store = new InMemoryRepository();
    await store.apply(await records.changeFor(records.everything(), store), { remote: true });
    expect((await store.listTurns('s1')).map((t) => [t.id, t.forgotten?.by])).toEqual([
      [said.id, ['m1']],
      [finished.id, undefined],
    ]);
    // A forget made on this version still writes the mark into the record, where the previous version reads it.
    const w = await world();
    const a = w.device('a', 10);
    await a.write({ sessions: [session], turns: [said, streaming], memories: [fact] });
    await a.write(forget);
    expect((a.engine.records.map('turns').get(streaming.id) as Turn).forgotten?.by).toEqual(['m1']);
  });
});
