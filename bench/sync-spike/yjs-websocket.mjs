// Spike: first sync of N memory-sized records through y-websocket's own server (plaintext, the
// server holds a Y.Doc), one Y.Map entry per record. Run from /tmp/sync-spike/yws2 (see SYNC.md):
//   cp bench/sync-spike/*.mjs /tmp/sync-spike/yws2/ && cd /tmp/sync-spike/yws2 && node yjs-websocket.mjs 10000
import { spawn } from 'node:child_process';
import * as Y from 'yjs';
import { WebsocketProvider } from 'y-websocket';
import WebSocket from 'ws';
import { gzipSync } from 'node:zlib';
import { makeMemories, gzippedBackupBytes, mb } from './records.mjs';

const N = Number(process.argv[2] ?? 10000);
const PORT = 4700 + Math.floor(Math.random() * 200);
const server = spawn('node', ['node_modules/y-websocket/bin/server.cjs'], {
  env: { ...process.env, HOST: '127.0.0.1', PORT: String(PORT) },
  stdio: 'ignore',
});
await new Promise((r) => setTimeout(r, 800));

let bytesIn = 0;
class CountingWs extends WebSocket {
  constructor(...a) {
    super(...a);
    this.on('message', (d) => (bytesIn += d.byteLength ?? d.length));
  }
}
const records = makeMemories(N);
const a = new Y.Doc();
const ma = a.getMap('memories');
a.transact(() => records.forEach((m) => ma.set(m.id, m)));
const pa = new WebsocketProvider(`ws://127.0.0.1:${PORT}`, 'room', a, { WebSocketPolyfill: WebSocket });
await new Promise((r) => pa.on('sync', (s) => s && r()));
await new Promise((r) => setTimeout(r, 500));
pa.destroy();

const heap0 = process.memoryUsage().heapUsed;
const b = new Y.Doc();
const t0 = performance.now();
const pb = new WebsocketProvider(`ws://127.0.0.1:${PORT}`, 'room', b, { WebSocketPolyfill: CountingWs });
await new Promise((r) => {
  const mb2 = b.getMap('memories');
  const check = () => mb2.size >= N && r();
  mb2.observe(check);
  check();
});
const ms = performance.now() - t0;
const heap = process.memoryUsage().heapUsed - heap0;
console.log(
  JSON.stringify({
    engine: 'yjs+y-websocket (plaintext)',
    n: N,
    firstSyncMs: Math.round(ms),
    bytesReceived: bytesIn,
    backupGzBytes: gzippedBackupBytes(records),
    docHeapMB: mb(heap),
    updateBytes: Y.encodeStateAsUpdate(b).length,
    updateGzBytes: gzipSync(Y.encodeStateAsUpdate(b)).length,
  }),
);
pb.destroy();
server.kill();
process.exit(0);
