// Key changes for the engine tests: a rotation signed by its maker (ring.ts), and each device's
// side that checks it against the ring it holds, as the app's service does (sync-config.ts).
import type { Bytes } from '../../../src/services/sync/bytes';
import type { Refused } from '../../../src/services/sync/engine';
import { type Device, type DeviceInfo, type SyncKey, rotate } from '../../../src/services/sync/keys';
import { RingRefusal } from '../../../src/services/sync/ring';
import { type SyncConfig, sign, takeRotation } from '../../../src/services/sync/sync-config';

const configOf = (device: Device, key: SyncKey, ring: DeviceInfo[]): SyncConfig => ({
  relayUrl: 'http://127.0.0.1:1',
  device,
  key: { raw: key.raw, createdAt: key.createdAt },
  devices: ring,
});

/** A new key made by `maker` for `keep`, and its notice signed under the key in use. */
export async function signedRotation(maker: Device, key: SyncKey, ring: DeviceInfo[], keep: DeviceInfo[]) {
  const { key: next, rotation } = await rotate(
    maker,
    keep,
    Date.now(),
    ring.map((d) => d.id),
  );
  return { key: next, rotation, notice: await sign(configOf(maker, key, ring), { type: 'rotation', rotation }) };
}

/** A device's `onRotation`: checks the notice against its ring, and moves on with the new key. */
export function onRotationOf(self: Device, key: SyncKey, ring: DeviceInfo[]) {
  let config = configOf(self, key, ring);
  return async (notice: Bytes, others: readonly Bytes[] = []): Promise<SyncKey | 'unpaired' | Refused> => {
    const taken = await takeRotation(config, notice, others);
    if (taken instanceof RingRefusal) return { refused: taken.why, conflict: taken.conflict };
    if (taken === 'unpaired') return taken;
    config = taken.config;
    return taken.key;
  };
}
