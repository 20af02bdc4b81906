// bench:sync (BENCHMARKS.md, "Sync (bench:sync)"): the app's sync as it runs in a tab, in Node.
// Two devices, each a SyncService over its own IdbRepository (fake-indexeddb: the real store code,
// its integrity rule and its sync rows), pair by code through relay/relay.mjs on 127.0.0.1; the
// first holds N memories. Measured: the new device's first sync (from
// the key in hand to every memory in its IndexedDB), the relay's bytes against the gzipped backup
// of the same records, peak memory, and the time for one edit to reach the other device's store.
//   npm run bench:sync                    (10,000 then 100,000, each in its own process)
//   node --expose-gc --import tsx bench/sync/app-sync.ts 10000
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../relay/relay.mjs';
import type { Memory } from '../../src/memory/types';
import { openTealeafDb } from '../../src/store/db';
import { IdbRepository } from '../../src/store/repository';
import { SyncService } from '../../src/services/sync/sync-service';
import { gzippedBackupBytes, makeMemories, mb } from '../sync-spike/records.mjs';

const arg = process.argv[2];
if (!arg) {
  // One process per size, so each peak is its own.
  for (const n of [10_000, 100_000]) {
    const run = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, String(n)], { stdio: 'inherit' });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
  process.exit(0);
}
const N = Number(arg);

async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 30 * 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sizeOf = (p: string): number =>
  statSync(p).isDirectory() ? readdirSync(p).reduce((n, f) => n + sizeOf(join(p, f)), 0) : statSync(p).size;
const dir = mkdtempSync(join(tmpdir(), 'tealeaf-bench-sync-'));
const relay = await startRelay({ port: 0, dir });
const device = async () => {
  const repo = new IdbRepository(await openTealeafDb({ factory: new IDBFactory() }));
  return { repo, sync: new SyncService(repo) };
};
const a = await device();
const b = await device();
const records = makeMemories(N) as Memory[];
for (let i = 0; i < N; i += 5000) await a.repo.apply({ memories: records.slice(i, i + 5000) });
if ((await a.repo.countAll()).memories !== N) throw new Error('the first device lacks memories');

await a.sync.turnOn(relay.url, 'laptop');
// The upload is done when the first device is synced with nothing pending and the relay's files
// stop growing for a second (adoptStore's parts go out one after another).
let size = -1;
await until(async () => {
  const was = size;
  size = sizeOf(dir);
  if (was !== size || a.sync.status.phase !== 'synced' || a.sync.status.pending) return false;
  await new Promise((r) => setTimeout(r, 1000));
  return sizeOf(dir) === size;
}, 'upload');
const code = await a.sync.offerCode();
(globalThis as { gc?: () => void }).gc?.();
const heap0 = process.memoryUsage().heapUsed;
let peakRss = process.memoryUsage().rss;
let peakHeap = heap0;
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
}, 20);
await b.sync.join(relay.url, code, 'phone');
const tDown = performance.now();
let longestGap = 0;
let last = performance.now();
// The event loop's longest stall during the first sync (what a tab's main thread would feel).
const ticker = setInterval(() => {
  const now = performance.now();
  longestGap = Math.max(longestGap, now - last - 10);
  last = now;
}, 10);
await until(async () => b.sync.status.phase === 'synced' && (await b.repo.countAll()).memories === N, 'first sync');
const firstSyncMs = performance.now() - tDown;
// What the first device sent (and the second read): the relay's files, pairing included (about 1 KB).
const uploadBytes = sizeOf(dir);
clearInterval(ticker);
clearInterval(sampler);

// One edit at a time on A, timed to its arrival in B's IndexedDB (B's loop long-polls the relay).
const heard = new BroadcastChannel('tealeaf-memory');
const latencies: number[] = [];
const backup = gzippedBackupBytes(records);
const first = {
  bench: 'bench:sync (SyncService + IdbRepository on fake-indexeddb, relay on 127.0.0.1)',
  n: N,
  firstSyncMs: Math.round(firstSyncMs),
  relayBytes: uploadBytes,
  backupGzBytes: backup,
  ratioToBackupGz: Math.round((uploadBytes / backup) * 100) / 100,
  peakHeapMBOverStart: mb(peakHeap - heap0),
  peakRssMB: mb(peakRss),
  longestStallMs: Math.round(longestGap),
};
console.log(JSON.stringify(first));
// At most 20 edits, or 60 s of them.
const editsEnd = Date.now() + 60_000;
for (let i = 0; i < 20 && Date.now() < editsEnd; i++) {
  const id = records[i].id;
  const text = `edited ${i}`;
  const arrived = new Promise<void>((ok) => {
    heard.onmessage = async () => {
      if ((await b.repo.getMemory(id))?.text === text) ok();
    };
  });
  const t = performance.now();
  await a.repo.apply({ memoryPatches: [{ id, text, edited: true }] });
  await arrived;
  latencies.push(performance.now() - t);
}
heard.close();
latencies.sort((x, y) => x - y);
const median = latencies.length ? latencies[Math.floor((latencies.length - 1) / 2)] : NaN;
console.log(
  JSON.stringify({
    n: N,
    edits: latencies.length,
    changeMedianMs: Math.round(median * 10) / 10,
    changeMaxMs: Math.round((latencies.at(-1) ?? NaN) * 10) / 10,
  }),
);
await a.sync.turnOff();
await b.sync.turnOff();
await relay.close();
process.exit(0);
