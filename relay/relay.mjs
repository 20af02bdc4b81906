#!/usr/bin/env node
// Tealeaf's sync relay (docs/SYNC.md, "Relay"): a mailbox of sealed messages per room. It keeps
// bytes it cannot read, in the order they came, and hands them to whoever names the room; only the
// room's own key may write or delete it. It knows no devices and no records.
//
//   node relay/relay.mjs [--host 127.0.0.1] [--port 8787] [--dir .relay-data]     one person: files
//   node relay/relay.mjs --postgres postgres://... [--host 0.0.0.0] [--port 8787]  many: PostgreSQL
//   (npm run relay -- ...; relay/README.md for running many processes on one database)
//
// HTTP (http.mjs):
//   POST   /v1/rooms/:room/messages          signed; body: one sealed message -> 201 {"seq":n} once stored
//          ...?compact=n                    the same, then every message at or before n is dropped
//                                           in the same transaction (a snapshot replaces them)
//          ...?close=1                      the same, and the room is closed at it (a key change's
//                                           notice): later posts, compactions and deletes -> 409
//   GET    /v1/rooms/:room/messages?after=n  -> frames [u32 seq][u32 length][bytes]..., header x-last-seq
//                                           (and x-room-closed: the closing position, once closed)
//   GET    /v1/rooms/:room/wait?after=n      long poll: answers {"last":n} once last > n, or after 25 s
//   DELETE /v1/rooms/:room                   signed; forgets the room (not a closed one)
//   GET    /health, /metrics                 for the operator (Prometheus text format)
// Rooms named pair-... are pairing mailboxes, unsigned: at most 16 messages, forgotten 15 minutes
// after their first message (a pairing code lives 10).
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { relayHandler } from './http.mjs';
import { DEFAULT_LIMITS } from './limits.mjs';
import { Metrics } from './metrics.mjs';
import { FileStore } from './store-file.mjs';
import { PgStore } from './store-pg.mjs';
import { Waiters } from './waiters.mjs';

export const MAX_MESSAGE = DEFAULT_LIMITS.maxMessage;
export const PAIR_TTL_MS = DEFAULT_LIMITS.pairTtlMs;
const WAIT_MS = 25_000;

/** Structured logs, one JSON object a line; never a room id or a message. */
export const jsonLog = (level, msg, fields) => console.log(JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields }));

/** Starts a relay; resolves with its URL and a close function (graceful: long polls are answered first). */
export async function startRelay({
  host = '127.0.0.1',
  port = 8787,
  dir = '.relay-data',
  postgres,
  poolSize,
  now = Date.now,
  waitMs = WAIT_MS,
  limits: given = {},
  trustProxy = false,
  log = () => {},
} = {}) {
  const limits = { ...DEFAULT_LIMITS, ...given };
  const store = postgres ? await PgStore.open(postgres, { poolSize, log }) : new FileStore(dir);
  const metrics = new Metrics();
  const waiters = new Waiters();
  const state = { draining: false };
  const handler = relayHandler({ store, limits, metrics, waiters, log, now, waitMs, trustProxy, state });
  store.onStored((room, last) => {
    if (room !== null) return waiters.wake(room, last);
    waiters.lost();
    for (const r of waiters.waitedRooms())
      store.last(r, now(), limits).then(
        (l) => waiters.wake(r, l),
        () => undefined,
      );
  });
  const sweep = () => {
    handler.sweep();
    waiters.sweepKnown();
    return store.sweep(now(), limits).catch((e) => log('warn', 'sweep-failed', { message: e.message }));
  };
  await sweep();
  const sweeper = setInterval(sweep, 60_000);
  sweeper.unref();
  const server = createServer(handler);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  log('info', 'listening', { host, port: address.port, store: store.kind });
  let closing;
  return {
    url: `http://${host}:${address.port}`,
    store,
    /** What the minute's sweep does (idle rooms, pairing mailboxes, nonces, totals), now: for tests. */
    sweep,
    close: () =>
      (closing ??= (async () => {
        state.draining = true;
        clearInterval(sweeper);
        const stopped = new Promise((resolve) => server.close(() => resolve()));
        // Long polls answer now with what they asked after: their devices ask again elsewhere.
        waiters.finishAll((_room, after) => after);
        server.closeIdleConnections?.();
        const late = setTimeout(() => server.closeAllConnections?.(), 5000);
        await stopped;
        clearTimeout(late);
        await store.close();
        log('info', 'closed', {});
      })()),
  };
}

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0) return process.argv[i + 1] === undefined || process.argv[i + 1].startsWith('--') ? 'true' : process.argv[i + 1];
  return process.env[`RELAY_${name.toUpperCase().replaceAll('-', '_')}`] ?? fallback;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const postgres = arg('postgres', undefined);
  const limits = {};
  for (const [flag, key] of [
    ['max-message', 'maxMessage'],
    ['room-bytes', 'roomBytes'],
    ['relay-bytes', 'relayBytes'],
    ['address-posts', 'addressPostsPerMinute'],
    ['address-rooms', 'addressRoomsPerHour'],
    ['address-polls', 'addressPolls'],
    ['room-address-polls', 'roomAddressPolls'],
  ]) {
    const v = arg(flag, undefined);
    // `none` (or Infinity): no limit, only when the operator says so.
    if (v !== undefined) limits[key] = v === 'none' ? Infinity : Number(v);
    if (Number.isNaN(limits[key]) || limits[key] < 0) throw new Error(`--${flag} takes a number of bytes or counts, or none`);
  }
  const relay = await startRelay({
    host: arg('host', '127.0.0.1'),
    port: Number(arg('port', '8787')),
    dir: arg('dir', '.relay-data'),
    postgres,
    poolSize: Number(arg('pool', '10')),
    trustProxy: arg('trust-proxy', 'false') === 'true',
    limits,
    log: jsonLog,
  });
  console.error(`Tealeaf relay on ${relay.url}, storing sealed messages ${postgres ? 'in PostgreSQL' : `in ${arg('dir', '.relay-data')}`}`);
  const stop = (signal) => {
    jsonLog('info', 'stopping', { signal });
    relay.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
