// Spike: first sync of N memory-sized records as PouchDB documents (one per record) replicated
// through pouchdb-server (in memory; a CouchDB stand-in, plaintext). Run from /tmp/sync-spike/pouchdb:
//   cp bench/sync-spike/*.mjs /tmp/sync-spike/pouchdb/ && cd /tmp/sync-spike/pouchdb && node pouchdb-replication.mjs 10000
import { spawn } from 'node:child_process';
import PouchDB from 'pouchdb-core';
import memory from 'pouchdb-adapter-memory';
import http from 'pouchdb-adapter-http';
import replication from 'pouchdb-replication';
import { makeMemories, gzippedBackupBytes, mb } from './records.mjs';

PouchDB.plugin(memory).plugin(http).plugin(replication);
const N = Number(process.argv[2] ?? 10000);
const PORT = 5100 + Math.floor(Math.random() * 300);
const server = spawn(
  'node',
  ['node_modules/pouchdb-server/bin/pouchdb-server', '--in-memory', '--host', '127.0.0.1', '--port', String(PORT)],
  { stdio: 'ignore' },
);
for (let i = 0; i < 50; i++) {
  try {
    if ((await fetch(`http://127.0.0.1:${PORT}/`)).ok) break;
  } catch {
    await new Promise((r) => setTimeout(r, 200));
  }
}
let bytesIn = 0;
const countingFetch = async (url, opts) => {
  const res = await fetch(url, opts);
  const buf = await res.arrayBuffer();
  bytesIn += buf.byteLength;
  return new Response(buf, { status: res.status, headers: res.headers });
};
const records = makeMemories(N).map((m) => ({ _id: m.id, ...m }));
const a = new PouchDB('a', { adapter: 'memory' });
for (let i = 0; i < N; i += 5000) await a.bulkDocs(records.slice(i, i + 5000));
const remote = `http://127.0.0.1:${PORT}/space`;
const tu = performance.now();
await a.replicate.to(remote, { batch_size: 500 });
const uploadMs = performance.now() - tu;
const heap0 = process.memoryUsage().heapUsed;
const b = new PouchDB('b', { adapter: 'memory' });
const t0 = performance.now();
await b.replicate.from(new PouchDB(remote, { fetch: countingFetch }), { batch_size: 500 });
const ms = performance.now() - t0;
const info = await b.info();
console.log(
  JSON.stringify({
    engine: 'pouchdb + pouchdb-server (plaintext)',
    n: N,
    got: info.doc_count,
    uploadMs: Math.round(uploadMs),
    firstSyncMs: Math.round(ms),
    bytesReceived: bytesIn,
    backupGzBytes: gzippedBackupBytes(records),
    heapMB: mb(process.memoryUsage().heapUsed - heap0),
  }),
);
server.kill();
process.exit(0);
