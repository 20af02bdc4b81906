// The relay's HTTP routes (docs/SYNC.md, "Relay protocol"). CORS is open: the app may be served from
// anywhere. Reads are capability-based (the room id, derived one way from the sync key); writes are
// signed with the room's key (auth.mjs). Every refusal is a status and a JSON reason (limits.mjs).
import { SIGNED_HEADERS, checkSignature } from './auth.mjs';
import { Gauges, Refusal, Windows, refuse } from './limits.mjs';
import { isPairing } from './store-file.mjs';

const ROOM = /^[A-Za-z0-9_-]{22,96}$/;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'x-last-seq, x-room-closed, retry-after',
};

function send(res, status, body, headers = {}) {
  if (res.headersSent || res.destroyed) return;
  const isBytes = Buffer.isBuffer(body);
  const isText = typeof body === 'string';
  res.writeHead(status, {
    ...CORS,
    'content-type': isBytes ? 'application/octet-stream' : isText ? 'text/plain; version=0.0.4' : 'application/json',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(isBytes || isText ? body : JSON.stringify(body));
}

async function readBody(req, max) {
  const chunks = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > max) throw refuse.tooLarge(max);
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

function frames(messages) {
  return Buffer.concat(
    messages.map((m) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(m.seq, 0);
      head.writeUInt32BE(m.body.length, 4);
      return Buffer.concat([head, m.body]);
    }),
  );
}

/**
 * A query value that must be a whole number (after, limit, compact): `fallback` when absent, a 400
 * when it is anything but decimal digits of a safe integer (a value the stores could not hold).
 */
function count(url, name, fallback) {
  const v = url.searchParams.get(name);
  if (v === null) return fallback;
  const n = Number(v);
  if (!/^\d{1,16}$/.test(v) || !Number.isSafeInteger(n)) throw refuse.badQuery(name);
  return n;
}

/** The routes over one store; `state.draining` is set on shutdown. */
export function relayHandler({ store, limits, metrics, waiters, log, now, waitMs, trustProxy, state }) {
  const roomPosts = new Windows(60_000, now);
  const addressPosts = new Windows(60_000, now);
  const polls = new Gauges();

  // Behind a balancer the client is the last address it added to x-forwarded-for (--trust-proxy).
  const addressOf = (req) => {
    const fwd = trustProxy
      ? String(req.headers['x-forwarded-for'] ?? '')
          .split(',')
          .at(-1)
          ?.trim()
      : '';
    return fwd || req.socket.remoteAddress || '?';
  };

  async function post(req, res, url, id, address) {
    const body = await readBody(req, limits.maxMessage);
    if (body.length === 0) throw refuse.empty();
    const signed = isPairing(id)
      ? { key: null, nonce: undefined }
      : checkSignature(req, url.pathname + url.search, body, now(), limits.clockSkewMs);
    const wait = roomPosts.take(id, limits.roomPostsPerMinute) || addressPosts.take(address, limits.addressPostsPerMinute);
    if (wait) throw refuse.posts(wait);
    const totals = await store.totals();
    if (totals.bytes + body.length > limits.relayBytes) throw refuse.relayFull();
    const upTo = count(url, 'compact', undefined);
    // `close=1`: this message (a key change's notice) is the room's last; nothing may follow,
    // compact or delete it (a device unpaired still holds the key that signs here).
    const closeParam = url.searchParams.get('close');
    if (closeParam !== null && (closeParam !== '1' || upTo !== undefined || isPairing(id))) throw refuse.badQuery('close');
    const close = closeParam === '1';
    // The store counts a new room against its address in the step that creates it (a burst of first
    // posts cannot pass the hourly limit between a check and a count).
    const { seq } = await store.append(id, body, { ...signed, compact: upTo, close, address, limits, now: now() });
    metrics.posted++;
    metrics.postedBytes += body.length;
    waiters.wake(id, seq);
    return send(res, 201, { seq });
  }

  function wait(req, res, id, after, address) {
    // Per address, per room, then per address in the room: one address (a stranger who learnt the
    // room id) cannot hold all of a room's polls and leave its devices none.
    const keys = [address, `room ${id}`, `room ${id} ${address}`];
    const maxes = [limits.addressPolls, limits.roomPolls, limits.roomAddressPolls];
    const taken = [];
    for (let i = 0; i < keys.length; i++) {
      if (!polls.add(keys[i], maxes[i])) {
        taken.forEach((k) => polls.remove(k));
        throw refuse.polls();
      }
      taken.push(keys[i]);
    }
    let done = false;
    const end = () => {
      if (done) return false;
      done = true;
      remove();
      clearTimeout(timer);
      keys.forEach((k) => polls.remove(k));
      metrics.waiters = waiters.count;
      return true;
    };
    const finish = (last) => {
      if (end()) send(res, 200, { last });
    };
    // Registered before the store is asked, so a message stored in between still wakes it.
    const remove = waiters.add(id, after, finish);
    metrics.waiters = waiters.count;
    req.on('close', end);
    const lastNow = () => {
      const known = waiters.lastKnown(id);
      return known !== undefined ? Promise.resolve(known) : store.last(id, now(), limits);
    };
    const timer = setTimeout(() => lastNow().then(finish, () => finish(after)), waitMs);
    const known = waiters.lastKnown(id);
    if (known !== undefined) {
      if (known > after || state.draining) finish(known);
      return;
    }
    const epoch = waiters.epoch;
    return store.last(id, now(), limits).then(
      (last) => {
        waiters.remember(id, last, epoch);
        if (last > after || state.draining) finish(last);
      },
      // The database away: the poll waits all the same; the store looks again when it is back.
      (e) => {
        if (e?.reason !== 'store-unavailable') throw e;
      },
    );
  }

  async function route(req, res, url, address) {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        ...CORS,
        'access-control-allow-methods': 'GET, POST, DELETE',
        'access-control-allow-headers': ['content-type', ...SIGNED_HEADERS].join(', '),
        'access-control-max-age': '86400',
      });
      res.end();
      return 'options';
    }
    if (url.pathname === '/health' || url.pathname === '/v1/health') {
      send(res, state.draining ? 503 : 200, { relay: 'tealeaf', version: 2, store: store.kind, draining: state.draining });
      return 'health';
    }
    if (url.pathname === '/metrics') {
      send(res, 200, metrics.render(await store.totals()));
      return 'metrics';
    }
    const m = /^\/v1\/rooms\/([^/]+)(\/messages|\/wait)?$/.exec(url.pathname);
    if (!m || !ROOM.test(m[1])) {
      send(res, 404, { error: 'no such route', reason: 'no-route' });
      return 'other';
    }
    const id = m[1];
    if (m[2] === '/messages' && req.method === 'POST') {
      await post(req, res, url, id, address);
      return 'post';
    }
    if (m[2] === '/messages' && req.method === 'GET') {
      const after = count(url, 'after', 0);
      const limit = Math.min(10_000, Math.max(1, count(url, 'limit', 1000)));
      const got = await store.read(id, after, limit, MAX_BATCH_BYTES, now(), limits);
      const closed = got.closed === undefined ? {} : { 'x-room-closed': String(got.closed) };
      send(res, 200, frames(got.messages), { 'x-last-seq': String(got.last), ...closed });
      return 'read';
    }
    if (m[2] === '/wait' && req.method === 'GET') {
      await wait(req, res, id, count(url, 'after', 0), address);
      return 'wait';
    }
    if (!m[2] && req.method === 'DELETE') {
      // A mailbox has no key to sign with: none may delete it, so a stranger cannot end a pairing.
      if (isPairing(id)) throw refuse.mailboxKept();
      const body = await readBody(req, 1024);
      const { key, nonce } = checkSignature(req, url.pathname + url.search, body, now(), limits.clockSkewMs);
      await store.remove(id, key, nonce, now(), limits);
      send(res, 200, { deleted: true });
      return 'delete';
    }
    send(res, 405, { error: 'method not allowed', reason: 'method' });
    return 'other';
  }

  const handler = async (req, res) => {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://relay');
    const address = addressOf(req);
    let name = 'other';
    try {
      name = await route(req, res, url, address);
    } catch (e) {
      const r = e instanceof Refusal ? e : undefined;
      if (r) {
        metrics.refused(r.reason);
        log('info', 'refused', { method: req.method, reason: r.reason, status: r.status });
        const headers = r.extra.retryAfter ? { 'retry-after': String(r.extra.retryAfter) } : {};
        send(res, r.status, { error: r.message, reason: r.reason, ...r.extra }, headers);
      } else {
        log('error', 'failed', { method: req.method, message: String(e?.message ?? e) });
        send(res, 500, { error: 'the relay failed', reason: 'failed' });
      }
    } finally {
      if (name !== 'wait') metrics.request(name, res.statusCode, (performance.now() - started) / 1000);
      else res.once('finish', () => metrics.request(name, res.statusCode, 0));
    }
  };
  // Windows that ended are dropped, so idle addresses and rooms cost no memory.
  handler.sweep = () => [roomPosts, addressPosts].forEach((w) => w.sweep());
  return handler;
}
