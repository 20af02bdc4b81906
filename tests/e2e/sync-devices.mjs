// Shared by the sync specs: pairing two profiles through Settings, and a device that
// holds the sync key and posts what it likes through the relay (a stolen or buggy device), built
// here from WebCrypto and Yjs, apart from the app's own code: the envelope as docs/SYNC.md gives it.
import { webcrypto as crypto } from 'node:crypto';
import * as Y from 'yjs';
import { signedText } from '../../relay/auth.mjs';
import { PATIENCE_MS } from './harness.mjs';

export async function settings(page, url) {
  await page.goto(`${url}/#/settings`);
  await page.getByTestId('settings-sync').waitFor();
}

export async function statusIs(page, phase, timeout = PATIENCE_MS) {
  await page.locator(`[data-testid="sync-status"][data-phase="${phase}"]`).waitFor({ timeout });
  return (await page.getByTestId('sync-status').textContent()).trim();
}

/** A turns sync on as "Laptop" and shows a code; B types it as "Phone" (with its own relay address, if given); both say synced. */
export async function pair(A, B, url, relayUrl, relayUrlB = relayUrl) {
  await settings(A.page, url);
  await A.page.getByTestId('sync-relay-url').fill(relayUrl);
  await A.page.getByTestId('sync-device-name').fill('Laptop');
  await A.page.getByTestId('sync-turn-on').click();
  await statusIs(A.page, 'synced');
  await A.page.getByTestId('sync-show-code').click();
  const code = (await A.page.getByTestId('sync-code').textContent()).trim();
  await settings(B.page, url);
  await B.page.getByTestId('sync-relay-url').fill(relayUrlB);
  await B.page.getByTestId('sync-device-name').fill('Phone');
  await B.page.getByTestId('sync-code-input').fill(code);
  await B.page.getByTestId('sync-join').click();
  await statusIs(B.page, 'synced');
  await A.page
    .getByTestId('sync-device')
    .filter({ hasText: /^\s*Phone/ })
    .waitFor();
}

/** This profile's sync config row: its device id and key bytes. */
function configOf(page) {
  return page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open('tealeaf');
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const get = db.transaction('sync').objectStore('sync').get('config');
          get.onsuccess = () => {
            db.close();
            const { device, key } = get.result.value;
            resolve({ id: device.info.id, raw: Array.from(key.raw) });
          };
          get.onerror = () => (db.close(), reject(get.error));
        };
      }),
  );
}

/** This profile's device id (its `config` row). */
export async function deviceIdOf(page) {
  return (await configOf(page)).id;
}

/** The sync key a profile keeps (its `config` row), as bytes. */
export async function syncKeyOf(page) {
  return new Uint8Array((await configOf(page)).raw);
}

/** Memory and link counts, read in one transaction (cheap enough to poll every few ms). */
export const counts = (page) =>
  page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open('tealeaf');
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const tx = db.transaction(['memories', 'edges'], 'readonly');
          const m = tx.objectStore('memories').count();
          const e = tx.objectStore('edges').count();
          tx.oncomplete = () => (db.close(), resolve({ memories: m.result, edges: e.result }));
          tx.onerror = () => (db.close(), reject(tx.error));
        };
      }),
  );

const enc = new TextEncoder();
const b64url = (b) => Buffer.from(b).toString('base64url');
const hex = (b) => Buffer.from(b).toString('hex');

async function hkdf(secret, info, bytes) {
  const base = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveBits']);
  return new Uint8Array(
    await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: enc.encode(info) }, base, bytes * 8),
  );
}

async function pipe(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

/**
 * Posts as device `deviceId` (32 hex) into the room of `raw`: Yjs updates written into the record
 * document's maps, sealed as the envelope says (`| 1 | key id | device | seq | nonce | AES-GCM |`).
 */
export async function keyHolder(raw, relayUrl, deviceId = 'e'.repeat(32)) {
  const keyId = await hkdf(raw, 'tealeaf-sync key-id', 8);
  const room = b64url(await hkdf(raw, 'tealeaf-sync room', 32));
  const aes = await crypto.subtle.importKey('raw', await hkdf(raw, 'tealeaf-sync aes-gcm', 32), 'AES-GCM', false, ['encrypt', 'decrypt']);
  // The room's Ed25519 key (docs/SYNC.md, "Who may write a room"): the relay takes signed posts only.
  const pkcs8 = new Uint8Array([
    ...Buffer.from('302e020100300506032b657004220420', 'hex'),
    ...(await hkdf(raw, 'tealeaf-sync room-signing', 32)),
  ]);
  const signing = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, true, ['sign']);
  const publicKey = (await crypto.subtle.exportKey('jwk', signing)).x;
  const signed = async (method, path, body) => {
    const time = String(Date.now());
    const nonce = b64url(crypto.getRandomValues(new Uint8Array(16)));
    const digest = b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', body)));
    const sig = new Uint8Array(
      await crypto.subtle.sign({ name: 'Ed25519' }, signing, enc.encode(signedText(method, path, time, nonce, digest))),
    );
    return { 'x-tealeaf-key': publicKey, 'x-tealeaf-time': time, 'x-tealeaf-nonce': nonce, 'x-tealeaf-sig': b64url(sig) };
  };
  const roomAd = enc.encode(`tealeaf-sync v1|${room}|`);
  const url = `${relayUrl}/v1/rooms/${room}`;
  const doc = new Y.Doc();
  let seq = 0;
  const seal = async (body, at) => {
    const header = new Uint8Array(33);
    header[0] = 1;
    header.set(keyId, 1);
    header.set(Buffer.from(deviceId, 'hex'), 9);
    new DataView(header.buffer).setBigUint64(25, BigInt(at));
    const nonce = crypto.getRandomValues(new Uint8Array(12));
    const ad = new Uint8Array([...roomAd, ...header]);
    const ct = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: ad }, aes, body));
    return new Uint8Array([...header, ...nonce, ...ct]);
  };
  const open = async (bytes) => {
    if ((bytes[0] !== 1 && bytes[0] !== 2) || hex(bytes.subarray(1, 9)) !== hex(keyId)) return undefined;
    const ad = new Uint8Array([...roomAd, ...bytes.subarray(0, 33)]);
    try {
      const iv = bytes.subarray(33, 45);
      return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: ad }, aes, bytes.subarray(45)));
    } catch {
      return undefined;
    }
  };
  /** The room's messages, as the relay frames them. */
  const messages = async (after = 0) => {
    const res = await fetch(`${url}/messages?after=${after}&limit=10000`);
    const buf = new Uint8Array(await res.arrayBuffer());
    const out = [];
    for (let at = 0; at + 8 <= buf.length;) {
      const view = new DataView(buf.buffer, buf.byteOffset + at);
      const len = view.getUint32(4);
      out.push({ seq: view.getUint32(0), bytes: buf.slice(at + 8, at + 8 + len) });
      at += 8 + len;
    }
    return out;
  };
  const post = async (sealed) => {
    const res = await fetch(`${url}/messages`, {
      method: 'POST',
      body: sealed,
      headers: await signed('POST', `/v1/rooms/${room}/messages`, sealed),
    });
    if (!res.ok) throw new Error(`the relay answered ${res.status}`);
    return (await res.json()).seq;
  };
  /** A version 2 plaintext's kind and payload (the two varuints after the kind skipped). */
  const body = (version, plain) => {
    let at = 1;
    if (version === 2) for (let n = 0; n < 2; n++) while (plain[at++] & 128);
    return { kind: plain[0], payload: plain.subarray(at) };
  };
  const gunzip = (b) => pipe(b, new DecompressionStream('gzip'));
  return {
    room,
    messages,
    /** Posts bytes as they are (a message copied from the room: a replay). */
    post,
    /** Every message of the room opened and unzipped: what the relay would hand a device paired now. */
    plaintexts: async () => {
      const out = [];
      for (const m of await messages()) {
        const plain = await open(m.bytes);
        if (!plain) continue;
        const { kind, payload } = body(m.bytes[0], plain);
        if (kind === 1) out.push(await gunzip(payload));
        else if (kind === 8) {
          // A snapshot: a varuint length, the sender's book as JSON, then the gzipped document.
          let len = 0;
          let at = 0;
          for (let mult = 1; ; mult *= 128) {
            const x = payload[at++];
            len += (x & 127) * mult;
            if (x < 128) break;
          }
          out.push(await gunzip(payload.subarray(at + len)));
        } else out.push(payload);
      }
      return Buffer.concat(out);
    },
    /** Reads the room into its document, so what it writes next wins over what is there. */
    read: async () => {
      for (const m of await messages()) {
        const plain = await open(m.bytes);
        if (plain?.[0] !== 1) continue;
        Y.applyUpdate(doc, await gunzip(body(m.bytes[0], plain).payload));
      }
    },
    /** Writes `values` (map name -> key -> value) and posts the update as its next message. */
    write: async (values) => {
      let update;
      const grab = (u) => (update = u);
      doc.on('update', grab);
      doc.transact(() => {
        for (const [name, entries] of Object.entries(values)) for (const [k, v] of Object.entries(entries)) doc.getMap(name).set(k, v);
      });
      doc.off('update', grab);
      const gz = await pipe(update, new CompressionStream('gzip'));
      return post(await seal(new Uint8Array([1, ...gz]), ++seq));
    },
  };
}

/** Where in the profile's IndexedDB (any store, the `sync` rows included) `words` still are. */
export async function whereInDb(page, words) {
  return page.evaluate(
    (words) =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open('tealeaf');
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const names = [...db.objectStoreNames];
          const tx = db.transaction(names, 'readonly');
          const found = new Set();
          const latin = new TextDecoder('latin1');
          const walk = (where, v) => {
            if (v instanceof Uint8Array || v instanceof ArrayBuffer) {
              if (latin.decode(v).includes(words)) found.add(where);
            } else if (ArrayBuffer.isView(v)) return;
            else if (Array.isArray(v)) v.forEach((x) => walk(where, x));
            else if (v && typeof v === 'object') Object.values(v).forEach((x) => walk(where, x));
            else if (typeof v === 'string' && v.includes(words)) found.add(where);
          };
          for (const n of names) {
            const r = tx.objectStore(n).getAll();
            r.onsuccess = () => r.result.forEach((row) => walk(n === 'sync' ? `sync ${row.key}` : n, row));
          }
          tx.oncomplete = () => (db.close(), resolve([...found]));
          tx.onerror = () => (db.close(), reject(tx.error));
        };
      }),
    words,
  );
}
