// Pairing a second device (docs/SYNC.md, "Pairing"). The first device shows a code; the new device
// types it (or scans it); the sync key then travels between them through the relay, encrypted.
//
// The code is 120 random bits, 24 letters of Crockford base32 in groups of four. From it both sides
// derive a mailbox (a relay room, one way, so the relay does not learn the code), a MAC key and a
// request key. The new device posts its identity (id, name, public keys) sealed under the request
// key (so the relay cannot read the joining device's name and id); the first
// device answers with a fresh public key and MAC and the key ring, encrypted under ECDH(both)
// salted with the code's secret. So: the relay sees only an ephemeral public key, a MAC and
// ciphertext; it cannot fake either side without the code (120 bits: no guessing within the
// code's lifetime, online or offline); and a code photographed later opens nothing, because the
// ECDH key pairs were thrown away after pairing.
import { type Bytes, fromBase32, fromBase64Url, fromUtf8, randomBytes, toBase32, toBase64Url, utf8 } from './bytes';
import { freeName } from './device-names';
import { type Device, type DeviceInfo, type SyncKey, agreedKey, generateDevice, keyFromRaw } from './keys';

const CODE_BYTES = 15;
/** A code is good for this long; the first device stops listening after it. */
export const PAIRING_TTL_MS = 10 * 60 * 1000;

export interface PairingSecrets {
  /** The relay room both sides use as a mailbox. */
  mailbox: string;
  macKey: CryptoKey;
  /** Seals the joining device's identity (AES-GCM). */
  requestKey: CryptoKey;
  salt: Bytes;
}

/** What the first device hands the new one: the key and who else holds it. */
export interface PairingPayload {
  key: string;
  keyCreatedAt: number;
  devices: DeviceInfo[];
  relayUrl?: string;
  /** The device answering: the new device is listed as added by it. */
  addedBy?: string;
}

/** The joining device's identity, sealed under the code's request key: the relay reads none of it. */
export interface JoinRequest {
  nonce: string;
  sealed: string;
}

export interface JoinReply {
  publicKey: string;
  mac: string;
  nonce: string;
  sealed: string;
}

export class PairingError extends Error {
  override readonly name = 'PairingError';
}

/** Groups of four, as the code is shown and read aloud. */
export function newPairingCode(): string {
  return toBase32(randomBytes(CODE_BYTES)).match(/.{4}/g)!.join('-');
}

function codeBytes(code: string): Bytes {
  try {
    return fromBase32(code, CODE_BYTES);
  } catch (e) {
    throw new PairingError(`That is not a pairing code (${(e as Error).message}).`);
  }
}

/** The code as shown (groups of four) from what was typed or carried in a link; throws PairingError when it is none. */
export function normalPairingCode(code: string): string {
  return toBase32(codeBytes(code)).match(/.{4}/g)!.join('-');
}

export async function pairingSecrets(code: string): Promise<PairingSecrets> {
  const bytes = codeBytes(code);
  const base = await crypto.subtle.importKey('raw', bytes, 'HKDF', false, ['deriveBits']);
  const derive = async (info: string) =>
    new Uint8Array(await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: utf8(info) }, base, 256));
  const macRaw = await derive('tealeaf-pair mac');
  return {
    mailbox: 'pair-' + toBase64Url(await derive('tealeaf-pair mailbox')),
    macKey: await crypto.subtle.importKey('raw', macRaw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']),
    requestKey: await crypto.subtle.importKey('raw', await derive('tealeaf-pair request'), 'AES-GCM', false, ['encrypt', 'decrypt']),
    salt: await derive('tealeaf-pair salt'),
  };
}

const JOIN_AD = utf8('tealeaf-pair join');

/** The joining device's identity; a request not sealed with the code (or altered) ends the pairing. */
async function openRequest(secrets: PairingSecrets, request: JoinRequest): Promise<DeviceInfo> {
  let info: Partial<DeviceInfo>;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64Url(request.nonce), additionalData: JOIN_AD },
      secrets.requestKey,
      fromBase64Url(request.sealed),
    );
    info = JSON.parse(fromUtf8(new Uint8Array(plain))) as Partial<DeviceInfo>;
  } catch {
    throw new PairingError('A device tried to pair without the right code.');
  }
  if (
    typeof info.id !== 'string' ||
    !/^[0-9a-f]{32}$/.test(info.id) ||
    typeof info.name !== 'string' ||
    typeof info.publicKey !== 'string' ||
    typeof info.pairedAt !== 'number' ||
    (info.signingKey !== undefined && typeof info.signingKey !== 'string')
  ) {
    throw new PairingError('The other device sent an identity this one cannot read: update Tealeaf on both.');
  }
  const { id, name, publicKey, pairedAt, signingKey } = info;
  return { id, name: name.slice(0, 200), publicKey, pairedAt, signingKey };
}

const mac = async (k: CryptoKey, parts: string[]) =>
  toBase64Url(new Uint8Array(await crypto.subtle.sign('HMAC', k, utf8(parts.join('|')))));
const verify = async (k: CryptoKey, parts: string[], tag: unknown) => {
  try {
    return typeof tag === 'string' && (await crypto.subtle.verify('HMAC', k, fromBase64Url(tag), utf8(parts.join('|'))));
  } catch {
    return false;
  }
};

/** A word in the mailbox only a holder of the code can say ("offer", "closed", "cancel"): its MAC under the code. */
export const codeMac = (secrets: PairingSecrets, parts: string[]) => mac(secrets.macKey, parts);
export const codeMacOk = (secrets: PairingSecrets, parts: string[], tag: unknown) => verify(secrets.macKey, parts, tag);

/** The answer is for this device and made with the code (another device's answer, or a stranger's, is not). */
export const replyIsFor = (secrets: PairingSecrets, deviceId: string, reply: JoinReply) =>
  verify(secrets.macKey, ['reply', deviceId, reply.publicKey], reply.mac);

/** New device, step 1: its own identity and the request to post in the mailbox. */
export async function requestToJoin(
  code: string,
  name: string,
): Promise<{ device: Device; request: JoinRequest; secrets: PairingSecrets }> {
  const secrets = await pairingSecrets(code);
  const device = await generateDevice(name);
  const nonce = randomBytes(12);
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv: nonce, additionalData: JOIN_AD },
    secrets.requestKey,
    utf8(JSON.stringify(device.info)),
  );
  const request = { nonce: toBase64Url(nonce), sealed: toBase64Url(new Uint8Array(sealed)) };
  return { device, request, secrets };
}

/**
 * First device: checks the request against the code and answers with the key ring sealed for the
 * new device. Returns the new device's info too, to add to the ring.
 */
export async function answerJoin(
  secrets: PairingSecrets,
  request: JoinRequest,
  payload: PairingPayload,
): Promise<{ reply: JoinReply; joined: DeviceInfo }> {
  // Named where the list is known: a second "Chromium on Linux" joins as "Chromium on Linux 2".
  const asked = await openRequest(secrets, request);
  const d = {
    ...asked,
    name: freeName(
      asked.name,
      payload.devices.map((x) => x.name),
    ),
  };
  // A fresh key pair for this exchange only (the device's own key is for rotations).
  const mine = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
  const publicKey = toBase64Url(new Uint8Array(await crypto.subtle.exportKey('raw', mine.publicKey)));
  const aes = await agreedKey(mine.privateKey, fromBase64Url(d.publicKey), 'tealeaf-pair payload', secrets.salt);
  const nonce = randomBytes(12);
  const body = utf8(JSON.stringify({ ...payload, devices: [...payload.devices, { ...d, addedBy: payload.addedBy }] }));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: utf8(d.id) }, aes, body));
  const reply = {
    publicKey,
    nonce: toBase64Url(nonce),
    sealed: toBase64Url(sealed),
    mac: await mac(secrets.macKey, ['reply', d.id, publicKey]),
  };
  return { reply, joined: d };
}

/** New device, step 2: checks the answer against the code and opens the key ring. */
export async function finishJoin(
  secrets: PairingSecrets,
  device: Device,
  reply: JoinReply,
): Promise<{ key: SyncKey; devices: DeviceInfo[]; relayUrl?: string }> {
  if (!(await verify(secrets.macKey, ['reply', device.info.id, reply.publicKey], reply.mac))) {
    throw new PairingError('The answer did not come from the device showing the code.');
  }
  const aes = await agreedKey(device.privateKey, fromBase64Url(reply.publicKey), 'tealeaf-pair payload', secrets.salt);
  let payload: PairingPayload;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64Url(reply.nonce), additionalData: utf8(device.info.id) },
      aes,
      fromBase64Url(reply.sealed),
    );
    payload = JSON.parse(fromUtf8(new Uint8Array(plain))) as PairingPayload;
  } catch {
    throw new PairingError('The answer was altered on its way.');
  }
  const key = await keyFromRaw(fromBase64Url(payload.key), payload.keyCreatedAt);
  return { key, devices: payload.devices, relayUrl: payload.relayUrl };
}

/** The payload the first device sends, from its key and ring. */
export function payloadOf(key: SyncKey, devices: DeviceInfo[], relayUrl?: string): PairingPayload {
  return { key: toBase64Url(key.raw), keyCreatedAt: key.createdAt, devices, relayUrl };
}
