// What a stranger or a careless client can try against the relay, on both stores (files and
// PostgreSQL, a private cluster from tests/support/pg-cluster.mjs): a burst of new rooms, a room's
// long polls taken from one address, a pairing mailbox deleted, a signed request replayed (after a
// restart, late in its window, a delete), signed in the future or with a short nonce, and query
// values no store can hold.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../relay/limits.mjs';
import { type RelayLimits, startRelay } from '../../relay/relay.mjs';
import { type Bytes, randomBytes, toBase64Url, utf8 } from '../../src/services/sync/bytes';
import { RelayClient } from '../../src/services/sync/relay-client';
import { type RoomSigner, signedText } from '../../src/services/sync/room-key';
import { sql, startPostgres } from '../support/pg-cluster.mjs';
import { until } from '../support/until';
import { answer, newRoom } from './relay-helpers';

let cluster: Awaited<ReturnType<typeof startPostgres>>;
const open: Array<() => Promise<void>> = [];
beforeAll(async () => {
  cluster = await startPostgres();
}, 60_000);
afterAll(async () => {
  while (open.length) await open.pop()!();
  await cluster?.stop();
}, 30_000);

const MIN = 60_000;

/** Signing headers with the time and nonce given (signWith in relay-helpers picks both). */
async function signed(signer: RoomSigner, method: string, path: string, body: Bytes, time: number, nonce = toBase64Url(randomBytes(16))) {
  const digest = toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', body)));
  return {
    'x-tealeaf-key': signer.publicKey,
    'x-tealeaf-time': String(time),
    'x-tealeaf-nonce': nonce,
    'x-tealeaf-sig': await signer.sign(signedText(method, path, String(time), nonce, digest)),
  };
}

/** Long polls open on the relay, as its /metrics says. */
async function pollsOpen(url: string): Promise<number> {
  return Number(/^tealeaf_relay_poll_waiters (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
}

describe.each(['file', 'postgres'])('the relay on %s', (store) => {
  const fresh = async () => {
    if (store === 'postgres')
      await sql(cluster.url, 'DROP TABLE IF EXISTS relay_messages, relay_rooms, relay_nonces, relay_births CASCADE');
    return mkdtempSync(join(tmpdir(), 'tealeaf-abuse-'));
  };
  async function relayIn(
    dir: string,
    options: { limits?: Partial<RelayLimits>; now?: () => number; trustProxy?: boolean; waitMs?: number } = {},
  ) {
    const relay = await startRelay({ port: 0, dir, postgres: store === 'postgres' ? cluster.url : undefined, ...options });
    open.push(relay.close);
    return { ...relay, client: new RelayClient(relay.url) };
  }
  const roomsIn = async (dir: string) =>
    store === 'file'
      ? readdirSync(dir).filter((f) => f.endsWith('.log')).length
      : Number((await sql(cluster.url, 'SELECT count(*) AS n FROM relay_rooms'))[0].n);

  it('a burst of first posts from one address creates no more rooms than its hourly limit', async () => {
    const dir = await fresh();
    const { url } = await relayIn(dir, { limits: { addressRoomsPerHour: 5 } });
    const rooms = await Promise.all(Array.from({ length: 60 }, () => newRoom()));
    const requests = await Promise.all(
      rooms.map(async ({ room, signer }) => {
        const path = `/v1/rooms/${room}/messages`;
        return {
          url: url + path,
          init: { method: 'POST', body: utf8('first'), headers: await signed(signer, 'POST', path, utf8('first'), Date.now()) },
        };
      }),
    );
    // All sent at once: the relay has them all in hand before the first is on disk.
    const answers = await Promise.all(requests.map((r) => answer(r.url, r.init)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429 && a.body.reason === 'too-many-rooms')).toHaveLength(55);
    expect(await roomsIn(dir)).toBe(5);
    // A mailbox is a new room too: none is left this hour.
    await expect(new RelayClient(url).post(`pair-${'b'.repeat(30)}`, utf8('x'))).rejects.toMatchObject({ reason: 'too-many-rooms' });
  });

  it('one address holds at most a few of a room’s long polls; the room’s own devices still get theirs', async () => {
    const dir = await fresh();
    const { url, client } = await relayIn(dir, { trustProxy: true });
    const { room } = await newRoom();
    expect(await client.post(room, utf8('one'))).toBe(1);
    const ctl = new AbortController();
    const held: Array<Promise<unknown>> = [];
    /** Opens a poll from `address`: 'held' once the relay counts it open, else the status it answered. */
    const poll = async (address: string): Promise<'held' | number> => {
      const before = await pollsOpen(url);
      let status: number | undefined;
      const res = fetch(`${url}/v1/rooms/${room}/wait?after=1`, { headers: { 'x-forwarded-for': address }, signal: ctl.signal }).then(
        (r) => (status = r.status),
        () => undefined,
      );
      await until(`a poll from ${address} held or answered`, async () => status !== undefined || (await pollsOpen(url)) > before, 5);
      if (status !== undefined) return status;
      held.push(res);
      return 'held';
    };
    const stranger: Array<'held' | number> = [];
    for (let i = 0; i < DEFAULT_LIMITS.roomPolls; i++) stranger.push(await poll('203.0.113.9'));
    expect(stranger.filter((s) => s === 'held')).toHaveLength(DEFAULT_LIMITS.roomAddressPolls);
    expect(stranger.filter((s) => s === 429)).toHaveLength(DEFAULT_LIMITS.roomPolls - DEFAULT_LIMITS.roomAddressPolls);
    // The person's three devices, from their own addresses, are all held.
    for (const device of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) expect(await poll(device)).toBe('held');
    ctl.abort();
    await Promise.all(held);
    await until('the polls closed', async () => (await pollsOpen(url)) === 0, 5);
  });

  it('nobody deletes a pairing mailbox, signed or not; it is forgotten when its time is up', async () => {
    const dir = await fresh();
    let t = Date.now();
    const { url, client } = await relayIn(dir, { now: () => t });
    const mailbox = `pair-${'c'.repeat(30)}`;
    await client.post(mailbox, utf8('offer'));
    const stranger = (await newRoom()).signer;
    const path = `/v1/rooms/${mailbox}`;
    const headers = await signed(stranger, 'DELETE', path, new Uint8Array(0), Date.now());
    expect(await answer(url + path, { method: 'DELETE', headers })).toMatchObject({ status: 403, body: { reason: 'mailbox-kept' } });
    expect(await answer(url + path, { method: 'DELETE' })).toMatchObject({ status: 403, body: { reason: 'mailbox-kept' } });
    expect((await client.read(mailbox, 0)).messages.map((m) => Buffer.from(m.bytes).toString())).toEqual(['offer']);
    t += DEFAULT_LIMITS.pairTtlMs + 1;
    expect((await client.read(mailbox, 0)).last).toBe(0);
  });

  it('a signed request is refused when replayed after a restart, and late in its window', async () => {
    const dir = await fresh();
    const first = await relayIn(dir);
    const { room, signer } = await newRoom();
    const path = `/v1/rooms/${room}/messages`;
    const headers = await signed(signer, 'POST', path, utf8('once'), Date.now());
    expect((await answer(first.url + path, { method: 'POST', body: utf8('once'), headers })).status).toBe(201);
    await first.close();
    const second = await relayIn(dir);
    expect(await answer(second.url + path, { method: 'POST', body: utf8('once'), headers })).toMatchObject({
      status: 409,
      body: { reason: 'replayed' },
    });
    expect((await second.client.read(room, 0)).last).toBe(1);
    await second.close();
    // Signed 14 minutes ahead of the relay's clock, taken; replayed when the relay is 14 minutes
    // past it (28 minutes later, the sweep run): the signature's time still holds, so must the nonce.
    const signedAt = Date.now();
    let t = signedAt - 14 * MIN;
    const third = await relayIn(dir, { now: () => t });
    const late = await signed(signer, 'POST', path, utf8('late'), signedAt);
    expect((await answer(third.url + path, { method: 'POST', body: utf8('late'), headers: late })).status).toBe(201);
    t = signedAt + 14 * MIN;
    await third.sweep();
    expect(await answer(third.url + path, { method: 'POST', body: utf8('late'), headers: late })).toMatchObject({
      status: 409,
      body: { reason: 'replayed' },
    });
    expect((await third.client.read(room, 0)).last).toBe(2);
  });

  it('a replayed delete is refused: the room its key made again stays', async () => {
    const dir = await fresh();
    const { url, client } = await relayIn(dir);
    const { room, signer } = await newRoom();
    await client.post(room, utf8('before'));
    const path = `/v1/rooms/${room}`;
    const headers = await signed(signer, 'DELETE', path, new Uint8Array(0), Date.now());
    expect((await answer(url + path, { method: 'DELETE', headers })).status).toBe(200);
    await client.post(room, utf8('after'));
    expect(await answer(url + path, { method: 'DELETE', headers })).toMatchObject({ status: 409, body: { reason: 'replayed' } });
    expect((await client.read(room, 0)).messages.map((m) => Buffer.from(m.bytes).toString())).toEqual(['after']);
  });

  it('refuses a request signed further ahead than the clock skew, and a nonce shorter than 16 characters', async () => {
    const dir = await fresh();
    const { url, client } = await relayIn(dir);
    const { room, signer } = await newRoom();
    const path = `/v1/rooms/${room}/messages`;
    const post = async (headers: Record<string, string>) => answer(url + path, { method: 'POST', body: utf8('x'), headers });
    expect(await post(await signed(signer, 'POST', path, utf8('x'), Date.now() + 20 * MIN))).toMatchObject({
      status: 401,
      body: { reason: 'clock' },
    });
    for (const nonce of ['', 'a', 'abcdefghijklmno'])
      expect(await post(await signed(signer, 'POST', path, utf8('x'), Date.now(), nonce))).toMatchObject({
        status: 401,
        body: { reason: 'bad-signature' },
      });
    // The control: the same request with a nonce of 16 is taken.
    expect((await post(await signed(signer, 'POST', path, utf8('x'), Date.now(), 'abcdefghijklmnop'))).status).toBe(201);
    expect((await client.read(room, 0)).last).toBe(1);
  });

  it('answers 400 to every malformed query value, and reads as asked with well-formed ones', async () => {
    const dir = await fresh();
    // A poll the old parsing took as a real one ends in a second, not in 25 s.
    const { url, client } = await relayIn(dir, { waitMs: 1000 });
    const { room, signer } = await newRoom();
    await client.post(room, utf8('one'));
    await client.post(room, utf8('two'));
    const bad = ['99999999999999999999', '9007199254740992', 'abc', '-1', '1.5', '1e3', '', ' 1', '0x10', '1,2'];
    for (const v of bad) {
      const q = encodeURIComponent(v);
      for (const get of [`messages?after=${q}`, `messages?after=0&limit=${q}`, `wait?after=${q}`])
        expect({ get, ...(await answer(`${url}/v1/rooms/${room}/${get}`, {})) }).toMatchObject({
          get,
          status: 400,
          body: { reason: 'bad-query' },
        });
      const path = `/v1/rooms/${room}/messages?compact=${q}`;
      expect({
        v,
        ...(await answer(url + path, {
          method: 'POST',
          body: utf8('s'),
          headers: await signed(signer, 'POST', path, utf8('s'), Date.now()),
        })),
      }).toMatchObject({
        v,
        status: 400,
        body: { reason: 'bad-query' },
      });
    }
    expect((await client.read(room, 1, 5)).messages.map((m) => m.seq)).toEqual([2]);
    expect(await client.wait(room, 1)).toBe(2);
    expect((await client.read(room, 0)).last).toBe(2);
  });
});

describe('the relay’s defaults', () => {
  it('hold a relay to a small server’s disk, a room to a share of it; a relay without a byte limit is one configured so', () => {
    expect(DEFAULT_LIMITS.relayBytes).toBe(4 * 1024 ** 3);
    expect(DEFAULT_LIMITS.roomBytes).toBe(128 * 1024 ** 2);
    expect(DEFAULT_LIMITS.roomBytes * 32).toBeLessThanOrEqual(DEFAULT_LIMITS.relayBytes);
    expect(DEFAULT_LIMITS.roomAddressPolls).toBeLessThan(DEFAULT_LIMITS.roomPolls / 2);
  });
});
