// Delete-all from a tab that does not run the sync loop (another tab holds it): the paired devices
// must empty too, and the loop tab must not bring the records back (SyncService.deletedAll).
import 'fake-indexeddb/auto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import { openTealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { readSyncRows } from '../../../src/store/sync-store';
import { SyncEngine } from '../../../src/services/sync/engine';
import { writeLocal } from './local-write';
import { Sealer } from '../../../src/services/sync/envelope';
import { keyFromRaw, roomOf } from '../../../src/services/sync/keys';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { type SyncConfig, SyncService } from '../../../src/services/sync/sync-service';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { freshFactory } from '../store/helpers';
import { memory, session } from './records';
import { until } from './devices';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

describe('delete-all from a tab without the sync loop', () => {
  it('reaches the loop tab: the paired device empties, and nothing comes back on this device', async () => {
    // The long poll lasts longer than the test may run: a write that waited for it would never arrive.
    const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-reset-')), waitMs: 3_600_000 });
    closers.push(() => relay.close());
    const factory = freshFactory();
    const loopRepo = new IdbRepository(await openTealeafDb({ factory }));
    const otherRepo = new IdbRepository(await openTealeafDb({ factory }));
    const loopTab = new SyncService(loopRepo);
    const otherTab = new SyncService(otherRepo);
    closers.push(() => (loopRepo.close(), otherRepo.close()));
    closers.push(() => loopTab.turnOff());

    await loopRepo.apply({ sessions: [session], memories: [memory('m1', 'one'), memory('m2', 'two')] });
    await loopTab.turnOn(relay.url, 'laptop');
    await until('the first upload', async () => loopTab.status.phase === 'synced');
    // The sequence number of each post is kept before the post (crash.test.ts has the engine's side).
    expect((await readSyncRows(loopRepo.db)).get('seq')).toBeGreaterThan(0);

    // The paired device: an engine over the same key.
    const config = (await readSyncRows(loopRepo.db)).get('config') as SyncConfig;
    const key = await keyFromRaw(config.key.raw, config.key.createdAt);
    const room = await roomOf(key);
    const phone = new InMemoryRepository();
    const wipePhone = async () => {
      for (const m of [phone.sessions, phone.turns, phone.memories, phone.edges, phone.segments, phone.tombstones]) m.clear();
    };
    const b = new SyncEngine({
      store: phone,
      relay: new RelayClient(relay.url),
      room,
      sealer: await Sealer.of(key, room),
      deviceId: 'b'.repeat(32),
      wipe: wipePhone,
    });
    await b.pull();
    expect([...phone.memories.keys()].sort()).toEqual(['m1', 'm2']);

    // A write in the other tab reaches the phone at once, not when the loop's long poll ends.
    await otherRepo.apply({ memoryPatches: [{ id: 'm2', text: 'edited in the other tab', edited: true }] });
    await until(
      'the other tab’s edit on the phone',
      async () => (await b.pull(), phone.memories.get('m2')?.text === 'edited in the other tab'),
    );

    // Delete-all in the other tab, as Tealeaf.deleteAllData does it.
    await otherRepo.wipeAll({ syncReset: true });
    await otherTab.deletedAll();

    await until('the phone to empty', async () => (await b.pull(), phone.memories.size === 0 && phone.sessions.size === 0));
    // Sync goes on in the new epoch: the phone's next write arrives, and nothing old with it.
    await writeLocal(b, {
      memories: [memory('m9', 'after the delete-all')].map((m) => ({ ...m, sessionId: 's9' })),
      sessions: [{ ...session, id: 's9' }],
    });
    await b.push();
    loopTab.kick();
    await until('the phone’s new write on this device', async () => (await loopRepo.getMemory('m9')) !== undefined);
    expect((await loopRepo.listMemories()).map((m) => m.id)).toEqual(['m9']);
    expect((await readSyncRows(loopRepo.db)).has('reset')).toBe(false);
  });
});
