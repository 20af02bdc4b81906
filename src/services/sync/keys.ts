// The sync key and the devices that hold it (docs/SYNC.md, "Keys").
//
// One random 256-bit key per person, made on the first device; it never reaches the relay. The
// relay knows a room by an id derived from the key (one way), so the room id reveals nothing of
// it. Each device also has an ECDH key pair: a new key is wrapped for each device that keeps it,
// which is how a device is unpaired (the new key is wrapped for everyone but it).
import { type Bytes, equalBytes, fromBase64Url, randomBytes, toBase64Url, toHex, utf8 } from './bytes';
import { rememberRoom } from './room-key';

export interface SyncKey {
  /** 16 hex characters derived from the key: names it in every envelope, so a wrong key is told apart. */
  id: string;
  raw: Bytes;
  createdAt: number;
}

export interface DeviceInfo {
  /** 32 hex characters, random, per device. */
  id: string;
  name: string;
  /** The device's ECDH P-256 public key, raw, base64url. */
  publicKey: string;
  pairedAt: number;
  /** Its ECDSA P-256 public key, raw, base64url: it signs every change of the ring it makes (ring.ts). Absent on devices paired before the ring was signed, until they introduce one. */
  signingKey?: string;
  /** The device that paired it (and said so to the others); absent for the first device. */
  addedBy?: string;
}

export interface Device {
  info: DeviceInfo;
  /** Non-extractable where the caller stores it (IndexedDB keeps CryptoKeys as they are). */
  privateKey: CryptoKey;
  /** Signs this device's changes of the ring (ring.ts); non-extractable. */
  signingPrivate?: CryptoKey;
}

const ECDH = { name: 'ECDH', namedCurve: 'P-256' } as const;

async function hkdf(secret: Bytes, info: string, bytes: number, salt: Bytes = new Uint8Array(0)): Promise<Bytes> {
  const base = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info: utf8(info) }, base, bytes * 8);
  return new Uint8Array(bits);
}

export async function keyFromRaw(raw: Bytes, createdAt: number): Promise<SyncKey> {
  if (raw.length !== 32) throw new Error('a sync key is 32 bytes');
  return { id: toHex(await hkdf(raw, 'tealeaf-sync key-id', 8)), raw, createdAt };
}

export function generateSyncKey(now = Date.now()): Promise<SyncKey> {
  return keyFromRaw(randomBytes(32), now);
}

/** The relay's name for this key's room: 256 bits derived one way from the key. */
export async function roomOf(key: SyncKey): Promise<string> {
  const room = toBase64Url(await hkdf(key.raw, 'tealeaf-sync room', 32));
  rememberRoom(room, key.raw);
  return room;
}

/** The AES-GCM key that seals envelopes under this sync key. */
export async function sealingKey(key: SyncKey): Promise<CryptoKey> {
  const raw = await hkdf(key.raw, 'tealeaf-sync aes-gcm', 32);
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
}

export async function generateDevice(name: string, now = Date.now()): Promise<Device> {
  const pair = await crypto.subtle.generateKey(ECDH, false, ['deriveBits']);
  const pub = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  const signing = await generateSigningKey();
  return {
    info: { id: toHex(randomBytes(16)), name, publicKey: toBase64Url(pub), pairedAt: now, signingKey: signing.publicKey },
    privateKey: pair.privateKey,
    signingPrivate: signing.privateKey,
  };
}

export const ECDSA = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/** A device's signing key pair: the private half non-extractable, the public half raw, base64url. */
export async function generateSigningKey(): Promise<{ privateKey: CryptoKey; publicKey: string }> {
  const pair = await crypto.subtle.generateKey(ECDSA, false, ['sign', 'verify']);
  return { privateKey: pair.privateKey, publicKey: toBase64Url(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey))) };
}

/** An AES-GCM key two ECDH key pairs agree on, bound to `context` (so it serves one purpose only). */
export async function agreedKey(privateKey: CryptoKey, peerPublic: Bytes, context: string, salt?: Bytes): Promise<CryptoKey> {
  const peer = await crypto.subtle.importKey('raw', peerPublic, ECDH, false, []);
  const shared = new Uint8Array(await crypto.subtle.deriveBits({ name: 'ECDH', public: peer }, privateKey, 256));
  const raw = await hkdf(shared, context, 32, salt);
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
}

/** A new key for the devices that keep it, each copy wrapped for one device's public key. */
export interface Rotation {
  newKeyId: string;
  createdAt: number;
  from: DeviceInfo;
  /** The devices that keep the key, the rotating one included: the new device list. */
  devices: DeviceInfo[];
  /** Every device the rotating one had in its ring: a device not named here was unknown to it, not left out. */
  known?: string[];
  wraps: Array<{ deviceId: string; nonce: string; wrapped: string }>;
}

const wrapContext = (keyId: string, deviceId: string) => utf8(`tealeaf-sync wrap|${keyId}|${deviceId}`);

/**
 * Makes a new key for `keep` (the rotating device is always kept). Send the result sealed under
 * the OLD key: a removed device still reads it, but finds no copy of the key for itself.
 */
export async function rotate(
  self: Device,
  keep: DeviceInfo[],
  now = Date.now(),
  known: string[] = keep.map((d) => d.id),
): Promise<{ key: SyncKey; rotation: Rotation }> {
  const key = await generateSyncKey(now);
  const devices = [self.info, ...keep.filter((d) => d.id !== self.info.id)];
  const wraps = [];
  for (const d of devices) {
    if (d.id === self.info.id) continue;
    const k = await agreedKey(self.privateKey, fromBase64Url(d.publicKey), 'tealeaf-sync rotation');
    const nonce = randomBytes(12);
    const ad = wrapContext(key.id, d.id);
    const wrapped = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: ad }, k, key.raw));
    wraps.push({ deviceId: d.id, nonce: toBase64Url(nonce), wrapped: toBase64Url(wrapped) });
  }
  return {
    key,
    rotation: { newKeyId: key.id, createdAt: now, from: self.info, devices, wraps, known: [...new Set([self.info.id, ...known])] },
  };
}

/** The new key from a rotation, or `unpaired` when this device was left out. Throws on a forged copy. */
export async function acceptRotation(self: Device, rotation: Rotation): Promise<SyncKey | 'unpaired'> {
  const mine = rotation.wraps.find((w) => w.deviceId === self.info.id);
  if (!mine) return 'unpaired';
  const k = await agreedKey(self.privateKey, fromBase64Url(rotation.from.publicKey), 'tealeaf-sync rotation');
  const ad = wrapContext(rotation.newKeyId, self.info.id);
  const raw = new Uint8Array(
    await crypto.subtle.decrypt({ name: 'AES-GCM', iv: fromBase64Url(mine.nonce), additionalData: ad }, k, fromBase64Url(mine.wrapped)),
  );
  const key = await keyFromRaw(raw, rotation.createdAt);
  if (!equalBytes(utf8(key.id), utf8(rotation.newKeyId))) throw new Error('the rotated key does not match its id');
  return key;
}
