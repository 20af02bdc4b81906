// A key rotation closes the old room (docs/SYNC.md, "A stolen device cannot erase its unpairing"):
// the notice is the room's last message, and the old key, which an unpaired (stolen) device still
// holds, can no longer post there, compact the notice away or delete the room. On both stores:
// files and PostgreSQL (a private cluster, tests/support/pg-cluster.mjs).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay } from '../../relay/relay.mjs';
import { utf8 } from '../../src/services/sync/bytes';
import { RelayClient } from '../../src/services/sync/relay-client';
import { sql, startPostgres } from '../support/pg-cluster.mjs';
import { answer, newRoom, signWith } from './relay-helpers';

let cluster: Awaited<ReturnType<typeof startPostgres>>;
const open: Array<() => Promise<void>> = [];
beforeAll(async () => {
  cluster = await startPostgres();
}, 60_000);
afterAll(async () => {
  while (open.length) await open.pop()!();
  await cluster?.stop();
}, 30_000);

const text = (m: { bytes: Uint8Array }) => Buffer.from(m.bytes).toString();

describe.each(['file', 'postgres'])('a closed room on %s', (store) => {
  async function relayIn(dir = mkdtempSync(join(tmpdir(), 'tealeaf-closed-')), fresh = true) {
    if (store === 'postgres' && fresh)
      await sql(cluster.url, 'DROP TABLE IF EXISTS relay_messages, relay_rooms, relay_nonces, relay_births CASCADE');
    const relay = await startRelay({ port: 0, dir, postgres: store === 'postgres' ? cluster.url : undefined });
    open.push(relay.close);
    return { ...relay, dir, client: new RelayClient(relay.url) };
  }

  it('keeps its closing notice: the old key can no longer post, compact it away or delete the room, also after a restart', async () => {
    const first = await relayIn();
    const { room, signer } = await newRoom();
    await first.client.post(room, utf8('one'));
    await first.client.post(room, utf8('two'));
    expect(await first.client.post(room, utf8('notice'), undefined, undefined, true)).toBe(3);
    const read = await first.client.read(room, 0);
    expect(read.closed).toBe(3);
    expect(read.messages.map(text)).toEqual(['one', 'two', 'notice']);

    // The thief holds the old key: each write is signed right, and each is refused.
    const posted = async (path: string, body = utf8('thief')) =>
      answer(first.url + path, { method: 'POST', body, headers: await signWith(signer, 'POST', path, body) });
    expect(await posted(`/v1/rooms/${room}/messages`)).toMatchObject({ status: 409, body: { reason: 'room-closed' } });
    expect(await posted(`/v1/rooms/${room}/messages?compact=3`)).toMatchObject({ status: 409, body: { reason: 'room-closed' } });
    const del = `/v1/rooms/${room}`;
    expect(
      await answer(first.url + del, { method: 'DELETE', headers: await signWith(signer, 'DELETE', del, new Uint8Array(0)) }),
    ).toMatchObject({ status: 409, body: { reason: 'room-closed' } });
    // A second closing post (another rotation) is refused the same.
    await expect(first.client.post(room, utf8('second notice'), undefined, undefined, true)).rejects.toMatchObject({
      status: 409,
      reason: 'room-closed',
    });

    await first.close();
    const second = await relayIn(first.dir, false);
    const again = await second.client.read(room, 0);
    expect(again.closed).toBe(3);
    expect(again.messages.map(text)).toEqual(['one', 'two', 'notice']);
    expect(await second.client.wait(room, 0)).toBe(3);
    await expect(second.client.post(room, utf8('after the restart'))).rejects.toMatchObject({ status: 409, reason: 'room-closed' });
  });

  it('an open room says nothing of closing; a close with a compaction or in a pairing mailbox is refused', async () => {
    const { client, url } = await relayIn();
    const { room, signer } = await newRoom();
    await client.post(room, utf8('one'));
    expect((await client.read(room, 0)).closed).toBeUndefined();
    const path = `/v1/rooms/${room}/messages?compact=1&close=1`;
    expect(
      await answer(url + path, { method: 'POST', body: utf8('s'), headers: await signWith(signer, 'POST', path, utf8('s')) }),
    ).toMatchObject({ status: 400, body: { reason: 'bad-query' } });
    await expect(client.post(`pair-${'d'.repeat(30)}`, utf8('offer'), undefined, undefined, true)).rejects.toMatchObject({
      status: 400,
    });
    // Nothing of either was taken: the room is open and holds its one message.
    expect(await client.post(room, utf8('two'))).toBe(2);
  });
});
