// The key ring's own checks (ring.ts), each against a statement or a rotation made to pass every
// other one: a statement is bound to the key it was made under, and a rotation keeps the ring's
// devices with the keys this ring holds for them, from a maker whose notice names it as it is.
import { describe, expect, it } from 'vitest';
import { type Device, type DeviceInfo, generateDevice, generateSyncKey, rotate } from '../../../src/services/sync/keys';
import { RingRefusal, readStatement, ringAfter, signStatement } from '../../../src/services/sync/ring';

async function threeDevices(): Promise<{ laptop: Device; phone: Device; tablet: Device; ring: DeviceInfo[] }> {
  const [laptop, phone, tablet] = await Promise.all(['Laptop', 'Phone', 'Tablet'].map((n) => generateDevice(n)));
  return { laptop, phone, tablet, ring: [laptop.info, phone.info, tablet.info] };
}

describe('the key ring', () => {
  it('refuses a statement signed under an older key when read under the new one (no replay across keys)', async () => {
    const { laptop, ring } = await threeDevices();
    const [old, next] = [await generateSyncKey(), await generateSyncKey()];
    const left = await signStatement(laptop, { type: 'left', by: laptop.info.id, keyId: old.id, at: 1 });
    // Under the key it was made for it holds (the control), under the next one it does not.
    expect(await readStatement(left, ring, old.id)).toMatchObject({ type: 'left', by: laptop.info.id });
    const replayed = await readStatement(left, ring, next.id);
    expect(replayed).toBeInstanceOf(RingRefusal);
    expect((replayed as RingRefusal).why).toBe('a change of the device list made for another key');
  });

  it('refuses a rotation that gives a device of the ring another public key (a stand-in)', async () => {
    const { laptop, phone, tablet, ring } = await threeDevices();
    const standIn = await generateDevice('Tablet');
    const { rotation } = await rotate(laptop, [phone.info, { ...tablet.info, publicKey: standIn.info.publicKey }], 1);
    const kept = ringAfter(rotation, ring, laptop.info.id);
    expect(kept).toBeInstanceOf(RingRefusal);
    expect((kept as RingRefusal).why).toBe('a new key from Laptop given to a stand-in for Tablet');
    // The control: the same rotation with the ring's own keys is taken, and keeps the ring's entries.
    const { rotation: honest } = await rotate(laptop, [phone.info, tablet.info], 1);
    expect(ringAfter(honest, ring, laptop.info.id)).toEqual([laptop.info, phone.info, tablet.info]);
  });

  it('refuses a rotation whose maker is named with a public key other than the one this ring holds', async () => {
    const { laptop, phone, ring } = await threeDevices();
    const impostor = await generateDevice('Laptop');
    // Made with the impostor's key under the laptop's id, its device list naming the laptop as the
    // ring holds it: only `from` (the key a receiver unwraps its copy with) is not the laptop's.
    const { rotation } = await rotate({ ...impostor, info: { ...impostor.info, id: laptop.info.id } }, [phone.info], 1);
    rotation.devices = [laptop.info, phone.info];
    expect(rotation.from.id).toBe(laptop.info.id);
    expect(ringAfter({ ...rotation, from: laptop.info }, ring, laptop.info.id)).toEqual([laptop.info, phone.info]);
    const kept = ringAfter(rotation, ring, laptop.info.id);
    expect(kept).toBeInstanceOf(RingRefusal);
    expect((kept as RingRefusal).why).toBe('a new key whose notice names another device as its maker');
  });
});
