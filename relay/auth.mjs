// Signed writes (docs/SYNC.md, "Who may write a room"). Each post, compaction and delete of a room
// carries the room's Ed25519 public key (derived from the sync key on the devices) and a signature
// over the method, the path with its query, a time, a nonce and the body's SHA-256. The relay checks
// the signature here; the store checks that the key is the room's own (the first signed write
// claims a room) and that the nonce was not used before, in the same transaction as the write.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { refuse } from './limits.mjs';

export const SIGNED_HEADERS = ['x-tealeaf-key', 'x-tealeaf-time', 'x-tealeaf-nonce', 'x-tealeaf-sig'];

/** The bytes a device signs; src/services/sync/room-key.ts builds the same. */
export function signedText(method, pathAndQuery, time, nonce, bodyDigest) {
  return `tealeaf-relay/1\n${method}\n${pathAndQuery}\n${time}\n${nonce}\n${bodyDigest}`;
}

const b64url = /^[A-Za-z0-9_-]+$/;
const keys = new Map();

function publicKey(x) {
  let k = keys.get(x);
  if (!k) {
    k = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    // A bounded cache: verifying is cheap, parsing a key less so.
    if (keys.size > 10_000) keys.clear();
    keys.set(x, k);
  }
  return k;
}

/**
 * The request's key and nonce when its signature holds; throws a Refusal otherwise. `now` is the
 * relay's clock; a request signed further than `skewMs` from it is refused (with the nonce kept
 * for twice that, a replay is refused either way).
 */
export function checkSignature(req, pathAndQuery, body, now, skewMs) {
  const h = (n) => req.headers[n];
  const [key, time, nonce, sig] = SIGNED_HEADERS.map(h);
  if (!key && !sig) throw refuse.unsigned();
  if (typeof key !== 'string' || typeof sig !== 'string' || typeof nonce !== 'string' || typeof time !== 'string')
    throw refuse.badSignature();
  if (key.length !== 43 || !b64url.test(key) || !b64url.test(sig) || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce) || !/^\d{1,15}$/.test(time))
    throw refuse.badSignature();
  if (Math.abs(Number(time) - now) > skewMs) throw refuse.clock();
  const digest = createHash('sha256').update(body).digest('base64url');
  let ok;
  try {
    ok = verify(
      null,
      Buffer.from(signedText(req.method, pathAndQuery, time, nonce, digest)),
      publicKey(key),
      Buffer.from(sig, 'base64url'),
    );
  } catch {
    ok = false;
  }
  if (!ok) throw refuse.badSignature();
  return { key: Buffer.from(key, 'base64url'), nonce };
}
