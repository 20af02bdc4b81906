// The PostgreSQL store: any number of relay processes on one database (docs/SYNC.md, "Running a
// relay for many people"). Positions are handed out by the database under the room's row lock, so
// a room's messages commit in position order and a reader never sees a gap that fills later. A post
// is one statement (relay_post in schema.sql), acknowledged after its commit (synchronous_commit as
// the server has it: on by default). LISTEN/NOTIFY carries "a room has a new last position" to every
// process, so a long poll on one wakes when another stores a message.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { Refusal, refuse } from './limits.mjs';

const SCHEMA = readFileSync(new URL('./schema.sql', import.meta.url), 'utf8');
const CHANNEL = 'tealeaf_relay';
// Any number of processes may start at once; one applies the schema at a time.
const SCHEMA_LOCK = 7_311_031;

const REASONS = {
  replayed: refuse.replayed,
  'too-many-rooms': () => refuse.rooms(3600),
  'not-yours': refuse.notYours,
  'mailbox-full': refuse.mailboxFull,
  'bad-compact': refuse.badCompact,
  'room-closed': () => refuse.roomClosed(undefined),
};

/** A database refusal raised by relay_post/relay_delete, as the relay's Refusal; other errors as they are. */
function refusalOf(e, limits) {
  if (e?.code !== 'P0001') return e;
  if (e.message === 'room-full') return refuse.roomFull(limits.roomBytes);
  return REASONS[e.message]?.() ?? e;
}

/** A store error that is not a refusal: the database is away (a restart, the network). */
export function storeUnavailable() {
  return new Refusal(503, 'store-unavailable', 'the relay’s database cannot be reached just now', { retryAfter: 2 });
}

export class PgStore {
  kind = 'postgres';

  static async open(url, { poolSize = 10, log = () => {} } = {}) {
    const s = new PgStore(url, poolSize, log);
    const c = await s.pool.connect();
    try {
      await c.query('SELECT pg_advisory_lock($1)', [SCHEMA_LOCK]);
      await c.query(SCHEMA);
      await c.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK]);
    } finally {
      c.release();
    }
    await s.#listen();
    return s;
  }

  constructor(url, poolSize, log) {
    this.url = url;
    this.log = log;
    this.pool = new pg.Pool({ connectionString: url, max: poolSize });
    // An idle client's error (the database restarted) must not end the process; the next query reconnects.
    this.pool.on('error', (e) => log('warn', 'pool-error', { message: e.message }));
    this.listeners = new Set();
    this.closed = false;
    this.retry = 250;
  }

  onStored(fn) {
    this.listeners.add(fn);
  }

  async #listen() {
    const c = new pg.Client({ connectionString: this.url });
    const lost = (e) => {
      if (this.closed || this.listener !== c) return;
      this.listener = undefined;
      this.log('warn', 'listen-lost', { message: e?.message ?? 'ended' });
      c.end().catch(() => undefined);
      setTimeout(() => this.#reconnect(), this.retry).unref();
    };
    c.on('error', lost);
    c.on('end', lost);
    c.on('notification', (n) => {
      const at = n.payload?.lastIndexOf(' ') ?? -1;
      if (at > 0) for (const fn of this.listeners) fn(n.payload.slice(0, at), Number(n.payload.slice(at + 1)));
    });
    this.listener = c;
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
  }

  async #reconnect() {
    if (this.closed) return;
    try {
      await this.#listen();
      this.retry = 250;
      this.log('info', 'listen-back', {});
      // Notifications sent while away are lost: every waiter looks again.
      for (const fn of this.listeners) fn(null, 0);
    } catch {
      this.listener = undefined;
      this.retry = Math.min(this.retry * 2, 5000);
      setTimeout(() => this.#reconnect(), this.retry).unref();
    }
  }

  async #q(sql, params, limits) {
    try {
      return await this.pool.query(sql, params);
    } catch (e) {
      const r = refusalOf(e, limits);
      if (r instanceof Refusal) throw r;
      if (e?.code && !/^(08|57P|53)/.test(e.code)) throw e;
      throw storeUnavailable();
    }
  }

  async append(id, body, { key, nonce, compact, close = false, address, limits, now }) {
    const r = await this.#q(
      'SELECT relay_post($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AS seq',
      [
        id,
        key ?? null,
        nonce ?? null,
        body,
        compact ?? null,
        address,
        Math.min(limits.addressRoomsPerHour, 2 ** 31 - 1),
        Math.min(limits.roomBytes, Number.MAX_SAFE_INTEGER),
        limits.pairMessages,
        limits.pairTtlMs,
        now,
        close,
      ],
      limits,
    );
    // Counted here until the next sweep counts again, so the relay-wide limit holds between sweeps.
    if (this.cached) this.cached.bytes += body.length;
    return { seq: Number(r.rows[0].seq) };
  }

  async read(id, after, limit, maxBytes, now, limits) {
    const r = await this.#q(
      `SELECT r.last, r.closed, m.seq, m.body FROM relay_rooms r LEFT JOIN LATERAL (
         SELECT seq, body FROM (
           SELECT seq, body, size, sum(size) OVER (ORDER BY seq) AS run
           FROM relay_messages WHERE room = r.id AND seq > $2 ORDER BY seq LIMIT $3) t
         WHERE run - size = 0 OR run <= $4) m ON true
       WHERE r.id = $1 AND (left(r.id, 5) <> 'pair-' OR r.created >= $5) ORDER BY m.seq`,
      [id, after, limit, maxBytes, now - limits.pairTtlMs],
      limits,
    );
    if (r.rows.length === 0) return { messages: [], last: 0 };
    const messages = r.rows.filter((m) => m.seq !== null).map((m) => ({ seq: Number(m.seq), body: m.body }));
    const closed = r.rows[0].closed === null ? undefined : Number(r.rows[0].closed);
    return { messages, last: Number(r.rows[0].last), closed };
  }

  async last(id, now, limits) {
    const r = await this.#q(
      `SELECT last FROM relay_rooms WHERE id = $1 AND (left(id, 5) <> 'pair-' OR created >= $2)`,
      [id, now - limits.pairTtlMs],
      limits,
    );
    return r.rows.length ? Number(r.rows[0].last) : 0;
  }

  async remove(id, key, nonce, now, limits) {
    if (id.startsWith('pair-')) throw refuse.mailboxKept();
    await this.#q('SELECT relay_delete($1, $2, $3, $4)', [id, key, nonce, now], limits);
  }

  async sweep(now, limits) {
    await this.#q(`DELETE FROM relay_rooms WHERE left(id, 5) <> 'pair-' AND touched < $1`, [now - limits.idleMs], limits);
    await this.#q(`DELETE FROM relay_rooms WHERE left(id, 5) = 'pair-' AND created < $1`, [now - limits.pairTtlMs], limits);
    await this.#q('DELETE FROM relay_nonces WHERE at < $1', [now - 2 * limits.clockSkewMs], limits);
    await this.#q('DELETE FROM relay_births WHERE at <= $1', [now - 3600_000], limits);
    const t = await this.#q(
      'SELECT count(*) AS rooms, coalesce(sum(bytes), 0) AS bytes, coalesce(sum(messages), 0) AS messages FROM relay_rooms',
      [],
      limits,
    );
    this.cached = { rooms: Number(t.rows[0].rooms), bytes: Number(t.rows[0].bytes), messages: Number(t.rows[0].messages) };
  }

  async totals() {
    return this.cached ?? { rooms: 0, bytes: 0, messages: 0 };
  }

  async close() {
    this.closed = true;
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
    await this.pool.end();
  }
}
