// Helpers for the relay's integration tests: relay processes spawned as `npm run relay` runs them,
// and requests signed by hand (a stranger's key, a replay).
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type Bytes, randomBytes, toBase64Url } from '../../src/services/sync/bytes';
import { generateSyncKey, roomOf } from '../../src/services/sync/keys';
import { type RoomSigner, roomSigner, signedText } from '../../src/services/sync/room-key';
import { until } from '../support/until';

export interface RelayProcess {
  url: string;
  child: ChildProcess;
  /** Every structured log line it wrote. */
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

/** `node relay/relay.mjs --postgres URL --port 0 ...`, resolved once it listens (its log says where). */
export function spawnRelay(postgres: string, args: string[] = []): Promise<RelayProcess> {
  const child = spawn(process.execPath, ['relay/relay.mjs', '--postgres', postgres, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === 'listening') resolve({ url: `http://127.0.0.1:${String(entry.port)}`, child, logs, exited });
    });
    void exited.then((code) => reject(new Error(`the relay exited (${code}) before it listened`)));
  });
}

/** A room of a new sync key; roomOf leaves its signer for RelayClient. */
export async function newRoom(): Promise<{ room: string; signer: RoomSigner }> {
  const key = await generateSyncKey();
  return { room: await roomOf(key), signer: await roomSigner(key.raw) };
}

/** The signing headers of one request, by any signer (a stranger's included). */
export async function signWith(signer: RoomSigner, method: string, path: string, body: Bytes, time = Date.now()) {
  const nonce = toBase64Url(randomBytes(16));
  const digest = toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', body)));
  return {
    'x-tealeaf-key': signer.publicKey,
    'x-tealeaf-time': String(time),
    'x-tealeaf-nonce': nonce,
    'x-tealeaf-sig': await signer.sign(signedText(method, path, String(time), nonce, digest)),
  };
}

/** The status and JSON answer of a request. */
export async function answer(url: string, init: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Waits until the relay at `url` holds `n` long polls (its /metrics says so): a wait is registered, not assumed after a pause. */
export async function holdsPolls(url: string, n: number): Promise<void> {
  const waiters = async () => Number(/^tealeaf_relay_poll_waiters (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
  await until(`${n} long polls on the relay`, async () => (await waiters()) === n, 10);
}
