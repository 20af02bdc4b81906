#!/usr/bin/env node
// Tealeaf's sync relay (docs/SYNC.md, "Relay"): a mailbox of sealed messages per room. It keeps
// bytes it cannot read, in the order they came, and hands them to whoever names the room. It knows
// no keys, no devices and no records; a room's id is derived one way from the sync key.
//
//   node relay/relay.mjs [--host 127.0.0.1] [--port 8787] [--dir .relay-data]   (npm run relay)
//
// HTTP, CORS open (the app may be served from anywhere; the room id is the capability):
//   POST   /v1/rooms/:room/messages          body: one sealed message -> 201 {"seq":n}
//          ...?compact=n                    the same, then every message at or before position n
//                                           is dropped (a device's snapshot replaces them; issue 30);
//                                           positions are kept, so cursors stay valid
//   GET    /v1/rooms/:room/messages?after=n  -> frames [u32 seq][u32 length][bytes]..., header x-last-seq
//   GET    /v1/rooms/:room/wait?after=n      long poll: answers {"last":n} once last > n, or after 25 s
//   DELETE /v1/rooms/:room                   forgets the room (after a key rotation)
// Rooms named pair-... are pairing mailboxes: at most 16 messages, forgotten 15 minutes after
// their first message (a pairing code lives 10).
// On disk: <dir>/<room>.log, records [u32 length][bytes], appended; a torn last record is cut at start.
// A compacted log starts with [u32 0xFFFFFFFF][u32 n]: the first n positions were dropped. It is
// written whole to a new file and renamed over the old one, so a crash leaves one or the other.
import { createServer } from 'node:http';
import { mkdirSync, openSync, readSync, fstatSync, closeSync, truncateSync, rmSync, existsSync, readdirSync, statSync } from 'node:fs';
import { appendFile, open as openFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOM = /^[A-Za-z0-9_-]{22,96}$/;
export const MAX_MESSAGE = 8 * 1024 * 1024;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;
const WAIT_MS = 25_000;
export const PAIR_TTL_MS = 15 * 60 * 1000;
const PAIR_MAX_MESSAGES = 16;
const isPairing = (id) => id.startsWith('pair-');
const BASE_MARK = 0xffffffff;

/** One room's log: offsets in memory, bytes on disk. */
class Room {
  constructor(path) {
    this.path = path;
    this.offsets = [];
    this.lengths = [];
    this.size = 0;
    /** Positions dropped before the first record kept (compaction). */
    this.base = 0;
    this.waiters = new Set();
    this.tail = Promise.resolve();
    if (existsSync(path)) this.#load();
  }

  #load() {
    const fd = openSync(this.path, 'r');
    const total = fstatSync(fd).size;
    const head = Buffer.alloc(4);
    let at = 0;
    if (total >= 8) {
      readSync(fd, head, 0, 4, 0);
      if (head.readUInt32BE(0) === BASE_MARK) {
        readSync(fd, head, 0, 4, 4);
        this.base = head.readUInt32BE(0);
        at = 8;
      }
    }
    while (at + 4 <= total) {
      readSync(fd, head, 0, 4, at);
      const len = head.readUInt32BE(0);
      if (at + 4 + len > total) break;
      this.offsets.push(at + 4);
      this.lengths.push(len);
      at += 4 + len;
    }
    closeSync(fd);
    if (at < total) truncateSync(this.path, at); // a write cut off by a crash
    this.size = at;
  }

  get last() {
    return this.base + this.offsets.length;
  }

  /** Appends in arrival order; one write at a time, so seq and file order agree. */
  append(bytes) {
    const run = this.tail.then(async () => {
      const head = Buffer.alloc(4);
      head.writeUInt32BE(bytes.length, 0);
      await appendFile(this.path, Buffer.concat([head, bytes]));
      this.offsets.push(this.size + 4);
      this.lengths.push(bytes.length);
      this.size += 4 + bytes.length;
      const seq = this.last;
      for (const wake of this.waiters) wake(seq);
      return seq;
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Drops every message at or before position `upTo`: the kept ones are written to a new file that replaces the log. */
  compact(upTo) {
    const run = this.tail.then(async () => {
      if (upTo <= this.base) return;
      const keepFrom = upTo - this.base;
      const tmp = `${this.path}.compact`;
      const out = await openFile(tmp, 'w');
      const src = openSync(this.path, 'r');
      try {
        const head = Buffer.alloc(8);
        head.writeUInt32BE(BASE_MARK, 0);
        head.writeUInt32BE(upTo, 4);
        await out.write(head);
        const offsets = [];
        let size = 8;
        for (let i = keepFrom; i < this.offsets.length; i++) {
          const rec = Buffer.alloc(4 + this.lengths[i]);
          rec.writeUInt32BE(this.lengths[i], 0);
          readSync(src, rec, 4, this.lengths[i], this.offsets[i]);
          await out.write(rec);
          offsets.push(size + 4);
          size += rec.length;
        }
        await out.sync();
        this.lengths = this.lengths.slice(keepFrom);
        this.offsets = offsets;
        this.size = size;
        this.base = upTo;
      } finally {
        closeSync(src);
        await out.close();
      }
      await rename(tmp, this.path);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  read(after, limit) {
    const frames = [];
    let bytes = 0;
    const from = Math.max(0, after - this.base);
    const fd = this.offsets.length > from ? openSync(this.path, 'r') : null;
    for (let i = from; i < this.offsets.length && frames.length < limit; i++) {
      if (bytes > 0 && bytes + this.lengths[i] > MAX_BATCH_BYTES) break;
      const frame = Buffer.alloc(8 + this.lengths[i]);
      frame.writeUInt32BE(this.base + i + 1, 0);
      frame.writeUInt32BE(this.lengths[i], 4);
      readSync(fd, frame, 8, this.lengths[i], this.offsets[i]);
      frames.push(frame);
      bytes += frame.length;
    }
    if (fd !== null) closeSync(fd);
    return Buffer.concat(frames);
  }
}

/** Starts a relay; resolves with its URL and a close function. */
export async function startRelay({ host = '127.0.0.1', port = 8787, dir = '.relay-data', now = Date.now, waitMs = WAIT_MS } = {}) {
  mkdirSync(dir, { recursive: true });
  const rooms = new Map();
  const expired = (file) => now() - statSync(file).mtimeMs > PAIR_TTL_MS;
  const room = (id) => {
    const path = join(dir, `${id}.log`);
    let r = rooms.get(id);
    if (isPairing(id) && existsSync(path) && now() - (r?.bornAt ?? statSync(path).mtimeMs) > PAIR_TTL_MS) {
      rooms.delete(id);
      rmSync(path, { force: true });
      r = undefined;
    }
    if (!r) {
      rooms.set(id, (r = new Room(path)));
      r.bornAt = existsSync(path) ? statSync(path).mtimeMs : now();
    }
    return r;
  };
  // Mailboxes nobody came back to.
  const sweep = () => {
    for (const f of readdirSync(dir)) {
      if (isPairing(f) && expired(join(dir, f))) {
        rooms.delete(f.replace(/\.log$/, ''));
        rmSync(join(dir, f), { force: true });
      }
    }
  };
  sweep();
  const sweeper = setInterval(sweep, 60_000);
  sweeper.unref();
  const server = createServer((req, res) => {
    handle(req, res, room, rooms, dir, waitMs).catch((e) => send(res, 500, { error: String(e?.message ?? e) }));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        clearInterval(sweeper);
        for (const r of rooms.values()) for (const wake of r.waiters) wake(r.last);
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

function send(res, status, body, headers = {}) {
  const isBytes = Buffer.isBuffer(body);
  res.writeHead(status, {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'x-last-seq',
    'content-type': isBytes ? 'application/octet-stream' : 'application/json',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(isBytes ? body : JSON.stringify(body));
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > MAX_MESSAGE) throw Object.assign(new Error('message too large'), { status: 413 });
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

async function handle(req, res, room, rooms, dir, waitMs) {
  const url = new URL(req.url ?? '/', 'http://relay');
  if (req.method === 'OPTIONS') {
    res.writeHead(204, {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST, DELETE',
      'access-control-allow-headers': 'content-type',
      'access-control-max-age': '86400',
    });
    return res.end();
  }
  if (url.pathname === '/v1/health') return send(res, 200, { relay: 'tealeaf', version: 1 });
  const m = /^\/v1\/rooms\/([^/]+)(\/messages|\/wait)?$/.exec(url.pathname);
  if (!m || !ROOM.test(m[1])) return send(res, 404, { error: 'no such route' });
  const id = m[1];
  const after = Math.max(0, Number.parseInt(url.searchParams.get('after') ?? '0', 10) || 0);
  if (m[2] === '/messages' && req.method === 'POST') {
    let body;
    try {
      body = await readBody(req);
    } catch (e) {
      return send(res, e.status ?? 400, { error: e.message });
    }
    if (body.length === 0) return send(res, 400, { error: 'empty message' });
    const r = room(id);
    if (isPairing(id) && r.last >= PAIR_MAX_MESSAGES) return send(res, 429, { error: 'this pairing mailbox is full' });
    const compact = url.searchParams.get('compact');
    const upTo = compact === null ? undefined : Number(compact);
    if (upTo !== undefined && (!Number.isSafeInteger(upTo) || upTo < 0 || upTo > r.last || isPairing(id))) {
      return send(res, 400, { error: 'compact names a position this room does not have' });
    }
    const seq = await r.append(body);
    if (upTo !== undefined) await r.compact(upTo);
    return send(res, 201, { seq });
  }
  if (m[2] === '/messages' && req.method === 'GET') {
    const limit = Math.min(10_000, Math.max(1, Number.parseInt(url.searchParams.get('limit') ?? '1000', 10) || 1000));
    const r = room(id);
    return send(res, 200, r.read(after, limit), { 'x-last-seq': String(r.last) });
  }
  if (m[2] === '/wait' && req.method === 'GET') {
    const r = room(id);
    if (r.last > after) return send(res, 200, { last: r.last });
    let done = false;
    const finish = (last) => {
      if (done) return;
      done = true;
      r.waiters.delete(finish);
      clearTimeout(timer);
      send(res, 200, { last });
    };
    const timer = setTimeout(() => finish(r.last), waitMs);
    r.waiters.add(finish);
    req.on('close', () => {
      done = true;
      r.waiters.delete(finish);
      clearTimeout(timer);
    });
    return;
  }
  if (!m[2] && req.method === 'DELETE') {
    const r = rooms.get(id);
    if (r) await r.tail;
    rooms.delete(id);
    rmSync(join(dir, `${id}.log`), { force: true });
    return send(res, 200, { deleted: true });
  }
  return send(res, 405, { error: 'method not allowed' });
}

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : (process.env[`RELAY_${name.toUpperCase()}`] ?? fallback);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const relay = await startRelay({ host: arg('host', '127.0.0.1'), port: Number(arg('port', '8787')), dir: arg('dir', '.relay-data') });
  console.log(`Tealeaf relay on ${relay.url}, storing sealed messages in ${arg('dir', '.relay-data')}`);
}
