// A device another one unpaired says so, in words that name the removal, and keeps saying so after
// its tab is opened again (before, a reload showed it "Synced" in a room no other device reads).
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { syncWords } from '../../../src/services/sync/sync-status';
import { memory, session } from './records';
import { until } from './devices';
import { device, relayFor, reopen, settled } from './faults';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

describe('a removed device', () => {
  it('stays unpaired after its tab is opened again, and says what to do', async () => {
    const relay = await relayFor(closers);
    const laptop = await device('laptop');
    const phone = await device('phone');
    for (const d of [laptop, phone]) closers.push(() => (d.sync.stop(), d.repo.close()));
    await laptop.repo.apply({ sessions: [session], memories: [memory('m1', 'one')] });
    await laptop.sync.turnOn(relay.url, 'Laptop');
    await settled('the upload', laptop);
    await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Phone');
    await until('the first sync', async () => (await phone.repo.getMemory('m1')) !== undefined);
    await settled('both idle', laptop, phone);

    await laptop.sync.unpair(phone.sync.status.selfId);
    await until('the phone told', () => phone.sync.status.phase === 'unpaired');
    const again = await reopen(phone);
    closers.push(() => (again.sync.stop(), again.repo.close()));
    // Either it says it was removed, or it settles as if it still synced.
    await until(
      'the reopened phone settles',
      () => again.sync.status.phase === 'unpaired' || (again.sync.idle && again.sync.status.phase === 'synced'),
    );
    expect(again.sync.status.phase).toBe('unpaired');
    expect(syncWords(again.sync.status).detail).toMatch(/Turn sync off to pair it again/);
    expect(await again.repo.getMemory('m1')).toBeDefined();
  });
});
