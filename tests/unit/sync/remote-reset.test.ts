// Another device deleted everything: this device asks its user (SyncService.askReset). "Delete here
// too" empties it, including what it wrote while the question was open; "Keep" sends its data back
// to every device. Until the answer nothing is wiped, and a restart asks again.
import 'fake-indexeddb/auto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import type { IDBFactory } from 'fake-indexeddb';
import { openTealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { readSyncRowsByPrefix } from '../../../src/store/sync-store';
import { SyncService } from '../../../src/services/sync/sync-service';
import { syncWords } from '../../../src/services/sync/sync-status';
import { freshFactory } from '../store/helpers';
import { memory, session } from './records';
import { onDevice, relayCompacted, until } from './devices';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.unstubAllGlobals();
  while (closers.length) await closers.pop()!();
});

/** A sync service as on its own device: its channels are its own (one process holds every device here). */
function serviceOn(repo: IdbRepository, device: string): SyncService {
  return onDevice(device, () => new SyncService(repo));
}

async function pair() {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-remote-reset-')) });
  closers.push(() => relay.close());
  const phoneFactory: IDBFactory = freshFactory();
  const laptop = new IdbRepository(await openTealeafDb({ factory: freshFactory() }));
  const phone = new IdbRepository(await openTealeafDb({ factory: phoneFactory }));
  const a = serviceOn(laptop, 'laptop');
  const b = serviceOn(phone, 'phone');
  closers.push(() => (laptop.close(), phone.close()));
  closers.push(
    () => a.turnOff(),
    () => b.turnOff(),
  );
  await laptop.apply({ sessions: [session], memories: [memory('m1', 'one'), memory('m2', 'two')] });
  await a.turnOn(relay.url, 'Laptop');
  await until('the upload', () => a.status.phase === 'synced' && !a.status.pending);
  await b.join(relay.url, await a.offerCode(), 'Phone');
  await until('the first sync', async () => (await phone.listMemories()).length === 2);
  await until('both idle', () => a.status.phase === 'synced' && b.status.phase === 'synced');
  const deleteAllOnLaptop = async () => {
    await laptop.wipeAll({ syncReset: true });
    await a.deletedAll();
  };
  return { relay, laptop, phone, phoneFactory, a, b, deleteAllOnLaptop };
}

describe('another device deleted everything', () => {
  it('the phone asks, keeps its data until answered, and “Delete here too” empties it with what it wrote meanwhile', async () => {
    const { laptop, phone, b, deleteAllOnLaptop } = await pair();
    await deleteAllOnLaptop();
    await until('the question', () => b.status.phase === 'deleted-elsewhere');
    expect(b.status.deletedBy?.name).toBe('Laptop');
    expect(syncWords(b.status).headline).toBe('Laptop deleted all its data');
    expect((await phone.listMemories()).length).toBe(2);
    // Written while the question is open: it waits in the out-box.
    await phone.apply({ memories: [memory('m3', 'written while asked')] });
    expect((await readSyncRowsByPrefix(phone.db, 'out:')).length).toBe(1);

    b.answerReset('wipe');
    await until('the phone empties', async () => (await phone.countAll()).memories === 0 && b.status.phase === 'synced');
    expect(await readSyncRowsByPrefix(phone.db, 'out:')).toEqual([]);
    expect((await phone.countAll()).sessions).toBe(0);
    // Nothing of the phone's comes back to the laptop, and the two go on syncing.
    await phone.apply({ sessions: [{ ...session, id: 's2' }], memories: [{ ...memory('m4', 'after'), sessionId: 's2' }] });
    await until('the new write on the laptop', async () => (await laptop.getMemory('m4')) !== undefined);
    expect((await laptop.listMemories()).map((m) => m.id)).toEqual(['m4']);
  });

  it('“Keep this device’s data” sends it back to the laptop, what was written while asked included', async () => {
    const { laptop, phone, b, deleteAllOnLaptop } = await pair();
    await deleteAllOnLaptop();
    await until('the question', () => b.status.phase === 'deleted-elsewhere');
    await phone.apply({ memories: [memory('m3', 'written while asked')] });
    b.answerReset('keep');
    await until('the laptop gets the phone’s data', async () => (await laptop.listMemories()).length === 3);
    expect((await phone.listMemories()).map((m) => m.id).sort()).toEqual(['m1', 'm2', 'm3']);
    expect((await laptop.listMemories()).map((m) => m.id).sort()).toEqual(['m1', 'm2', 'm3']);
  });

  it('a phone closed before answering asks again when it starts; turning sync off wipes nothing', async () => {
    const { relay, laptop, phone, phoneFactory, b, deleteAllOnLaptop } = await pair();
    await deleteAllOnLaptop();
    await until('the question', () => b.status.phase === 'deleted-elsewhere');
    // The laptop compacts the relay after its delete-all; the new tab starts once it has (a read
    // while the file store rewrites a room is another matter: tests/unit/sync/relay-compaction.test.ts).
    await until('the relay compacted', () => relayCompacted(laptop.db, relay.url));
    // The tab closes; a new one opens on the same database.
    const reopened = new IdbRepository(await openTealeafDb({ factory: phoneFactory }));
    closers.push(() => reopened.close());
    const again = serviceOn(reopened, 'phone2');
    await again.start();
    await until('the question again', () => again.status.phase === 'deleted-elsewhere');
    expect((await reopened.listMemories()).length).toBe(2);
    await again.turnOff();
    expect(syncWords(again.status).headline).toBe('Sync is off');
    expect((await phone.listMemories()).length).toBe(2);
  });

  it('a device that turns sync off leaves the others’ device lists', async () => {
    const { a, b } = await pair();
    expect(b.status.devices.map((d) => d.name).sort()).toEqual(['Laptop', 'Phone']);
    await a.turnOff();
    await until('the phone hears', () => b.status.devices.length === 1);
    expect(b.status.devices.map((d) => d.name)).toEqual(['Phone']);
    expect(syncWords(b.status).detail).toMatch(/no other device paired yet/);
  });
});
