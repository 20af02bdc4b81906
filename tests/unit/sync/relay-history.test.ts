// The relay's history is checked. A relay that drops, swaps or
// withholds messages, or that comes back empty or from an older copy, no longer stops sync while
// every device says "Synced": a swapped message applies, a dropped one is named and asked for
// again (the other devices send what they hold), and a relay that went back is read again from
// its start and sent what it lost. Each is said in words.
import 'fake-indexeddb/auto';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import { type SyncStatus, syncWords } from '../../../src/services/sync/sync-status';
import { memory, session } from './records';
import { until } from './devices';
import { keyHolder } from './hostile';
import { lyingRelay } from './hostile-relay';
import { type Device, device, reopen, settled } from './faults';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function relayAt(dir = mkdtempSync(join(tmpdir(), 'tealeaf-history-')), port = 0) {
  const relay = await startRelay({ port, dir, waitMs: 2000 });
  return { ...relay, dir, port: Number(new URL(relay.url).port) };
}

/** The laptop on the relay itself, the phone through `phoneUrl` (a lying relay, or the same). */
async function paired(relayUrl: string, phoneUrl = relayUrl) {
  const laptop = await device('laptop');
  const phone = await device('phone');
  for (const d of [laptop, phone]) closers.push(() => (d.sync.stop(), d.repo.close()));
  await laptop.repo.apply({ sessions: [session], memories: [memory('m0', 'before')] });
  await laptop.sync.turnOn(relayUrl, 'Laptop');
  await settled('the upload', laptop);
  await phone.sync.join(phoneUrl, await laptop.sync.offerCode(), 'Phone');
  await until('the first sync', async () => (await phone.repo.getMemory('m0')) !== undefined);
  await settled('both idle', laptop, phone);
  return { laptop, phone };
}

/** Writes on `d`, waits until it is sent, and returns the relay positions its message took. */
async function write(d: Device, relayUrl: string, id: string, text: string): Promise<number[]> {
  const room = await keyHolder(d.repo.db, relayUrl);
  const before = (await room.relay.read(room.room, 0)).last;
  await d.repo.apply({ memories: [memory(id, text)] });
  await until('posted', async () => (await room.relay.read(room.room, 0)).last > before);
  await settled('sent', d);
  const after = (await room.relay.read(room.room, 0)).last;
  return Array.from({ length: after - before }, (_, i) => before + i + 1);
}

/** Starts a closed device again, keeping every status it shows. */
async function startWatched(d: Device): Promise<{ d: Device; seen: SyncStatus[] }> {
  const seen: SyncStatus[] = [];
  d.sync.on('status', (s) => seen.push(s));
  closers.push(() => (d.sync.stop(), d.repo.close()));
  await d.sync.start();
  return { d, seen };
}

describe('a relay that lies about its history', () => {
  it('drops a message: it is named as missing, asked for again, and what came after is not blocked', async () => {
    const relay = await relayAt();
    closers.push(() => relay.close());
    const liar = await lyingRelay(relay.url);
    closers.push(() => liar.close());
    const { laptop, phone } = await paired(relay.url, liar.url);
    const closed = await reopen(phone, false);
    await write(laptop, relay.url, 'a', 'first');
    for (const at of await write(laptop, relay.url, 'b', 'the one the relay drops')) liar.lies.drop.add(at);
    await write(laptop, relay.url, 'c', 'after the dropped one');
    const { d, seen } = await startWatched(closed);
    await until('everything on the phone', async () => {
      const got = await Promise.all(['a', 'b', 'c'].map((id) => d.repo.getMemory(id)));
      return got.every((m) => m !== undefined);
    });
    const named = seen.find((s) => s.history?.missing.some((m) => m.from === 'Laptop'));
    expect(named, 'the missing message was named').toBeDefined();
    expect(syncWords(named!).detail).toMatch(/1 message from Laptop is missing: the relay dropped or is holding it back/);
    // Once the laptop sent it again, nothing is missing any more.
    await until('nothing missing', () => d.sync.status.phase === 'synced' && !d.sync.status.history?.missing.length);
  });

  it('swaps two messages: both apply, none is refused as a replay', async () => {
    const relay = await relayAt();
    closers.push(() => relay.close());
    const liar = await lyingRelay(relay.url);
    closers.push(() => liar.close());
    const { laptop, phone } = await paired(relay.url, liar.url);
    const closed = await reopen(phone, false);
    const [x] = await write(laptop, relay.url, 'd', 'said first');
    const [y] = await write(laptop, relay.url, 'e', 'said second');
    liar.lies.swap.push([x, y]);
    const { d } = await startWatched(closed);
    await until(
      'both on the phone',
      async () => (await d.repo.getMemory('d')) !== undefined && (await d.repo.getMemory('e')) !== undefined,
    );
    await settled('idle', d);
    expect(d.sync.status.history?.refused).toBeUndefined();
  });

  it('replays a message: it is refused, named, and nothing after it is lost', async () => {
    const relay = await relayAt();
    closers.push(() => relay.close());
    const { laptop, phone } = await paired(relay.url);
    const room = await keyHolder(laptop.repo.db, relay.url);
    const [at] = await write(laptop, relay.url, 'f', 'once');
    const again = (await room.relay.read(room.room, at - 1)).messages[0];
    await room.relay.post(room.room, again.bytes);
    await write(laptop, relay.url, 'g', 'after the replay');
    await until('the phone has it', async () => (await phone.repo.getMemory('g')) !== undefined);
    await until('the replay named', () => phone.sync.status.history?.refused?.replayed === 1);
    expect(syncWords(phone.sync.status).detail).toMatch(/1 message was refused: replayed \(sent again by the relay\)/);
  });
});

describe('a relay that went back', () => {
  for (const how of ['restarted empty', 'restored from an older copy'] as const) {
    it(`${how}: every device notices, says so, and sends what it lost again; sync goes on`, async () => {
      const relay = await relayAt();
      const { laptop, phone } = await paired(relay.url);
      const copy = mkdtempSync(join(tmpdir(), 'tealeaf-history-copy-'));
      if (how === 'restored from an older copy') cpSync(relay.dir, copy, { recursive: true });
      await write(laptop, relay.url, 'x1', 'lost with the relay');
      await write(phone, relay.url, 'x2', 'lost with the relay too');
      await until('the phone has x1', async () => (await phone.repo.getMemory('x1')) !== undefined);
      await until('the laptop has x2', async () => (await laptop.repo.getMemory('x2')) !== undefined);
      await settled('both idle', laptop, phone);
      await relay.close();
      const back = await relayAt(copy, relay.port);
      closers.push(() => back.close());
      await until('both notice', () => [laptop, phone].every((d) => d.sync.status.history?.behind !== undefined));
      expect(syncWords(phone.sync.status).detail).toMatch(/the relay had lost messages/);
      await laptop.repo.apply({ memories: [memory('x3', 'after the relay came back')] });
      await until('the phone gets it', async () => (await phone.repo.getMemory('x3')) !== undefined);
      // What the relay lost was sent again: a device paired now gets all of it.
      await settled('both idle', laptop, phone);
      const tablet = await device('tablet');
      closers.push(() => (tablet.sync.stop(), tablet.repo.close()));
      await tablet.sync.join(back.url, await laptop.sync.offerCode(), 'Tablet');
      await until('the tablet has everything', async () => {
        const got = await Promise.all(['m0', 'x1', 'x2', 'x3'].map((id) => tablet.repo.getMemory(id)));
        return got.every((m) => m !== undefined);
      });
    });
  }
});
