// Helpers of the sync tests that run several devices in one process.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import { keyFromRaw, roomOf } from '../../../src/services/sync/keys';
import { RelayClient } from '../../../src/services/sync/relay-client';
import type { SyncConfig } from '../../../src/services/sync/sync-config';
import { SyncService } from '../../../src/services/sync/sync-service';
import { openTealeafDb, type TealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { readSyncRow } from '../../../src/store/sync-store';
import { freshFactory } from '../store/helpers';

/** Waits on a condition, for as long as it takes (the test's timeout is the safety net). */
export { until } from '../../support/until';

/** The relay has dropped the first messages of the room a paired device (its `db`) syncs in: a compaction happened. */
export async function relayCompacted(db: TealeafDb, relayUrl: string): Promise<boolean> {
  const config = (await readSyncRow(db, 'config')) as SyncConfig;
  const room = await roomOf(await keyFromRaw(config.key.raw, config.key.createdAt));
  return ((await new RelayClient(relayUrl).read(room, 0)).messages[0]?.seq ?? 0) > 1;
}

/**
 * Runs `make` as on its own device: BroadcastChannels made meanwhile are that device's (named
 * `device/<name>`), not shared with the other "devices" this process holds, as tabs would be.
 */
export function onDevice<T>(device: string, make: () => T): T {
  const Channel = globalThis.BroadcastChannel;
  vi.stubGlobal(
    'BroadcastChannel',
    class extends Channel {
      constructor(name: string) {
        super(`${device}/${name}`);
      }
    },
  );
  try {
    return make();
  } finally {
    vi.unstubAllGlobals();
  }
}

/**
 * A laptop and a phone, each a SyncService over its own IndexedDB, and a relay on 127.0.0.1 (not
 * paired yet). What they open goes on `closers`, undone in reverse order.
 */
export async function laptopAndPhone(closers: Array<() => Promise<void> | void>, relayOptions: { waitMs?: number } = {}) {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-devices-')), ...relayOptions });
  closers.push(() => relay.close());
  const laptop = new IdbRepository(await openTealeafDb({ factory: freshFactory() }));
  const phone = new IdbRepository(await openTealeafDb({ factory: freshFactory() }));
  const a = new SyncService(laptop);
  // Two devices, not two tabs: the phone's channels are its own.
  const b = onDevice('phone', () => new SyncService(phone));
  closers.push(() => (laptop.close(), phone.close()));
  closers.push(
    () => a.turnOff(),
    () => b.turnOff(),
  );
  return { relay, laptop, phone, a, b };
}
