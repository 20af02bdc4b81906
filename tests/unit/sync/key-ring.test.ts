// The key ring is authenticated. A change of it (a new key, a device
// added, a device leaving) is taken only when a device of the receiver's own ring signed it, and
// a new key can leave devices out but never add one. A device paired through one device is told
// to all, so no other device's "Make a new key" leaves it out.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { KIND } from '../../../src/services/sync/messages';
import { acceptRotation, generateDevice, rotate } from '../../../src/services/sync/keys';
import { type SyncConfig, sign } from '../../../src/services/sync/sync-config';
import { readSyncRow, writeSyncRows } from '../../../src/store/sync-store';
import { memory, session } from './records';
import { until } from './devices';
import { keyHolder } from './hostile';
import { device, quiet, relayFor, reopen, settled } from './faults';
import type { Device as TestDevice } from './faults';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function paired() {
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
  return { relay, laptop, phone };
}

const configOf = async (d: TestDevice) => (await readSyncRow(d.repo.db, 'config')) as SyncConfig;
const names = (d: TestDevice) => d.sync.status.devices.map((x) => x.name).sort();

describe('the key ring', () => {
  it('a device paired through the laptop is known to the phone, and the phone’s new key keeps it', async () => {
    const { relay, laptop, phone } = await paired();
    const tablet = await device('tablet');
    closers.push(() => (tablet.sync.stop(), tablet.repo.close()));
    await tablet.sync.join(relay.url, await laptop.sync.offerCode(), 'Tablet');
    await until('the phone hears of the tablet', () => names(phone).length === 3);
    expect(names(phone)).toEqual(['Laptop', 'Phone', 'Tablet']);
    // Visible to every device: who added it.
    const onPhone = phone.sync.status.devices.find((d) => d.name === 'Tablet')!;
    expect(onPhone.addedBy).toBe(laptop.sync.status.selfId);
    await settled('all idle', laptop, phone, tablet);

    await phone.sync.unpair();
    await until('the tablet moves with the others', async () => {
      const [t, p] = [await configOf(tablet), await configOf(phone)];
      return Buffer.from(t.key.raw).equals(Buffer.from(p.key.raw));
    });
    expect(tablet.sync.status.phase).not.toBe('unpaired');
    await phone.repo.apply({ memories: [memory('m2', 'after the phone’s new key')] });
    await until('the tablet gets it', async () => (await tablet.repo.getMemory('m2')) !== undefined);
    await until('the laptop gets it', async () => (await laptop.repo.getMemory('m2')) !== undefined);
  });

  it('a new key from the phone that adds a hidden device is refused; unpairing the phone then leaves both out', async () => {
    const { relay, laptop, phone } = await paired();
    // The phone (stolen, or buggy) holds a hidden device's keys and gives it a new key of its own.
    const hidden = await generateDevice('Hidden');
    const pc = await configOf(phone);
    const { rotation } = await rotate(pc.device, [...pc.devices, hidden.info]);
    const notice = await sign(pc, { type: 'rotation', rotation });
    const asPhone = await keyHolder(phone.repo.db, relay.url, pc.device.info.id);
    await asPhone.post(KIND.rotation, notice, 100_000);
    await until('the laptop refuses it', () => (laptop.sync.status.history?.refused?.forged ?? 0) === 1);
    expect(laptop.sync.status.history?.lastRefused).toMatch(/also given to a device this one does not know \(“Hidden”\)/);
    expect(names(laptop)).toEqual(['Laptop', 'Phone']);

    // The owner unpairs the phone: the new key is wrapped for no one but the laptop.
    await laptop.sync.unpair(pc.device.info.id);
    const lc = await configOf(laptop);
    expect(lc.devices.map((d) => d.name)).toEqual(['Laptop']);
    const messages = await asPhone.relay.read(asPhone.room, 0);
    let seen = 0;
    for (const m of messages.messages) {
      const opened = await asPhone.sealer.open(m.bytes).catch(() => undefined);
      if (!opened || opened.deviceId !== lc.device.info.id || opened.plaintext[0] !== KIND.rotation) continue;
      seen++;
      const text = new TextDecoder().decode(opened.plaintext).slice(opened.plaintext.indexOf(123));
      const { s } = JSON.parse(text) as { s: string };
      const r = (JSON.parse(s) as { rotation: Parameters<typeof acceptRotation>[1] }).rotation;
      expect(await acceptRotation(hidden, r)).toBe('unpaired');
      expect(await acceptRotation(pc.device, r)).toBe('unpaired');
    }
    expect(seen).toBe(1);
    await until('the phone told', () => phone.sync.status.phase === 'unpaired');
  });

  it('changes of the ring no device of it signed are refused: a device added, one leaving, a new key', async () => {
    const { relay, laptop, phone } = await paired();
    const lc = await configOf(laptop);
    // A key holder (a stolen key, a device gone rogue) signs with a key that is not the laptop's.
    const stranger = await generateDevice('Stranger');
    const posing = { ...lc, device: { ...stranger, info: { ...stranger.info, id: lc.device.info.id } } };
    const asLaptop = await keyHolder(phone.repo.db, relay.url, lc.device.info.id);
    await asLaptop.post(KIND.ring, await sign(posing, { type: 'added', device: stranger.info }), 100_000);
    await asLaptop.post(KIND.left, await sign(posing, { type: 'left' }), 100_001);
    const { rotation } = await rotate(posing.device, lc.devices);
    await asLaptop.post(KIND.rotation, await sign(posing, { type: 'rotation', rotation }), 100_002);
    await until('the phone refuses all three', () => (phone.sync.status.history?.refused?.forged ?? 0) === 3);
    expect(names(phone)).toEqual(['Laptop', 'Phone']);
    expect(phone.sync.status.phase).toBe('synced');
    // Its key is the one it had.
    expect(Buffer.from((await configOf(phone)).key.raw).equals(Buffer.from(lc.key.raw))).toBe(true);
  });
});

describe('devices paired before signatures', () => {
  it('introduce their signing key once at their next start; their later changes of the ring are taken', async () => {
    const { relay, laptop, phone } = await paired();
    // Both have read and saved everything posted so far (the pairing's statements, signed): a
    // device of the older version never saw signed statements, and reading them again with the
    // keys stripped below would refuse them as signed by a device without a key.
    await until('both read all', async () => (await quiet(laptop, relay.url)) && (await quiet(phone, relay.url)));
    // As a ring made before rings were signed: no signing keys anywhere.
    for (const d of [laptop, phone]) {
      d.sync.stop();
      const c = await configOf(d);
      const bare = (x: { signingKey?: string }) => ({ ...x, signingKey: undefined });
      const old = { ...c, device: { ...c.device, info: bare(c.device.info), signingPrivate: undefined }, devices: c.devices.map(bare) };
      await writeSyncRows(d.repo.db, { puts: [{ key: 'config', value: old }] });
    }
    const [l2, p2] = [await reopen(laptop), await reopen(phone)];
    for (const d of [l2, p2]) closers.push(() => (d.sync.stop(), d.repo.close()));
    await until('each knows the other’s new key', async () => {
      const [lc, pc] = [await configOf(l2), await configOf(p2)];
      return lc.devices.every((d) => d.signingKey) && pc.devices.every((d) => d.signingKey);
    });
    // The laptop pairs a tablet: its signed statement is taken by the phone.
    const tablet = await device('tablet');
    closers.push(() => (tablet.sync.stop(), tablet.repo.close()));
    await tablet.sync.join(relay.url, await l2.sync.offerCode(), 'Tablet');
    await until('the phone hears of the tablet', () => names(p2).length === 3);
    expect(p2.sync.status.history?.refused).toBeUndefined();
  });
});
