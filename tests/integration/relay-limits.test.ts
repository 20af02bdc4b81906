// Who may write a room, and each limit refused with its status and reason, on both stores: the
// embedded one (files) and PostgreSQL (a private cluster, tests/support/pg-cluster.mjs).
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RelayLimits, startRelay } from '../../relay/relay.mjs';
import { utf8 } from '../../src/services/sync/bytes';
import { RelayClient, RelayError } from '../../src/services/sync/relay-client';
import { syncWords } from '../../src/services/sync/sync-status';
import { sql, startPostgres } from '../support/pg-cluster.mjs';
import { answer, holdsPolls, newRoom, signWith } from './relay-helpers';

let cluster: Awaited<ReturnType<typeof startPostgres>>;
const open: Array<() => Promise<void>> = [];
beforeAll(async () => {
  cluster = await startPostgres();
}, 60_000);
afterAll(async () => {
  while (open.length) await open.pop()!();
  await cluster?.stop();
}, 30_000);

/** Rooms the store holds (to see that a read of an unknown room allocates none). */
async function roomsIn(store: string, dir: string): Promise<number> {
  if (store === 'file') return readdirSync(dir).filter((f) => f.endsWith('.log')).length;
  return Number((await sql(cluster.url, 'SELECT count(*) AS n FROM relay_rooms'))[0].n);
}

describe.each(['file', 'postgres'])('the relay on %s', (store) => {
  async function relayWith(limits: Partial<RelayLimits> = {}, now?: () => number) {
    const dir = mkdtempSync(join(tmpdir(), 'tealeaf-limits-'));
    if (store === 'postgres') {
      await sql(cluster.url, 'DROP TABLE IF EXISTS relay_messages, relay_rooms, relay_nonces, relay_births CASCADE');
    }
    const relay = await startRelay({ port: 0, dir, postgres: store === 'postgres' ? cluster.url : undefined, limits, now });
    open.push(relay.close);
    return { ...relay, dir, client: new RelayClient(relay.url) };
  }

  it('a stranger who knows a room id can read it but neither write nor delete it; replays and forgeries are refused', async () => {
    const { url, client } = await relayWith();
    const { room, signer } = await newRoom();
    const stranger = (await newRoom()).signer;
    expect(await client.post(room, utf8('mine'))).toBe(1);
    const path = `/v1/rooms/${room}/messages`;
    const post = async (headers: Record<string, string>, body = utf8('theirs')) => answer(url + path, { method: 'POST', body, headers });
    expect(await post(await signWith(stranger, 'POST', path, utf8('theirs')))).toMatchObject({
      status: 403,
      body: { reason: 'not-yours' },
    });
    expect(await post({})).toMatchObject({ status: 401, body: { reason: 'unsigned' } });
    expect(await post(await signWith(signer, 'POST', path, utf8('other bytes')))).toMatchObject({
      status: 401,
      body: { reason: 'bad-signature' },
    });
    expect(await post(await signWith(signer, 'POST', path, utf8('theirs'), Date.now() - 20 * 60_000))).toMatchObject({
      status: 401,
      body: { reason: 'clock' },
    });
    const once = await signWith(signer, 'POST', path, utf8('theirs'));
    expect((await post(once)).status).toBe(201);
    expect(await post(once)).toMatchObject({ status: 409, body: { reason: 'replayed' } });
    const del = `/v1/rooms/${room}`;
    expect(
      await answer(url + del, { method: 'DELETE', headers: await signWith(stranger, 'DELETE', del, new Uint8Array(0)) }),
    ).toMatchObject({
      status: 403,
      body: { reason: 'not-yours' },
    });
    expect(await answer(url + del, { method: 'DELETE' })).toMatchObject({ status: 401, body: { reason: 'unsigned' } });
    // Still there, readable by id; its own key deletes it.
    expect((await client.read(room, 0)).messages.map((m) => Buffer.from(m.bytes).toString())).toEqual(['mine', 'theirs']);
    await client.deleteRoom(room);
    expect((await client.read(room, 0)).last).toBe(0);
  });

  it('a room from before signatures is claimed by the first signed write of its key; then a stranger cannot write it', async () => {
    const { room } = await newRoom();
    const dir = mkdtempSync(join(tmpdir(), 'tealeaf-legacy-'));
    // A room as an older relay kept it: messages, no key.
    if (store === 'file') writeFileSync(join(dir, `${room}.log`), Buffer.from([0, 0, 0, 3, ...Buffer.from('old')]));
    else {
      await sql(cluster.url, 'DROP TABLE IF EXISTS relay_messages, relay_rooms, relay_nonces, relay_births CASCADE');
      const first = await startRelay({ port: 0, postgres: cluster.url });
      await first.close();
      await sql(
        cluster.url,
        `INSERT INTO relay_rooms (id, key, last, bytes, messages, created, touched) VALUES ($1, NULL, 1, 3, 1, $2, $2)`,
        [room, Date.now()],
      );
      await sql(cluster.url, `INSERT INTO relay_messages VALUES ($1, 1, 3, 'old')`, [room]);
    }
    const relay = await startRelay({ port: 0, dir, postgres: store === 'postgres' ? cluster.url : undefined });
    open.push(relay.close);
    const client = new RelayClient(relay.url);
    expect(await client.post(room, utf8('new'))).toBe(2);
    const stranger = (await newRoom()).signer;
    const path = `/v1/rooms/${room}/messages`;
    expect(
      await answer(relay.url + path, { method: 'POST', body: utf8('x'), headers: await signWith(stranger, 'POST', path, utf8('x')) }),
    ).toMatchObject({
      status: 403,
      body: { reason: 'not-yours' },
    });
    expect((await client.read(room, 0)).messages.map((m) => Buffer.from(m.bytes).toString())).toEqual(['old', 'new']);
  });

  it('a read or a wait on a room that does not exist allocates nothing', async () => {
    const { client, dir, url } = await relayWith();
    const { room } = await newRoom();
    expect(await client.read(room, 0)).toEqual({ messages: [], last: 0 });
    const ctl = new AbortController();
    const waiting = client.wait(room, 0, ctl.signal).catch(() => 'aborted');
    await holdsPolls(url, 1);
    ctl.abort();
    expect(await waiting).toBe('aborted');
    expect(await roomsIn(store, dir)).toBe(0);
  });

  it('refuses a message too large (413), a room or a relay full (507), with words the app shows', async () => {
    const { client } = await relayWith({ maxMessage: 1000, roomBytes: 2500, relayBytes: 5500 });
    const { room } = await newRoom();
    await expect(client.post(room, new Uint8Array(1001))).rejects.toMatchObject({ status: 413, reason: 'too-large' });
    await client.post(room, new Uint8Array(1000).fill(1));
    await client.post(room, new Uint8Array(1000).fill(2));
    const full = await client.post(room, new Uint8Array(1000).fill(3)).catch((e: RelayError) => e);
    expect(full).toMatchObject({ status: 507, reason: 'room-full' });
    const words = syncWords({ phase: 'error', devices: [], pending: true, error: (full as RelayError).message });
    expect(words.detail).toMatch(/^Your relay is full: your sync room holds its limit of 2\.4 KiB\. Changes stay on this device/);
    // A snapshot that replaces what came before frees the room (server-side compaction).
    expect(await client.post(room, new Uint8Array(1000).fill(4), undefined, 2)).toBe(3);
    expect((await client.read(room, 0)).messages.map((m) => m.seq)).toEqual([3]);
    // The relay-wide count takes additions at once and what compaction freed at the next sweep.
    const other = (await newRoom()).room;
    await client.post(other, new Uint8Array(1000));
    await client.post(other, new Uint8Array(1000));
    await expect(client.post(other, new Uint8Array(1000))).rejects.toMatchObject({ status: 507, reason: 'relay-full' });
  });

  it('refuses too many posts, new rooms and long polls from one address (429), and a full pairing mailbox', async () => {
    const { client, url } = await relayWith({ addressPostsPerMinute: 5, addressRoomsPerHour: 2, addressPolls: 2 });
    const [a, b, c] = [await newRoom(), await newRoom(), await newRoom()];
    await client.post(a.room, utf8('1'));
    await client.post(b.room, utf8('1'));
    await expect(client.post(c.room, utf8('1'))).rejects.toMatchObject({ status: 429, reason: 'too-many-rooms' });
    await client.post(a.room, utf8('2'));
    await client.post(b.room, utf8('2'));
    const busy = await fetch(`${url}/v1/rooms/${a.room}/messages`, {
      method: 'POST',
      body: utf8('3'),
      headers: await signWith(a.signer, 'POST', `/v1/rooms/${a.room}/messages`, utf8('3')),
    });
    expect(busy.status).toBe(429);
    expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await busy.json()) as { reason: string }).reason).toBe('too-many-posts');
    const ctl = new AbortController();
    const polls = [client.wait(a.room, 9, ctl.signal), client.wait(b.room, 9, ctl.signal)].map((p) => p.catch(() => undefined));
    // The third is refused once the two are open on the relay (not merely sent).
    await holdsPolls(url, 2);
    await expect(client.wait(a.room, 9)).rejects.toMatchObject({ status: 429, reason: 'too-many-polls' });
    ctl.abort();
    await Promise.all(polls);
  });

  it('keeps a pairing mailbox to 16 messages and forgets it after 15 minutes; forgets a room idle past its time', async () => {
    let t = Date.now();
    const { client, sweep } = await relayWith({ idleMs: 3600_000 }, () => t);
    const mailbox = 'pair-' + 'm'.repeat(30);
    for (let i = 0; i < 16; i++) await client.post(mailbox, utf8(`m${i}`));
    await expect(client.post(mailbox, utf8('17'))).rejects.toMatchObject({ status: 429, reason: 'mailbox-full' });
    const { room } = await newRoom();
    await client.post(room, utf8('kept a while'));
    t += 16 * 60_000;
    expect((await client.read(mailbox, 0)).last).toBe(0);
    expect((await client.read(room, 0)).last).toBe(1);
    t += 3600_000;
    await sweep();
    expect((await client.read(room, 0)).last).toBe(0);
  });
});
