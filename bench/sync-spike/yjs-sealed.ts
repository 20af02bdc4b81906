// Spike: first sync of N memory-sized records as Yjs updates, compressed, sealed (AES-GCM,
// src/services/sync/envelope.ts) and relayed through Tealeaf's relay (relay/relay.mjs) on
// 127.0.0.1, then the time for one change to reach the other device (docs/SYNC.md).
//   node --expose-gc --import tsx bench/sync-spike/yjs-sealed.ts 10000 [records per update, default 500]
// Both devices run in this process (one Y.Doc each); the relay stores to a temporary folder.
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import * as Y from 'yjs';
import { startRelay } from '../../relay/relay.mjs';
import { Sealer, ReplayGuard } from '../../src/services/sync/envelope';
import { generateSyncKey, roomOf } from '../../src/services/sync/keys';
import { RelayClient } from '../../src/services/sync/relay-client';
import { gzippedBackupBytes, makeMemories, mb } from './records.mjs';

const N = Number(process.argv[2] ?? 10000);
const CHUNK = Number(process.argv[3] ?? 500);
const dir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-bench-'));
const relay = await startRelay({ port: 0, dir });
const client = new RelayClient(relay.url);
const key = await generateSyncKey();
const room = await roomOf(key);
const sealer = await Sealer.of(key, room);
const A = 'a'.repeat(32);
let seqA = 0;
let bytesSent = 0;

async function send(update: Uint8Array): Promise<void> {
  const sealed = await sealer.seal(A, ++seqA, new Uint8Array(gzipSync(update)));
  bytesSent += sealed.length;
  await client.post(room, sealed);
}

// Device A: its memories, written in chunks (as an import or the first turn-on of sync would).
const records = makeMemories(N);
const a = new Y.Doc();
const ma = a.getMap('memories');
const pending: Uint8Array[] = [];
a.on('update', (u: Uint8Array) => pending.push(u));
const tUp = performance.now();
for (let i = 0; i < N; i += CHUNK) {
  a.transact(() => records.slice(i, i + CHUNK).forEach((m) => ma.set(m.id, m)));
  while (pending.length) await send(pending.shift()!);
}
const uploadMs = performance.now() - tUp;

// Device B: a fresh device reads the room from the start.
(globalThis as { gc?: () => void }).gc?.();
const heap0 = process.memoryUsage().heapUsed;
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
const b = new Y.Doc();
const mbMap = b.getMap('memories');
const guard = new ReplayGuard();
let bytesReceived = 0;
let cursor = 0;
/** The longest open + unzip + apply of one message: a main-thread task in the app. */
let longestStepMs = 0;
async function pull(): Promise<void> {
  for (;;) {
    const { messages } = await client.read(room, cursor, 1000);
    if (messages.length === 0) return;
    for (const m of messages) {
      bytesReceived += m.bytes.length;
      const t = performance.now();
      const opened = await sealer.open(m.bytes, guard);
      Y.applyUpdate(b, gunzipSync(opened.plaintext));
      longestStepMs = Math.max(longestStepMs, performance.now() - t);
      cursor = m.seq;
    }
  }
}
const tDown = performance.now();
await pull();
const firstSyncMs = performance.now() - tDown;
const firstSyncLongestStepMs = longestStepMs;
clearInterval(sampler);
if (mbMap.size !== N) throw new Error(`B has ${mbMap.size} of ${N}`);
const heapMB = mb(process.memoryUsage().heapUsed - heap0);

// One change, both online: B long-polls the relay; A edits one memory.
const latencies: number[] = [];
let stop = false;
const seen = new Map<string, () => void>();
mbMap.observe((e) => e.keysChanged.forEach((k) => seen.get(k)?.()));
const listener = (async () => {
  while (!stop) {
    const last = await client.wait(room, cursor);
    if (last > cursor) await pull();
  }
})();
for (let i = 0; i < 20; i++) {
  const rec = { ...records[i], text: `edited ${i}`, edited: true };
  const arrived = new Promise<void>((r) => seen.set(rec.id, r));
  const t = performance.now();
  a.transact(() => ma.set(rec.id, rec));
  while (pending.length) await send(pending.shift()!);
  await arrived;
  latencies.push(performance.now() - t);
}
stop = true;
latencies.sort((x, y) => x - y);
const stored = readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
const backupGz = gzippedBackupBytes(records);
console.log(
  JSON.stringify({
    engine: 'yjs, sealed updates through relay/relay.mjs',
    n: N,
    uploadMs: Math.round(uploadMs),
    firstSyncMs: Math.round(firstSyncMs),
    bytesSent,
    bytesReceived,
    backupGzBytes: backupGz,
    ratioToBackupGz: Math.round((bytesReceived / backupGz) * 100) / 100,
    relayStoredBytes: stored,
    longestStepMs: Math.round(firstSyncLongestStepMs),
    receiverHeapMB: heapMB,
    peakRssMB: mb(peakRss),
    changeMedianMs: Math.round(latencies[10] * 10) / 10,
    changeMaxMs: Math.round(latencies[19] * 10) / 10,
  }),
);
void listener;
await relay.close();
process.exit(0);
