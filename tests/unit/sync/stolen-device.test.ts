// A stolen device cannot erase its unpairing (docs/SYNC.md, "A stolen device after it was
// unpaired"). The laptop unpairs the stolen phone while the tablet sleeps. The phone still holds
// the old key, so the old room's signing key: it tries to compact the notice away, delete the room,
// and post a rotation of its own keeping only itself and the tablet. The tablet wakes and must end
// with the laptop (or say it was removed), never in the thief's room, never "synced" in the old one.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as Y from 'yjs';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import type { Bytes } from '../../../src/services/sync/bytes';
import { SyncEngine } from '../../../src/services/sync/engine';
import { writeLocal } from './local-write';
import { Sealer } from '../../../src/services/sync/envelope';
import { type Device, type SyncKey, generateDevice, generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { KIND, encodeBody, gzip } from '../../../src/services/sync/messages';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { OFF, notSeenSince, seenWords, syncWords } from '../../../src/services/sync/sync-status';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { memory, session } from './records';
import { onRotationOf, signedRotation } from './ring-helpers';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** The laptop, the phone (to be stolen) and the tablet (to sleep), synced in one room. */
async function three() {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-stolen-')) });
  closers.push(() => relay.close());
  const key = await generateSyncKey();
  const room = await roomOf(key);
  const sealer = await Sealer.of(key, room);
  const [laptop, phone, tablet] = await Promise.all([generateDevice('Laptop'), generateDevice('Phone'), generateDevice('Tablet')]);
  const ring = [laptop.info, phone.info, tablet.info];
  const engineOf = (d: Device) =>
    new SyncEngine({
      store: new InMemoryRepository(),
      relay: new RelayClient(relay.url),
      room,
      sealer,
      deviceId: d.info.id,
      wipe: async () => undefined,
      onRotation: onRotationOf(d, key, ring),
    });
  const [l, p, t] = [engineOf(laptop), engineOf(phone), engineOf(tablet)];
  await writeLocal(l, { sessions: [session], memories: [memory('m1', 'before')] });
  await l.push();
  for (const e of [p, t]) await e.pull();
  const client = new RelayClient(relay.url);
  /** The thief's raw writes in the old room, sealed and signed with the key it kept (seq past any it used). */
  let thiefSeq = 1000;
  const thief = {
    post: async (kind: number, payload: Bytes, opts: { compact?: number; close?: boolean } = {}) => {
      const seq = ++thiefSeq;
      return client.post(room, await sealer.seal(phone.info.id, seq, encodeBody(kind, 0, 0, payload)), undefined, opts.compact, opts.close);
    },
    /** Its own new key, for itself and the sleeping tablet: the owner's laptop left out. */
    rotation: async () => signedRotation(phone, key, ring, [phone.info, tablet.info]),
  };
  return { relay, key, room, ring, laptop, phone, tablet, l, p, t, client, thief };
}

const roomFor = (k: SyncKey) => roomOf(k);

describe('a stolen device after it was unpaired', () => {
  it('cannot compact the notice away, delete the old room or post its own new key there: the sleeping tablet follows the laptop', async () => {
    const { key, room, ring, laptop, tablet, l, t, client, thief } = await three();
    // The laptop unpairs the phone while the tablet sleeps.
    const { key: next, notice } = await signedRotation(laptop, key, ring, [laptop.info, tablet.info]);
    expect(await l.rekey(next, notice)).toBe('moved');
    const newRoom = await roomFor(next);

    // The thief, with the old key: a snapshot that drops everything before it, a delete, its own rotation.
    const { last } = await client.read(room, 0);
    const empty = await gzip(Y.encodeStateAsUpdate(new Y.Doc()));
    await expect(thief.post(KIND.update, empty, { compact: last })).rejects.toMatchObject({ reason: 'room-closed' });
    await expect(client.deleteRoom(room)).rejects.toMatchObject({ reason: 'room-closed' });
    const own = await thief.rotation();
    await expect(thief.post(KIND.rotation, own.notice)).rejects.toMatchObject({ reason: 'room-closed' });

    // Until the tablet shows up in the new room, the laptop flags it (Settings' device list).
    const kept = [laptop.info, tablet.info];
    expect(notSeenSince(l, kept)?.ids).toEqual([tablet.info.id]);

    // The tablet wakes: it reads the laptop's notice, moves to the laptop's room and posts there
    // once with nothing new to say, so the laptop sees it arrived.
    await t.pull();
    expect(t.room).toBe(newRoom);
    expect(t.unpaired).toBe(false);
    expect(await t.push()).toBe(true);
    await l.pull();
    expect(notSeenSince(l, kept)).toBeUndefined();
    await writeLocal(t, { memories: [memory('m2', 'written on the tablet after it woke')] });
    await t.push();
    await l.pull();
    expect(await l.o.store.getMemory('m2')).toBeDefined();
    // Nothing the tablet wrote reached the old room, where the thief reads.
    expect((await client.read(room, 0)).last).toBe(last);
  });

  it('a rotation the relay let in before the owner’s closing notice is refused: the tablet takes the notice that closed the room', async () => {
    const { key, room, ring, laptop, tablet, l, t, client, thief } = await three();
    // The thief's new key lands first (the laptop had read the room just before): it keeps only itself and the tablet.
    const own = await thief.rotation();
    await thief.post(KIND.rotation, own.notice);
    const { key: next, notice } = await signedRotation(laptop, key, ring, [laptop.info, tablet.info]);
    const sealer = await Sealer.of(key, room);
    await client.post(room, await sealer.seal(laptop.info.id, 500, encodeBody(KIND.rotation, 0, 0, notice)), undefined, undefined, true);

    await t.pull();
    expect(t.room).not.toBe(await roomFor(own.key));
    expect(t.room).toBe(await roomFor(next));
    // The thief's was refused on the way (what was noted of the old room stayed there).
    expect(t.refused).toBe(1);
    await t.push();
    await l.rekey(next, notice);
    await l.pull();
    expect(l.room).toBe(t.room);
  });

  it('on a relay that closes nothing (an older one), a rotation of a device that another rotation removed is refused, and the tablet says it cannot follow', async () => {
    const { key, room, ring, laptop, tablet, t, client, thief } = await three();
    // The laptop's notice, then the thief's after it, both taken by a relay that does not close rooms.
    const { notice } = await signedRotation(laptop, key, ring, [laptop.info, tablet.info]);
    const sealer = await Sealer.of(key, room);
    const own = await thief.rotation();
    await thief.post(KIND.rotation, own.notice);
    await client.post(room, await sealer.seal(laptop.info.id, 500, encodeBody(KIND.rotation, 0, 0, notice)));
    const older = Object.assign(Object.create(t.o.relay) as RelayClient, {
      read: async (r: string, after: number, limit?: number) => {
        const got = await client.read(r, after, limit);
        return { messages: got.messages, last: got.last };
      },
    });
    Object.assign(t.o, { relay: older });

    await t.pull();
    // Neither of two new keys that remove each other's maker is taken: not the thief's room.
    expect(t.room).not.toBe(await roomFor(own.key));
    expect(t.unpaired).toBe(true);
    expect(t.history.lastRefused?.why).toMatch(/removed/);
    // Said in the sync status line: removed, and why; never "synced".
    const words = syncWords({ ...OFF, phase: 'unpaired', devices: ring, ...seenWords(t, ring) });
    expect(words.headline).toBe('This device was unpaired');
    expect(words.detail).toMatch(/could not follow \(a new key from Laptop, which Phone removed from sync\)/);
    // It writes nothing more there.
    await expect(t.push()).rejects.toThrow(/unpaired/);
  });
});
