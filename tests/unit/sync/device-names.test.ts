// Two devices are never both "This browser". A device renames itself, and the
// new name reaches every paired device, signed; no device can rename another.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { readSyncRow } from '../../../src/store/sync-store';
import { keyIdOf, takeStatement, type SyncConfig } from '../../../src/services/sync/sync-config';
import { signStatement } from '../../../src/services/sync/ring';
import { memory, session } from './records';
import { until } from './devices';
import { device, relayFor, settled } from './faults';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

describe('device names', () => {
  it('a rename reaches the other device and is kept in both stores', async () => {
    const relay = await relayFor(closers);
    const laptop = await device('laptop');
    const phone = await device('phone');
    for (const d of [laptop, phone]) closers.push(() => (d.sync.stop(), d.repo.close()));
    await laptop.repo.apply({ sessions: [session], memories: [memory('m1', 'one')] });
    await laptop.sync.turnOn(relay.url, 'Chrome on Linux');
    await settled('the upload', laptop);
    await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Safari on iPhone');
    await until('the first sync', async () => (await phone.repo.getMemory('m1')) !== undefined);
    await settled('both idle', laptop, phone);

    await laptop.sync.rename('  Work laptop  ');
    const self = laptop.sync.status.selfId;
    expect(laptop.sync.status.devices.find((d) => d.id === self)?.name).toBe('Work laptop');
    await until('the phone hears it', () => phone.sync.status.devices.some((d) => d.name === 'Work laptop'));
    // Shown as soon as the statement is taken, kept when the phone saves after its read: awaited
    // in its store (its status said "synced" before the rename too, so it marks no save).
    const storedName = async () => ((await readSyncRow(phone.repo.db, 'config')) as SyncConfig).devices.find((d) => d.id === self)?.name;
    await until('the phone keeps it', async () => (await storedName()) === 'Work laptop');
    await settled('both idle', laptop, phone);
    expect(await storedName()).toBe('Work laptop');
    const own = (await readSyncRow(laptop.repo.db, 'config')) as SyncConfig;
    expect(own.device.info.name).toBe('Work laptop');
  });

  it('two devices of the same kind are told apart: the device showing the code numbers the new one', async () => {
    const relay = await relayFor(closers);
    const laptop = await device('same-a');
    const phone = await device('same-b');
    for (const d of [laptop, phone]) closers.push(() => (d.sync.stop(), d.repo.close()));
    await laptop.sync.turnOn(relay.url, 'Chromium on Linux');
    await settled('the upload', laptop);
    await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Chromium on Linux');
    await until('the laptop lists the phone', () => laptop.sync.status.devices.length === 2);
    await settled('both idle', laptop, phone);
    const names = (d: typeof laptop) => d.sync.status.devices.map((x) => x.name);
    expect(names(laptop)).toEqual(['Chromium on Linux', 'Chromium on Linux 2']);
    expect(names(phone)).toEqual(['Chromium on Linux', 'Chromium on Linux 2']);
    // The phone's own name is the one the list gives it (it is what it signs a rename against).
    expect(((await readSyncRow(phone.repo.db, 'config')) as SyncConfig).device.info.name).toBe('Chromium on Linux 2');
  });

  it('two devices paired at the same moment through two devices still show two names, the same on every device', async () => {
    const relay = await relayFor(closers);
    const [laptop, phone, tablet, watch] = await Promise.all(['race-a', 'race-b', 'race-c', 'race-d'].map((n) => device(n)));
    for (const d of [laptop, phone, tablet, watch]) closers.push(() => (d.sync.stop(), d.repo.close()));
    await laptop.sync.turnOn(relay.url, 'Laptop');
    await settled('the upload', laptop);
    await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Phone');
    await until('the laptop lists the phone', () => laptop.sync.status.devices.length === 2);
    await settled('both idle', laptop, phone);
    // Each list knows neither newcomer when its code is typed: both would be plain "Chromium on Linux".
    const [one, two] = await Promise.all([laptop.sync.offerCode(), phone.sync.offerCode()]);
    await Promise.all([tablet.sync.join(relay.url, one, 'Chromium on Linux'), watch.sync.join(relay.url, two, 'Chromium on Linux')]);
    const all = [laptop, phone, tablet, watch];
    await until('every device lists four', () => all.every((d) => d.sync.status.devices.length === 4));
    await settled('all idle', ...all);
    const shown = all.map((d) => d.sync.status.devices.map((x) => x.name).sort());
    expect(new Set(shown[0]).size).toBe(4);
    for (const s of shown) expect(s).toEqual(shown[0]);
    expect(shown[0]).toEqual(['Chromium on Linux', 'Chromium on Linux 2', 'Laptop', 'Phone']);
  });

  it('a statement renames only the device that signed it, and a name past the limit is refused', async () => {
    const relay = await relayFor(closers);
    const laptop = await device('laptop2');
    closers.push(() => (laptop.sync.stop(), laptop.repo.close()));
    await laptop.sync.turnOn(relay.url, 'Laptop');
    await settled('the upload', laptop);
    const config = (await readSyncRow(laptop.repo.db, 'config')) as SyncConfig;
    const keyId = await keyIdOf(config);
    const by = config.device.info.id;
    const ok = await takeStatement(config, await signStatement(config.device, { type: 'renamed', by, keyId, at: 1, name: 'New' }), 'ring');
    expect('config' in ok && ok.config.devices.find((d) => d.id === by)?.name).toBe('New');
    const long = await takeStatement(
      config,
      await signStatement(config.device, { type: 'renamed', by, keyId, at: 1, name: 'x'.repeat(61) }),
      'ring',
    );
    expect('why' in long).toBe(true);
  });
});
