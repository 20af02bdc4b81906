import { appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import { utf8 } from '../../../src/services/sync/bytes';
import { Sealer } from '../../../src/services/sync/envelope';
import { generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { RelayClient, RelayError } from '../../../src/services/sync/relay-client';
import { holdsPolls } from '../../integration/relay-helpers';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (open.length) await open.pop()!();
});

async function relayIn(dir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-'))) {
  const relay = await startRelay({ port: 0, dir });
  open.push(relay.close);
  return { ...relay, dir, client: new RelayClient(relay.url) };
}

// A room only its key may write (room-key.ts): roomOf leaves the room's signer for the client.
const ROOM = await roomOf(await generateSyncKey());
const OTHER = await roomOf(await generateSyncKey());
const text = (b: Uint8Array) => Buffer.from(b).toString();

describe('the relay', () => {
  it('keeps messages in order and hands out those after a position', async () => {
    const { client } = await relayIn();
    for (const m of ['one', 'two', 'three']) await client.post(ROOM, utf8(m));
    const all = await client.read(ROOM, 0);
    expect(all.messages.map((m) => [m.seq, text(m.bytes)])).toEqual([
      [1, 'one'],
      [2, 'two'],
      [3, 'three'],
    ]);
    expect(all.last).toBe(3);
    expect((await client.read(ROOM, 2)).messages.map((m) => text(m.bytes))).toEqual(['three']);
    expect((await client.read(ROOM, 0, 2)).messages).toHaveLength(2);
    expect((await client.read(OTHER, 0)).messages).toEqual([]);
  });

  it('stores only ciphertext: a canary typed on a device is nowhere in its files', async () => {
    const relay = await relayIn();
    const key = await generateSyncKey();
    const room = await roomOf(key);
    const sealer = await Sealer.of(key, room);
    const canary = 'CANARY-7f3a-she-moved-to-Porto';
    for (let seq = 1; seq <= 5; seq++) await relay.client.post(room, await sealer.seal('a'.repeat(32), seq, utf8(`${seq}: ${canary}`)));
    const stored = Buffer.concat(readdirSync(relay.dir).map((f) => readFileSync(join(relay.dir, f))));
    expect(stored.length).toBeGreaterThan(5 * canary.length);
    expect(stored.includes(canary)).toBe(false);
    expect(stored.includes('Porto')).toBe(false);
    // The check can fail: the same canary posted unsealed is found.
    await relay.client.post(room, utf8(canary));
    const after = Buffer.concat(readdirSync(relay.dir).map((f) => readFileSync(join(relay.dir, f))));
    expect(after.includes(canary)).toBe(true);
  });

  it('survives a restart, and cuts a record torn by a crash', async () => {
    const first = await relayIn();
    await first.client.post(ROOM, utf8('kept 1'));
    await first.client.post(ROOM, utf8('kept 2'));
    await open.pop()!();
    const file = join(first.dir, `${ROOM}.log`);
    const whole = statSync(file).size;
    // A write cut off mid-record: its length says 100 bytes, 3 arrived.
    appendFileSync(file, Buffer.from([0, 0, 0, 100, 1, 2, 3]));
    const again = await relayIn(first.dir);
    expect((await again.client.read(ROOM, 0)).messages.map((m) => text(m.bytes))).toEqual(['kept 1', 'kept 2']);
    expect(statSync(file).size).toBe(whole);
    expect(await again.client.post(ROOM, utf8('kept 3'))).toBe(3);
    expect((await again.client.read(ROOM, 2)).messages.map((m) => text(m.bytes))).toEqual(['kept 3']);
  });

  it('compacts: a snapshot posted with compact=n drops every message up to n from its disk; positions stay', async () => {
    const first = await relayIn();
    for (const m of ['secret 1', 'secret 2', 'later 3']) await first.client.post(ROOM, utf8(m));
    // The snapshot replaces what its device had read (up to 2); what came after it (3) stays.
    expect(await first.client.post(ROOM, utf8('snapshot 4'), undefined, 2)).toBe(4);
    const read = await first.client.read(ROOM, 0);
    expect(read.messages.map((m) => [m.seq, text(m.bytes)])).toEqual([
      [3, 'later 3'],
      [4, 'snapshot 4'],
    ]);
    expect(read.last).toBe(4);
    expect((await first.client.read(ROOM, 3)).messages.map((m) => m.seq)).toEqual([4]);
    const file = join(first.dir, `${ROOM}.log`);
    expect(readFileSync(file).includes('secret')).toBe(false);
    // After a restart, the same positions; the next message is 5.
    await open.pop()!();
    const again = await relayIn(first.dir);
    expect((await again.client.read(ROOM, 0)).messages.map((m) => m.seq)).toEqual([3, 4]);
    expect(await again.client.post(ROOM, utf8('five'))).toBe(5);
    // Beside the room's files only the nonces of signed requests, kept across restarts.
    expect(readdirSync(first.dir).sort()).toEqual([`${ROOM}.key`, `${ROOM}.log`, 'relay.nonces'].sort());
    // A position the room does not have yet is refused.
    await expect(again.client.post(ROOM, utf8('x'), undefined, 99)).rejects.toMatchObject({ status: 400 });
  });

  it('wakes a waiting device when a message arrives', async () => {
    const { client, url } = await relayIn();
    const waiting = client.wait(ROOM, 0);
    // Posted once the wait is open on the relay (else it would be answered at once, not woken).
    await holdsPolls(url, 1);
    await client.post(ROOM, utf8('news'));
    expect(await waiting).toBe(1);
    expect(await client.wait(ROOM, 0)).toBe(1);
  });

  it('forgets a room, refuses bad room names, empty and oversized messages', async () => {
    const { client, dir } = await relayIn();
    await client.post(ROOM, utf8('old'));
    await client.deleteRoom(ROOM);
    // Nothing of the room is left: the nonces of signed requests name no room.
    expect(readdirSync(dir)).toEqual(['relay.nonces']);
    expect(readFileSync(join(dir, 'relay.nonces'), 'utf8')).not.toContain(ROOM);
    expect((await client.read(ROOM, 0)).last).toBe(0);
    await expect(client.post('../etc', utf8('x'))).rejects.toMatchObject({ status: 404 });
    await expect(client.post(ROOM, new Uint8Array(0))).rejects.toMatchObject({ status: 400 });
    await expect(client.post(ROOM, new Uint8Array(8 * 1024 * 1024 + 1))).rejects.toBeInstanceOf(RelayError);
  });

  it('listens on 127.0.0.1 unless told otherwise', async () => {
    const { url } = await relayIn();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});
