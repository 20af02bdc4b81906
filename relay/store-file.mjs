// The embedded store (npm run relay): a file per room in one folder, for one person on one computer.
// <room>.log holds records [u32 length][bytes], appended; a compacted log starts with
// [u32 0xFFFFFFFF][u32 n] (the first n positions were dropped) and is written whole to a new file
// renamed over the old one. <room>.key holds the room's public key (docs/SYNC.md, "Who may write a
// room"); <room>.closed the position of the key change's notice that closed the room, written after
// the notice and before its 201. A post is acknowledged only after its bytes are flushed to disk
// (fdatasync).
// relay.nonces holds the nonces of signed requests, a line each ("nonce time"), flushed before the
// request is taken, so a request replayed after a restart is refused as one replayed before it.
// One process only: the order of a room's writes is kept by a promise chain in this process.
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  truncateSync,
} from 'node:fs';
import { appendFile, open as openFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Windows, refuse } from './limits.mjs';

const BASE_MARK = 0xffffffff;
export const isPairing = (id) => id.startsWith('pair-');

class Room {
  constructor(path, closedPath) {
    this.path = path;
    this.closedPath = closedPath;
    /** The closing notice's position, once a key change closed the room. */
    this.closed = existsSync(closedPath) ? Number(readFileSync(closedPath, 'utf8')) : undefined;
    this.offsets = [];
    this.lengths = [];
    this.size = 0;
    this.base = 0;
    this.tail = Promise.resolve();
    this.usedAt = 0;
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
    if (at < total) truncateSync(this.path, at); // a write cut off by a crash: never acknowledged
    this.size = at;
  }

  get last() {
    return this.base + this.offsets.length;
  }

  get bytes() {
    return this.lengths.reduce((a, b) => a + b, 0);
  }

  /** One write at a time per room, so positions and file order agree. */
  serial(fn) {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  async append(bytes) {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(bytes.length, 0);
    const fh = await openFile(this.path, 'a');
    try {
      await fh.write(Buffer.concat([head, bytes]));
      await fh.datasync();
    } finally {
      await fh.close();
    }
    this.offsets.push(this.size + 4);
    this.lengths.push(bytes.length);
    this.size += 4 + bytes.length;
    return this.last;
  }

  /** Drops every message at or before `upTo`: the kept ones go to a new file that replaces the log. */
  async compact(upTo) {
    if (upTo <= this.base) return;
    const keepFrom = upTo - this.base;
    const tmp = `${this.path}.compact`;
    const out = await openFile(tmp, 'w');
    const src = openSync(this.path, 'r');
    const offsets = [];
    let size = 8;
    try {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(BASE_MARK, 0);
      head.writeUInt32BE(upTo, 4);
      await out.write(head);
      for (let i = keepFrom; i < this.offsets.length; i++) {
        const rec = Buffer.alloc(4 + this.lengths[i]);
        rec.writeUInt32BE(this.lengths[i], 0);
        readSync(src, rec, 4, this.lengths[i], this.offsets[i]);
        await out.write(rec);
        offsets.push(size + 4);
        size += rec.length;
      }
      await out.sync();
    } finally {
      closeSync(src);
      await out.close();
    }
    await rename(tmp, this.path);
    this.lengths = this.lengths.slice(keepFrom);
    this.offsets = offsets;
    this.size = size;
    this.base = upTo;
  }

  read(after, limit, maxBytes) {
    const out = [];
    let bytes = 0;
    const from = Math.max(0, after - this.base);
    const fd = this.offsets.length > from ? openSync(this.path, 'r') : null;
    for (let i = from; i < this.offsets.length && out.length < limit; i++) {
      if (bytes > 0 && bytes + this.lengths[i] > maxBytes) break;
      const body = Buffer.alloc(this.lengths[i]);
      readSync(fd, body, 0, this.lengths[i], this.offsets[i]);
      out.push({ seq: this.base + i + 1, body });
      bytes += body.length;
    }
    if (fd !== null) closeSync(fd);
    return out;
  }
}

/** Nonces of signed requests seen in their window, in memory and in a file that outlives a restart. */
class NonceBook {
  constructor(path) {
    this.path = path;
    this.seen = new Map();
    this.tail = Promise.resolve();
    if (!existsSync(path)) return;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const [nonce, at] = line.split(' ');
      // A last line cut off by a crash was never flushed, so its request was never taken.
      if (nonce && /^\d+$/.test(at ?? '')) this.seen.set(nonce, Number(at));
    }
  }

  #serial(fn) {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Takes a nonce once (refused if seen in its window); resolves when it is on disk. */
  take(nonce, now) {
    if (this.seen.has(nonce)) throw refuse.replayed();
    this.seen.set(nonce, now);
    return this.#serial(() => appendFile(this.path, `${nonce} ${now}\n`, { flush: true }));
  }

  /** Forgets nonces seen before `before`, in memory and on disk. */
  sweep(before) {
    let dropped = false;
    for (const [n, at] of this.seen)
      if (at < before) {
        this.seen.delete(n);
        dropped = true;
      }
    if (!dropped) return this.tail;
    return this.#serial(async () => {
      const text = [...this.seen].map(([n, at]) => `${n} ${at}\n`).join('');
      await writeFile(`${this.path}.tmp`, text, { flush: true });
      await rename(`${this.path}.tmp`, this.path);
    });
  }
}

export class FileStore {
  kind = 'file';

  constructor(dir) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    /** Rooms in use; one unused for a while is dropped from memory (its files stay). */
    this.rooms = new Map();
    this.nonces = new NonceBook(join(dir, 'relay.nonces'));
    /** New rooms per address this hour, counted in the step that creates one. */
    this.births = new Windows(3600_000, () => this.clock);
    this.clock = 0;
    this.listeners = new Set();
    this.cached = { rooms: 0, bytes: 0, messages: 0 };
  }

  #log = (id) => join(this.dir, `${id}.log`);
  #keyFile = (id) => join(this.dir, `${id}.key`);
  #closedFile = (id) => join(this.dir, `${id}.closed`);

  #room(id, now) {
    let r = this.rooms.get(id);
    if (!r) this.rooms.set(id, (r = new Room(this.#log(id), this.#closedFile(id))));
    r.usedAt = now;
    return r;
  }

  /** A pairing mailbox older than its time is forgotten before use. */
  #expirePairing(id, now, ttl) {
    if (!isPairing(id) || !existsSync(this.#log(id))) return;
    if (now - (this.rooms.get(id)?.bornAt ?? statSync(this.#log(id)).mtimeMs) > ttl) {
      this.rooms.delete(id);
      rmSync(this.#log(id), { force: true });
    }
  }

  onStored(fn) {
    this.listeners.add(fn);
  }

  async append(id, body, { key, nonce, compact, close = false, address, limits, now }) {
    this.#expirePairing(id, now, limits.pairTtlMs);
    if (nonce !== undefined) await this.nonces.take(nonce, now);
    const r = this.#room(id, now);
    const seq = await r.serial(async () => {
      // A new room is counted against its address here, with no wait between the check and the
      // count (one process, one thread), and given back if the post is refused before its write.
      this.clock = now;
      const isNew = r.last === 0 && !existsSync(r.path);
      if (isNew) {
        const wait = this.births.take(address, limits.addressRoomsPerHour);
        if (wait) throw refuse.rooms(wait);
      }
      try {
        await this.#claim(id, key);
        if (r.closed !== undefined) throw refuse.roomClosed(r.closed);
        if (isPairing(id) && r.last >= limits.pairMessages) throw refuse.mailboxFull();
        if (compact !== undefined && (compact < 0 || compact > r.last || isPairing(id))) throw refuse.badCompact();
        const freed = compact === undefined ? 0 : r.lengths.slice(0, Math.max(0, compact - r.base)).reduce((a, b) => a + b, 0);
        if (r.bytes - freed + body.length > limits.roomBytes) throw refuse.roomFull(limits.roomBytes);
      } catch (e) {
        if (isNew) this.births.give(address);
        throw e;
      }
      if (r.last === 0) r.bornAt = now;
      const at = await r.append(body);
      this.cached.bytes += body.length;
      if (compact !== undefined) await r.compact(compact);
      if (close) {
        await writeFile(`${r.closedPath}.tmp`, String(at), { flush: true });
        await rename(`${r.closedPath}.tmp`, r.closedPath);
        r.closed = at;
      }
      return at;
    });
    for (const fn of this.listeners) fn(id, seq);
    return { seq };
  }

  /** Checks the writer's key against the room's, claiming a room that has none (a new room, or one from before signatures). */
  async #claim(id, key) {
    if (isPairing(id)) return;
    const file = this.#keyFile(id);
    if (existsSync(file)) {
      if (!readFileSync(file).equals(key)) throw refuse.notYours();
      return;
    }
    await writeFile(`${file}.tmp`, key, { flush: true });
    await rename(`${file}.tmp`, file);
  }

  async read(id, after, limit, maxBytes, now, limits) {
    this.#expirePairing(id, now, limits.pairTtlMs);
    if (!this.rooms.has(id) && !existsSync(this.#log(id))) return { messages: [], last: 0 };
    const r = this.#room(id, now);
    // After the room's queued writes: a compaction renames the new log before its offsets follow,
    // and a read between the two handed out zero-filled bytes for messages that were posted.
    await r.tail;
    return { messages: r.read(after, limit, maxBytes), last: r.last, closed: r.closed };
  }

  async last(id, now, limits) {
    this.#expirePairing(id, now, limits.pairTtlMs);
    if (!this.rooms.has(id) && !existsSync(this.#log(id))) return 0;
    return this.#room(id, now).last;
  }

  async remove(id, key, nonce, now) {
    if (isPairing(id)) throw refuse.mailboxKept();
    await this.nonces.take(nonce, now);
    const file = this.#keyFile(id);
    const r = this.rooms.get(id);
    const run = async () => {
      if (existsSync(file) && !readFileSync(file).equals(key)) throw refuse.notYours();
      // The notice that closed it is what a device unpaired (its old key in hand) would erase.
      const closed = r?.closed ?? (existsSync(this.#closedFile(id)) ? Number(readFileSync(this.#closedFile(id), 'utf8')) : undefined);
      if (closed !== undefined) throw refuse.roomClosed(closed);
      this.rooms.delete(id);
      rmSync(this.#log(id), { force: true });
      rmSync(file, { force: true });
    };
    await (r ? r.serial(run) : run());
    for (const fn of this.listeners) fn(id, 0);
  }

  /** Forgets idle rooms, old pairing mailboxes and old nonces; counts what is left. */
  async sweep(now, limits) {
    this.clock = now;
    this.births.sweep();
    await this.nonces.sweep(now - 2 * limits.clockSkewMs);
    for (const [id, r] of this.rooms) if (now - r.usedAt > 10 * 60_000) this.rooms.delete(id);
    let rooms = 0;
    let bytes = 0;
    for (const f of readdirSync(this.dir)) {
      if (!f.endsWith('.log')) continue;
      const id = f.slice(0, -4);
      const st = statSync(join(this.dir, f));
      const ttl = isPairing(id) ? limits.pairTtlMs : limits.idleMs;
      if (now - st.mtimeMs > ttl) {
        this.rooms.delete(id);
        rmSync(join(this.dir, f), { force: true });
        rmSync(this.#keyFile(id), { force: true });
        rmSync(this.#closedFile(id), { force: true });
        continue;
      }
      rooms++;
      bytes += st.size;
    }
    this.cached = { rooms, bytes, messages: this.cached.messages };
  }

  async totals() {
    let messages = 0;
    for (const r of this.rooms.values()) messages += r.offsets.length;
    return { rooms: this.cached.rooms, bytes: this.cached.bytes, messages };
  }

  async close() {
    await Promise.all([...this.rooms.values()].map((r) => r.tail));
    await this.nonces.tail;
  }
}
