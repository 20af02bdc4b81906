// The room's signing key (docs/SYNC.md, "Who may write a room"): an Ed25519 key pair derived from
// the sync key, so every device holding the key holds the same pair and nobody else does. The relay
// keeps only the public half and checks it on every post, compaction and delete; a stranger who
// learns a room id can read its ciphertext but neither write nor delete it. A rotated key derives a
// new room and a new pair.
//
// Room ids are derived from the key too (keys.ts, roomOf), so whoever names a room held its key a
// moment before: roomOf leaves the room's signer here, and the relay client finds it by room id
// instead of every caller passing a key along.
import { type Bytes, concat, randomBytes, toBase64Url, utf8 } from './bytes';

export interface RoomSigner {
  /** The Ed25519 public key, raw, base64url (43 characters). */
  publicKey: string;
  sign(text: string): Promise<string>;
}

const signers = new Map<string, Promise<RoomSigner>>();

// PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): WebCrypto imports private keys only so.
const PKCS8_ED25519 = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);

/** The room's signer for a sync key's raw bytes. */
export async function roomSigner(raw: Bytes): Promise<RoomSigner> {
  const base = await crypto.subtle.importKey('raw', raw, 'HKDF', false, ['deriveBits']);
  const seed = new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: utf8('tealeaf-sync room-signing') },
      base,
      256,
    ),
  );
  // Extractable only to read its public half once; the seed is no more secret than the sync key it comes from.
  const key = await crypto.subtle.importKey('pkcs8', concat(PKCS8_ED25519, seed), { name: 'Ed25519' }, true, ['sign']);
  const publicKey = (await crypto.subtle.exportKey('jwk', key)).x!;
  return {
    publicKey,
    sign: async (text) => toBase64Url(new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, key, utf8(text)))),
  };
}

/** Remembers a room's signer (keys.ts calls this where it derives a room id). */
export function rememberRoom(room: string, raw: Bytes): void {
  if (!signers.has(room)) signers.set(room, roomSigner(raw.slice()));
}

/** The text a request's signature covers; relay/auth.mjs checks the same. */
export function signedText(method: string, pathAndQuery: string, time: string, nonce: string, bodyDigest: string): string {
  return `tealeaf-relay/1\n${method}\n${pathAndQuery}\n${time}\n${nonce}\n${bodyDigest}`;
}

/** The headers that sign a write to `room` (path and query from /v1/ on), or none when no key is known for it. */
export async function signedHeaders(
  room: string,
  method: string,
  pathAndQuery: string,
  body: Bytes,
  now = Date.now(),
): Promise<Record<string, string>> {
  const signer = signers.get(room);
  if (!signer) return {};
  const s = await signer;
  const time = String(now);
  const nonce = toBase64Url(randomBytes(16));
  const digest = toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', body)));
  const sig = await s.sign(signedText(method, pathAndQuery, time, nonce, digest));
  return { 'x-tealeaf-key': s.publicKey, 'x-tealeaf-time': time, 'x-tealeaf-nonce': nonce, 'x-tealeaf-sig': sig };
}
