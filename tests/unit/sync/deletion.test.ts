// Deleting deletes in sync too. After a chat is deleted (or everything is),
// its words are in no device's `sync` rows (the document's log is folded into a fresh,
// garbage-collected snapshot), and not on the relay either: the deleting device posts a snapshot
// of the document as it is now and the relay drops every message before it, so a device paired
// later gets no deleted data. Before, the words stayed in the `doc:u:*` rows of every device, and
// a device paired later received the deleted chat from the relay's full history.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Turn } from '../../../src/memory/types';
import { readSyncRows } from '../../../src/store/sync-store';
import type { TealeafDb } from '../../../src/store/db';
import { T, memory, session } from './records';
import { until } from './devices';
import { keyHolder } from './hostile';
import { type Device, device, relayFor, settled } from './faults';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const CANARY = 'zebracanary4471';
const secret: Turn = { id: 's2/t0', sessionId: 's2', index: 0, role: 'user', text: `my PIN is ${CANARY}`, time: T, status: 'complete' };

/** Whether any `sync` row of the database holds the words, in its bytes or its values. */
async function rowsHold(db: TealeafDb, words: string): Promise<string[]> {
  const found: string[] = [];
  const walk = (key: string, v: unknown): void => {
    if (v instanceof Uint8Array) {
      if (Buffer.from(v).includes(words)) found.push(key);
    } else if (Array.isArray(v)) v.forEach((x) => walk(key, x));
    else if (v && typeof v === 'object') Object.values(v).forEach((x) => walk(key, x));
    else if (typeof v === 'string' && v.includes(words)) found.push(key);
  };
  for (const [key, value] of await readSyncRows(db)) walk(key, value);
  return [...new Set(found)];
}

async function paired() {
  const relay = await relayFor(closers);
  const options = { compactEveryMs: 0 };
  const laptop = await device('laptop', options);
  const phone = await device('phone', options);
  for (const d of [laptop, phone]) closers.push(() => (d.sync.stop(), d.repo.close()));
  await laptop.repo.apply({
    sessions: [session, { ...session, id: 's2', title: 'a secret chat' }],
    turns: [secret],
    memories: [memory('m1', 'kept')],
  });
  await laptop.sync.turnOn(relay.url, 'Laptop');
  await settled('the upload', laptop);
  await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Phone');
  await until('the first sync', async () => (await phone.repo.listTurns('s2')).length === 1);
  // A few more changes, so the secret sits in the middle of the history.
  await laptop.repo.apply({ memories: [memory('m2', 'two')] });
  await until('more', async () => (await phone.repo.getMemory('m2')) !== undefined);
  await settled('both idle', laptop, phone);
  expect((await rowsHold(phone.repo.db, CANARY)).length).toBeGreaterThan(0);
  return { relay, laptop, phone };
}

async function pairLater(relayUrl: string, through: Device) {
  const tablet = await device('tablet');
  closers.push(() => (tablet.sync.stop(), tablet.repo.close()));
  await tablet.sync.join(relayUrl, await through.sync.offerCode(), 'Tablet');
  await settled('the tablet’s first sync', tablet);
  return tablet;
}

describe('deleting deletes in sync too', () => {
  it('a deleted chat: in no device’s sync rows, not on the relay, not on a device paired later', async () => {
    const { relay, laptop, phone } = await paired();
    await laptop.repo.apply({
      deleteSessions: ['s2'],
      deleteTurns: [secret.id],
      tombstones: [{ kind: 'session', id: 's2', deletedAt: T + 1 }],
    });
    await until('the phone deletes it', async () => (await phone.repo.getSession('s2')) === undefined);
    await settled('both idle', laptop, phone);
    await until('the laptop’s rows folded', async () => (await rowsHold(laptop.repo.db, CANARY)).length === 0);
    await until('the phone’s rows folded', async () => (await rowsHold(phone.repo.db, CANARY)).length === 0);
    const room = await keyHolder(laptop.repo.db, relay.url);
    await until('the relay compacted', async () => !(await room.plaintexts()).includes(CANARY));
    expect((await room.relay.read(room.room, 0)).messages[0]?.seq).toBeGreaterThan(1);

    const tablet = await pairLater(relay.url, laptop);
    expect(await tablet.repo.getMemory('m2')).toBeDefined();
    expect(await tablet.repo.getSession('s2')).toBeUndefined();
    expect(await rowsHold(tablet.repo.db, CANARY)).toEqual([]);
    // Sync goes on for everyone after the compaction.
    await phone.repo.apply({ memories: [memory('m3', 'after')] });
    for (const d of [laptop, tablet]) await until(`${d.name} gets it`, async () => (await d.repo.getMemory('m3')) !== undefined);
  });

  it('delete-all: the relay keeps nothing of before, and neither does any device', async () => {
    const { relay, laptop, phone } = await paired();
    await laptop.repo.wipeAll({ syncReset: true });
    await laptop.sync.deletedAll();
    await until('the question', () => phone.sync.status.phase === 'deleted-elsewhere');
    phone.sync.answerReset('wipe');
    await until('the phone empty', async () => (await phone.repo.countAll()).turns === 0);
    await settled('both idle', laptop, phone);
    const room = await keyHolder(laptop.repo.db, relay.url);
    await until('the relay compacted', async () => {
      const all = await room.plaintexts();
      return !all.includes(CANARY) && !all.includes('kept');
    });
    for (const d of [laptop, phone]) await until(`${d.name}’s rows folded`, async () => (await rowsHold(d.repo.db, CANARY)).length === 0);
    const tablet = await pairLater(relay.url, laptop);
    expect((await tablet.repo.countAll()).memories).toBe(0);
    expect(await rowsHold(tablet.repo.db, CANARY)).toEqual([]);
  });
});
