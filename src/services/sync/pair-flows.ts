// The configs pairing makes (docs/SYNC.md, "Pairing"): the first device's, with a new key and a
// ring of one; a joining device's, from the device showing the code; and what the showing device
// hands over.
import { toBase64Url } from './bytes';
import { generateDevice, generateSyncKey } from './keys';
import type { PairingPayload } from './pairing';
import { joinWithCode } from './pairing-session';
import { RelayClient } from './relay-client';
import { assertRelayAllowed } from './relay-policy';
import type { SyncConfig } from './sync-config';

/** The first device: a new key, and a ring of this device alone. */
export async function firstDevice(relayUrl: string, name: string): Promise<SyncConfig> {
  assertRelayAllowed(relayUrl);
  const key = await generateSyncKey();
  const device = await generateDevice(name);
  return { relayUrl, device, key: { raw: key.raw, createdAt: key.createdAt }, devices: [device.info] };
}

/** A new device: the key ring from the device showing `code`. */
export async function joinedDevice(relayUrl: string, code: string, name: string, fetchFn?: typeof fetch): Promise<SyncConfig> {
  assertRelayAllowed(relayUrl);
  const got = await joinWithCode(new RelayClient(relayUrl, fetchFn), code.trim().toUpperCase(), name);
  return { relayUrl, device: got.device, key: { raw: got.key.raw, createdAt: got.key.createdAt }, devices: got.devices };
}

/** What the device showing a code hands the new one: the key, the ring, the relay, and that it added it. */
export function payloadFor(config: SyncConfig): PairingPayload {
  return {
    key: toBase64Url(config.key.raw),
    keyCreatedAt: config.key.createdAt,
    devices: config.devices,
    relayUrl: config.relayUrl,
    addedBy: config.device.info.id,
  };
}
