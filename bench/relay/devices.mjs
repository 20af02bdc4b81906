// Simulated devices for bench:relay: each room's Ed25519 key (as the app derives one, here with
// node:crypto), signed posts, and a device that long-polls its room and reads what arrives. Every
// loop is bounded by a deadline or an abort signal, so the bench stops by itself.
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { Agent, request } from 'node:http';
import { signedText } from '../../relay/auth.mjs';

// One keep-alive pool for all devices: 2,000 long polls stay open at once.
export const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

/** One HTTP request; resolves with status, headers and body. */
export function call(url, { method = 'GET', headers = {}, body, signal } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent, signal }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function newRoomKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { room: randomBytes(32).toString('base64url'), privateKey, x: publicKey.export({ format: 'jwk' }).x };
}

/** A signed post of `body` to the room on relay `base`; resolves with the status and seq. */
export async function post(base, key, body, compact) {
  const path = `/v1/rooms/${key.room}/messages${compact === undefined ? '' : `?compact=${compact}`}`;
  const time = String(Date.now());
  const nonce = randomBytes(16).toString('base64url');
  const digest = createHash('sha256').update(body).digest('base64url');
  const sig = sign(null, Buffer.from(signedText('POST', path, time, nonce, digest)), key.privateKey).toString('base64url');
  const res = await call(base + path, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/octet-stream',
      'x-tealeaf-key': key.x,
      'x-tealeaf-time': time,
      'x-tealeaf-nonce': nonce,
      'x-tealeaf-sig': sig,
    },
  });
  return { status: res.status, seq: res.status === 201 ? JSON.parse(res.body.toString()).seq : 0 };
}

/**
 * A device that waits on its room and reads each message when told of it: `onMessage(bytes, at)`
 * with the time it was read. Runs until `signal` aborts.
 */
export async function listen(base, room, signal, onMessage) {
  let cursor = 0;
  while (!signal.aborted) {
    try {
      const w = await call(`${base}/v1/rooms/${room}/wait?after=${cursor}`, { signal });
      if (w.status !== 200) {
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      if (JSON.parse(w.body.toString()).last <= cursor) continue;
      const r = await call(`${base}/v1/rooms/${room}/messages?after=${cursor}`, { signal });
      const at = performance.now();
      for (let i = 0; i + 8 <= r.body.length;) {
        const seq = r.body.readUInt32BE(i);
        const len = r.body.readUInt32BE(i + 4);
        onMessage(r.body.subarray(i + 8, i + 8 + len), at);
        cursor = Math.max(cursor, seq);
        i += 8 + len;
      }
    } catch {
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export const median = (xs) => quantile(xs, 0.5);
export function quantile(xs, q) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
