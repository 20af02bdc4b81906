// What this device keeps about its sync (the `config` row: relay, key, this device, the ring) and
// how each change of the ring another device sends is taken into it (ring.ts checks the
// signatures). Pure over the config: the service writes what comes back with its state.
import type { Bytes } from './bytes';
import { type Device, type DeviceInfo, type Rotation, type SyncKey, acceptRotation, generateSigningKey, keyFromRaw } from './keys';
import { RingRefusal, type Statement, leftOut, readStatement, ringAfter, signStatement } from './ring';

export interface SyncConfig {
  relayUrl: string;
  device: Device;
  key: { raw: Bytes; createdAt: number };
  devices: DeviceInfo[];
}

/** A key change this device started (unpair, or a new key for all), kept in a row before its first post. */
export interface PendingRotation {
  key: { raw: Bytes; createdAt: number };
  rotation: Rotation;
  /** The signed notice, as posted (read back, it moves this device). */
  notice: Bytes;
  /** The device to leave out, when the change unpairs one: made again in the winner's room if another rotation won. */
  remove?: string;
}

export async function keyIdOf(config: SyncConfig): Promise<string> {
  return (await keyFromRaw(config.key.raw, config.key.createdAt)).id;
}

/** A statement as its maker writes it: who, for which key and when are filled in by `sign`. */
type Unsigned<S = Statement> = S extends Statement ? Omit<S, 'by' | 'keyId' | 'at'> : never;

/** A statement signed by this device for the key in use. */
export async function sign(config: SyncConfig, s: Unsigned): Promise<Bytes> {
  return signStatement(config.device, { ...s, by: config.device.info.id, keyId: await keyIdOf(config), at: Date.now() } as Statement);
}

/** What came of a ring message: the config after it, or why it was refused. */
export type RingOutcome = { config: SyncConfig } | RingRefusal;

/**
 * Another device's key rotation: the new key and ring if this device was kept, `unpaired`, or a
 * refusal. `others`: the room's other key changes that count against it (docs/SYNC.md, "Which key
 * change counts"): one of them, signed by a device of this ring, that removed this one's maker
 * refuses it (a stolen device's new key, posted where the owner's unpairing of it can be seen).
 */
export async function takeRotation(
  config: SyncConfig,
  notice: Uint8Array,
  others: readonly Uint8Array[] = [],
): Promise<{ key: SyncKey; config: SyncConfig } | 'unpaired' | RingRefusal> {
  const keyId = await keyIdOf(config);
  const s = await readStatement(notice, config.devices, keyId);
  if (s instanceof RingRefusal) return s;
  if (s.type !== 'rotation') return new RingRefusal('a key change that is not one');
  const devices = ringAfter(s.rotation, config.devices, s.by);
  if (devices instanceof RingRefusal) return devices;
  const removedBy = await removerOf(s.by, others, config.devices, keyId);
  if (removedBy) {
    const name = (id: string) => config.devices.find((d) => d.id === id)?.name ?? 'a device';
    return new RingRefusal(`a new key from ${name(s.by)}, which ${name(removedBy)} removed from sync`, true);
  }
  const self = config.device.info.id;
  if (!devices.some((d) => d.id === self)) return 'unpaired';
  const key = await acceptRotation(config.device, s.rotation);
  if (key === 'unpaired') return 'unpaired';
  return { key, config: { ...config, key: { raw: key.raw, createdAt: key.createdAt }, devices } };
}

/** The maker of a key change among `others` (signed by a device of `ring`) that removed `id` on purpose. */
async function removerOf(
  id: string,
  others: readonly Uint8Array[],
  ring: readonly DeviceInfo[],
  keyId: string,
): Promise<string | undefined> {
  for (const other of others) {
    const o = await readStatement(other, ring, keyId);
    if (o instanceof RingRefusal || o.type !== 'rotation' || o.by === id) continue;
    if (leftOut(o.rotation, id) && !o.rotation.devices.some((d) => d.id === id)) return o.by;
  }
  return undefined;
}

/** A device added, a device leaving, a signing key introduced: the ring after it, or a refusal. */
export async function takeStatement(config: SyncConfig, payload: Uint8Array, kind: 'ring' | 'left'): Promise<RingOutcome> {
  const s = await readStatement(payload, config.devices, await keyIdOf(config));
  if (s instanceof RingRefusal) return s;
  const devices = config.devices;
  if (kind === 'left') {
    if (s.type !== 'left') return new RingRefusal('a notice of leaving that is not one');
    return { config: { ...config, devices: devices.filter((d) => d.id !== s.by) } };
  }
  if (s.type === 'added') {
    if (devices.some((d) => d.id === s.device.id)) return { config };
    if (!s.device.signingKey) return new RingRefusal('a device added without a signing key');
    return { config: { ...config, devices: [...devices, { ...s.device, addedBy: s.by }] } };
  }
  if (s.type === 'key')
    return { config: { ...config, devices: devices.map((d) => (d.id === s.by ? { ...d, signingKey: s.signingKey } : d)) } };
  // A device renames only itself: the statement names no other device.
  if (s.type === 'renamed') return { config: renamed(config, s.by, s.name) };
  return new RingRefusal('a change of the device list of an unknown kind');
}

/**
 * A device paired before signatures gets its signing key now; the statement that introduces it to
 * the others (trusted on first use) is returned to be posted. Undefined when it has one.
 */
export async function withSigningKey(config: SyncConfig): Promise<{ config: SyncConfig; introduce: Bytes } | undefined> {
  if (config.device.signingPrivate) return undefined;
  const signing = await generateSigningKey();
  const info = { ...config.device.info, signingKey: signing.publicKey };
  const next: SyncConfig = {
    ...config,
    device: { ...config.device, info, signingPrivate: signing.privateKey },
    devices: config.devices.map((d) => (d.id === info.id ? info : d)),
  };
  return { config: next, introduce: await sign(next, { type: 'key', signingKey: signing.publicKey }) };
}

/** The config with device `id` called `name` (this device's own record too, when it is this one). */
export function renamed(config: SyncConfig, id: string, name: string): SyncConfig {
  const self = config.device.info.id === id;
  return {
    ...config,
    ...(self ? { device: { ...config.device, info: { ...config.device.info, name } } } : {}),
    devices: config.devices.map((d) => (d.id === id ? { ...d, name } : d)),
  };
}
