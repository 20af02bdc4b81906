// Changes are not lost around a key rotation. The rotating device reads the
// old room to its end before it uploads, and again after its notice; a device moving to a new room
// sends there whatever the new room lacks (it no longer counts the old room's messages as sent).
// Two devices rotating at about the same time end in one room: the first notice in the old room's
// order wins, and a device whose unpairing lost is made again in the winner's room.
import 'fake-indexeddb/auto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import type { Bytes } from '../../../src/services/sync/bytes';
import { Sealer } from '../../../src/services/sync/envelope';
import { generateDevice, generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { SyncEngine, type SyncEngineOptions } from '../../../src/services/sync/engine';
import { writeLocal } from './local-write';
import type { SyncConfig } from '../../../src/services/sync/sync-config';
import { readSyncRow } from '../../../src/store/sync-store';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { memory, session } from './records';
import { until } from './devices';
import { type Device, device, relayFor, settled } from './faults';
import { onRotationOf, signedRotation } from './ring-helpers';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** Runs `before` once, just before the first post to `room` (another device's post landing first). */
class Interleaved extends RelayClient {
  before?: { room: string; run: () => Promise<unknown> };
  override async post(room: string, bytes: Bytes, signal?: AbortSignal, compact?: number): Promise<number> {
    const b = this.before;
    if (b && b.room === room) {
      this.before = undefined;
      await b.run();
    }
    return super.post(room, bytes, signal, compact);
  }
}

describe('a key rotation loses nothing', () => {
  it('a change posted just before the notice reaches the new room, and the changes after it are not stuck', async () => {
    const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-rotation-')) });
    closers.push(() => relay.close());
    const key = await generateSyncKey();
    const room = await roomOf(key);
    const sealer = await Sealer.of(key, room);
    const [laptop, phone] = await Promise.all([generateDevice('Laptop'), generateDevice('Phone')]);
    const ring = [laptop.info, phone.info];
    const make = (id: string, relayClient: RelayClient, opts: Partial<SyncEngineOptions> = {}) => {
      const store = new InMemoryRepository();
      return {
        store,
        engine: new SyncEngine({ store, relay: relayClient, room, sealer, deviceId: id, wipe: async () => undefined, ...opts }),
      };
    };
    const aRelay = new Interleaved(relay.url);
    const a = make(laptop.info.id, aRelay);
    const b = make(phone.info.id, new RelayClient(relay.url), { onRotation: onRotationOf(phone, key, ring) });
    await writeLocal(a.engine, { sessions: [session], memories: [memory('m1', 'before')] });
    await a.engine.push();
    await b.engine.pull();

    // The phone's change lands in the old room after the laptop read it, just before its notice.
    await writeLocal(b.engine, { memories: [memory('c', 'posted just before the notice')] });
    const { key: next, notice } = await signedRotation(laptop, key, ring, ring);
    aRelay.before = { room, run: () => b.engine.push() };
    await a.engine.rekey(next, notice);
    const newRoom = await roomOf(next);
    expect(a.engine.state().room).toBe(newRoom);
    // The phone moves, then sends there what the new room lacks; a later change of its own follows.
    await b.engine.pull();
    expect(b.engine.state().room).toBe(newRoom);
    await writeLocal(b.engine, { memories: [memory('d', 'after the new key')] });
    await b.engine.push();
    await a.engine.pull();
    expect(a.store.memories.has('c')).toBe(true);
    expect(a.store.memories.has('d')).toBe(true);
    // A device that only ever read the new room has both (nothing waits in Yjs for a lost change).
    const late = new SyncEngine({
      store: new InMemoryRepository(),
      relay: new RelayClient(relay.url),
      room: newRoom,
      sealer: await Sealer.of(next, newRoom),
      deviceId: 'd'.repeat(32),
      wipe: async () => undefined,
    });
    await late.pull();
    expect((await late.o.store.listMemories()).map((m) => m.id).sort()).toEqual(['c', 'd', 'm1']);
    expect(late.records.doc.store.pendingStructs).toBeNull();
  });
});

async function three() {
  const relay = await relayFor(closers);
  const [laptop, phone, tablet] = [await device('laptop'), await device('phone'), await device('tablet')];
  for (const d of [laptop, phone, tablet]) closers.push(() => (d.sync.stop(), d.repo.close()));
  await laptop.repo.apply({ sessions: [session], memories: [memory('m1', 'one')] });
  await laptop.sync.turnOn(relay.url, 'Laptop');
  await settled('the upload', laptop);
  await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Phone');
  await tablet.sync.join(relay.url, await laptop.sync.offerCode(), 'Tablet');
  await until('every list', () => [laptop, phone, tablet].every((d) => d.sync.status.devices.length === 3));
  await settled('all idle', laptop, phone, tablet);
  return { relay, laptop, phone, tablet };
}

const keyOf = async (d: Device) => Buffer.from(((await readSyncRow(d.repo.db, 'config')) as SyncConfig).key.raw).toString('hex');

describe('two devices rotating at once', () => {
  it('both “Make a new key” at once: every device ends in one room, and changes flow', async () => {
    const { laptop, phone, tablet } = await three();
    await Promise.all([laptop.sync.unpair(), phone.sync.unpair()]);
    await until('one key everywhere', async () => new Set(await Promise.all([laptop, phone, tablet].map(keyOf))).size === 1);
    await settled('all idle', laptop, phone, tablet);
    await tablet.repo.apply({ memories: [memory('m2', 'after both new keys')] });
    for (const d of [laptop, phone]) await until(`${d.name} gets it`, async () => (await d.repo.getMemory('m2')) !== undefined);
  });

  it('the laptop unpairs the tablet while the phone makes a new key: the tablet ends unpaired all the same', async () => {
    const { laptop, phone, tablet } = await three();
    const tabletId = tablet.sync.status.selfId;
    await Promise.all([laptop.sync.unpair(tabletId), phone.sync.unpair()]);
    await until('the tablet is unpaired', () => tablet.sync.status.phase === 'unpaired');
    await until('one key for the two', async () => (await keyOf(laptop)) === (await keyOf(phone)));
    expect(laptop.sync.status.devices.map((d) => d.name).sort()).toEqual(['Laptop', 'Phone']);
    await until('the phone’s list too', () => phone.sync.status.devices.length === 2);
    await laptop.repo.apply({ memories: [memory('m3', 'not for the tablet')] });
    await until('the phone gets it', async () => (await phone.repo.getMemory('m3')) !== undefined);
    // The tablet's loop ended when it was told (phase unpaired): nothing reaches it after that.
    expect(await tablet.repo.getMemory('m3')).toBeUndefined();
  });
});
