// Spike: first sync of N memory-sized records through automerge-repo-sync-server (plaintext, the
// server is a full Automerge peer storing documents on disk). One document holding a map of all
// records (a document per record would be N sync sessions). Run from /tmp/sync-spike/automerge:
//   cp bench/sync-spike/*.mjs /tmp/sync-spike/automerge/ && cd /tmp/sync-spike/automerge && node automerge-repo.mjs 10000
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Repo } from '@automerge/automerge-repo';
import { WebSocketClientAdapter } from '@automerge/automerge-repo-network-websocket';
import WebSocket from 'ws';
import { makeMemories, gzippedBackupBytes, mb } from './records.mjs';

const N = Number(process.argv[2] ?? 10000);
const PORT = 4900 + Math.floor(Math.random() * 200);
const dir = mkdtempSync(join(tmpdir(), 'amrg-'));
const server = spawn('node', ['node_modules/@automerge/automerge-repo-sync-server/src/index.js'], {
  env: { ...process.env, PORT: String(PORT), DATA_DIR: dir },
  stdio: 'ignore',
});
await new Promise((r) => setTimeout(r, 1500));

const records = makeMemories(N);
const ta = performance.now();
const ra = new Repo({ network: [new WebSocketClientAdapter(`ws://127.0.0.1:${PORT}`)] });
const h = ra.create({ memories: {} });
h.change((d) => {
  for (const m of records) d.memories[m.id] = m;
});
const buildMs = performance.now() - ta;
// Wait until the server has the document: ask for it from a fresh repo.
globalThis.WebSocket = WebSocket;
// Upload: until a fresh peer can find the document on the server.
const tu = performance.now();
for (;;) {
  const rc = new Repo({ network: [new WebSocketClientAdapter(`ws://127.0.0.1:${PORT}`)] });
  try {
    const hc = await rc.find(h.url);
    if (Object.keys(hc.doc().memories).length === N) break;
  } catch {
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    rc.shutdown();
  }
}
const uploadMs = performance.now() - tu;

const heap0 = process.memoryUsage().heapUsed;
const t0 = performance.now();
const adapter = new WebSocketClientAdapter(`ws://127.0.0.1:${PORT}`);
const rb = new Repo({ network: [adapter] });
const hb = await rb.find(h.url);
const doc = hb.doc();
const got = Object.keys(doc.memories).length;
const ms = performance.now() - t0;
const heap = process.memoryUsage().heapUsed - heap0;
console.log(
  JSON.stringify({
    engine: 'automerge-repo+sync-server (plaintext)',
    n: N,
    got,
    localBuildMs: Math.round(buildMs),
    uploadMs: Math.round(uploadMs),
    firstSyncMs: Math.round(ms),
    backupGzBytes: gzippedBackupBytes(records),
    docHeapMB: mb(heap),
  }),
);
server.kill();
process.exit(0);
