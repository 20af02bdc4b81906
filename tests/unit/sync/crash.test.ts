// A tab killed after the relay took its message but before the engine's state was saved: the
// restarted device must not number its next message the same, or every other device refuses that
// message as a replay and the change never reaches them (SYNC.md, "Crash safety").
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import type { Memory } from '../../../src/memory/types';
import type { Bytes } from '../../../src/services/sync/bytes';
import { Sealer } from '../../../src/services/sync/envelope';
import { generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { SyncEngine, type SyncState } from '../../../src/services/sync/engine';
import { writeLocal } from './local-write';
import { InMemoryRepository } from '../../support/in-memory-repository';

const T = 1_700_000_000_000;
const memory = (id: string, text: string): Memory => ({
  id,
  kind: 'event',
  text,
  time: T,
  sourceTurnIds: [],
  sessionId: 's0',
  edited: false,
  createdAt: T,
});

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** The relay takes the post, then the tab dies before anything after it runs. */
class DyingRelay extends RelayClient {
  dieAfterPost = false;
  override async post(room: string, bytes: Bytes): Promise<number> {
    const at = await super.post(room, bytes);
    if (this.dieAfterPost) throw new Error('tab killed');
    return at;
  }
}

async function setup() {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-crash-')) });
  closers.push(() => relay.close());
  const key = await generateSyncKey();
  const room = await roomOf(key);
  const sealer = await Sealer.of(key, room);
  const dying = new DyingRelay(relay.url);
  const plain = new RelayClient(relay.url);
  // What device A keeps on disk: its state row and its reserved sequence number (as the app's rows).
  const disk: { state?: SyncState; reserved: number } = { reserved: 0 };
  const storeA = new InMemoryRepository();
  const startA = () =>
    new SyncEngine({
      store: storeA,
      relay: dying,
      room,
      sealer,
      deviceId: 'a'.repeat(32),
      wipe: async () => undefined,
      state: disk.state ? { ...disk.state, seq: Math.max(disk.state.seq, disk.reserved) } : undefined,
      reserve: async (seq) => void (disk.reserved = seq),
    });
  const storeB = new InMemoryRepository();
  const b = new SyncEngine({ store: storeB, relay: plain, room, sealer, deviceId: 'b'.repeat(32), wipe: async () => undefined });
  return { dying, disk, storeA, startA, storeB, b };
}

describe('a device killed between the relay taking a message and saving its state', () => {
  it('pushing first after the restart: the next change reaches the other device', async () => {
    const { dying, disk, startA, storeB, b } = await setup();
    let a = startA();
    await writeLocal(a, { memories: [memory('m1', 'first')] });
    await a.push();
    disk.state = a.state();

    await writeLocal(a, { memories: [memory('m2', 'taken by the relay, then the tab died')] });
    dying.dieAfterPost = true;
    await expect(a.push()).rejects.toThrow('tab killed');
    // The state is not saved after that push: the restart begins from the state before it.
    dying.dieAfterPost = false;
    a = startA();
    await writeLocal(a, { memories: [memory('m3', 'after the restart')] });
    await a.push();

    await b.pull();
    expect([...storeB.memories.keys()].sort()).toEqual(['m1', 'm2', 'm3']);
    expect(b.refused).toBe(0);
  });

  it('without a reserved number, reading its own message on the relay moves the count past it', async () => {
    const { dying, disk, startA, storeB, b } = await setup();
    let a = startA();
    await writeLocal(a, { memories: [memory('m1', 'first')] });
    await a.push();
    disk.state = a.state();
    await writeLocal(a, { memories: [memory('m2', 'taken, then the tab died')] });
    dying.dieAfterPost = true;
    await expect(a.push()).rejects.toThrow('tab killed');
    dying.dieAfterPost = false;
    // The reserved number was lost too (a state from before the reserve rule): the loop pulls first.
    disk.reserved = 0;
    a = startA();
    await a.pull();
    await writeLocal(a, { memories: [memory('m3', 'after the restart')] });
    await a.push();

    await b.pull();
    expect([...storeB.memories.keys()].sort()).toEqual(['m1', 'm2', 'm3']);
    expect(b.refused).toBe(0);
  });
});
