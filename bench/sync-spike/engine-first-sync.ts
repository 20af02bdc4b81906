// The chosen design end to end: a first device turns sync on with N memories (SyncEngine.adoptStore:
// parts of 500 records, each a sealed, compressed Yjs update through relay/relay.mjs on
// 127.0.0.1), a second device pulls them and writes them through `apply` (the in-memory store,
// with the real integrity rule); then single changes, one at a time, with the second device waiting.
//   node --expose-gc --import tsx bench/sync-spike/engine-first-sync.ts 10000
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../relay/relay.mjs';
import { Sealer } from '../../src/services/sync/envelope';
import { SyncEngine } from '../../src/services/sync/engine';
import { generateSyncKey, roomOf } from '../../src/services/sync/keys';
import { RelayClient } from '../../src/services/sync/relay-client';
import { InMemoryRepository } from '../../tests/support/in-memory-repository';
import { writeLocal } from '../../tests/unit/sync/local-write';
import { gzippedBackupBytes, makeMemories, mb } from './records.mjs';

const N = Number(process.argv[2] ?? 10000);
const dir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-bench-'));
const relay = await startRelay({ port: 0, dir });
const client = new RelayClient(relay.url);
const key = await generateSyncKey();
const room = await roomOf(key);
const sealer = await Sealer.of(key, room);
const engine = (id: string, store: InMemoryRepository) =>
  new SyncEngine({ store, relay: client, room, sealer, deviceId: id.repeat(32), wipe: async () => undefined });

const records = makeMemories(N);
const storeA = new InMemoryRepository();
for (let i = 0; i < N; i += 5000) await storeA.apply({ memories: records.slice(i, i + 5000) });
const a = engine('a', storeA);
const tUp = performance.now();
await a.adoptStore();
const uploadMs = performance.now() - tUp;

(globalThis as { gc?: () => void }).gc?.();
const heap0 = process.memoryUsage().heapUsed;
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
const storeB = new InMemoryRepository();
const b = engine('b', storeB);
const tDown = performance.now();
await b.pull();
const firstSyncMs = performance.now() - tDown;
clearInterval(sampler);
if (storeB.memories.size !== N) throw new Error(`B has ${storeB.memories.size} of ${N}`);
const heapMB = mb(process.memoryUsage().heapUsed - heap0);
const stored = readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);

const latencies: number[] = [];
let cursor = (await client.read(room, 0, 1)).last;
for (let i = 0; i < 20; i++) {
  const id = records[i].id;
  const t = performance.now();
  const waiting = client.wait(room, cursor).then(() => b.pull());
  await writeLocal(a, { memoryPatches: [{ id, text: `edited ${i}`, edited: true }] });
  await a.push();
  await waiting;
  if (storeB.memories.get(id)?.text !== `edited ${i}`) throw new Error('change did not arrive');
  latencies.push(performance.now() - t);
  cursor++;
}
latencies.sort((x, y) => x - y);
console.log(
  JSON.stringify({
    engine: 'SyncEngine (Yjs maps, sealed updates, relay, apply)',
    n: N,
    uploadMs: Math.round(uploadMs),
    firstSyncMs: Math.round(firstSyncMs),
    relayStoredBytes: stored,
    backupGzBytes: gzippedBackupBytes(records),
    ratioToBackupGz: Math.round((stored / gzippedBackupBytes(records)) * 100) / 100,
    receiverHeapMB: heapMB,
    peakRssMB: mb(peakRss),
    changeMedianMs: Math.round(latencies[10] * 10) / 10,
    changeMaxMs: Math.round(latencies[19] * 10) / 10,
  }),
);
await relay.close();
process.exit(0);
