// A write made while the sync loop is busy (reading the relay, sending) must not wait for the
// relay's long poll to end: the loop's wake-up is kept until it next waits (SyncService.kick).
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { memory, session } from './records';
import { laptopAndPhone, until } from './devices';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (closers.length) await closers.pop()!();
});

describe('the sync loop hears every write', () => {
  it('a write during a read of the relay goes out at once, not after the long poll (an hour here)', async () => {
    // The relay's long poll lasts longer than the test may run: a write that waited for it never arrives.
    const { relay, laptop, phone, a, b } = await laptopAndPhone(closers, { waitMs: 3_600_000 });

    await laptop.apply({ sessions: [session], memories: [memory('m1', 'one')] });
    await a.turnOn(relay.url, 'laptop');
    await until('the upload', async () => a.status.phase === 'synced' && !a.status.pending);
    await b.join(relay.url, await a.offerCode(), 'phone');
    await until('the first sync', async () => (await phone.getMemory('m1'))?.text === 'one');
    await until('both idle', async () => a.status.phase === 'synced' && b.status.phase === 'synced');

    // The laptop's next read of the relay: the user edits while it is under way.
    const read = RelayClient.prototype.read;
    let editedDuringRead = false;
    vi.spyOn(RelayClient.prototype, 'read').mockImplementation(async function (this: RelayClient, ...args) {
      // The laptop's loop's own client (the phone's has the same address).
      if (this === (a as unknown as { relay: RelayClient }).relay && !editedDuringRead) {
        editedDuringRead = true;
        await laptop.apply({ memoryPatches: [{ id: 'm1', text: 'edited while the loop read', edited: true }] });
      }
      return read.apply(this, args);
    });
    // Something to read: a change from the phone wakes the laptop's loop.
    await phone.apply({ memories: [memory('m2', 'from the phone')] });
    await until('the laptop reads', async () => editedDuringRead);
    await until('the edit on the phone', async () => (await phone.getMemory('m1'))?.text === 'edited while the loop read');
    // What the laptop read is written after the read returns: awaited, not expected at once.
    await until("the phone's memory on the laptop", async () => (await laptop.getMemory('m2'))?.text === 'from the phone');
    expect((await laptop.getMemory('m1'))?.text).toBe('edited while the loop read');
  });
});
