// The sync fault matrix: every multi-step sync action, with the tab killed before each of
// its steps (each write transaction and each post to the relay), then opened again on the same
// database. Each row checks the state right after the kill and once the device has resumed.
// What it caught: a crash while unpairing left the laptop in the old room (which the unpaired
// phone still read); "Keep this device's data" killed mid-way left no data at all; a message
// whose processing failed was skipped for good as "seen".
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Memory } from '../../../src/memory/types';
import { readSyncRow } from '../../../src/store/sync-store';
import { importBackup } from '../../../src/store/backup';
import { keyFromRaw, roomOf } from '../../../src/services/sync/keys';
import { RelayClient } from '../../../src/services/sync/relay-client';
import type { SyncConfig } from '../../../src/services/sync/sync-config';
import { memory, session } from './records';
import { until } from './devices';
import { type Device, device, killedAt, quiet, relayFor, reopen, settled, wroteWords } from './faults';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** The rows of the matrix, printed at the end (RELIABILITY.md has them). */
const table: string[] = [];
afterAll(() => console.log(`[faults]\n${table.join('\n')}`));

const many = (n: number, prefix: string): Memory[] => Array.from({ length: n }, (_, i) => memory(`${prefix}${i}`, `${prefix} memory ${i}`));
const count = async (d: Device) => (await d.repo.listMemories()).length;

async function pairLaptopPhone(laptopMemories = 20) {
  const relay = await relayFor(closers);
  const laptop = await device('laptop');
  const phone = await device('phone');
  const ds = { relay, laptop, phone };
  closers.push(() => {
    for (const d of [ds.laptop, ds.phone]) {
      d.sync.stop();
      d.repo.close();
    }
  });
  await laptop.repo.apply({ sessions: [session], memories: many(laptopMemories, 'l') });
  await laptop.sync.turnOn(relay.url, 'Laptop');
  await settled('the laptop’s upload', laptop);
  await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Phone');
  await until('the first sync', async () => (await count(phone)) === laptopMemories);
  await settled('both idle', laptop, phone);
  return ds;
}

/**
 * Runs a row for every step of `act` (counted on a first run that is not killed). `setup` builds a
 * fresh world; `act` starts the action on the device `victim` names; `done` says it has ended;
 * `check` runs after the kill (`killed`) and again on the reopened device.
 */
async function matrix<W extends { relay: { url: string } }>(
  name: string,
  setup: () => Promise<W>,
  victim: (w: W) => Device,
  act: (w: W) => Promise<unknown>,
  done: (w: W) => Promise<boolean> | boolean,
  afterKill: (w: W) => Promise<void>,
  resume: (w: W, d: Device) => Promise<void>,
): Promise<void> {
  const first = await setup();
  await killedAt(
    victim(first),
    Infinity,
    () => act(first),
    () => done(first),
  );
  // Every step of the action, the last saves after it included: its loop has gone back to waiting.
  await until(`${name}: the saves after it`, () => quiet(victim(first), first.relay.url));
  const steps = [...victim(first).killer.steps];
  const wrote = [...victim(first).killer.wrote];
  const named = (k: number) => (steps[k - 1] === 'a write' ? `the write of ${wroteWords(wrote[k - 1])}` : steps[k - 1]);
  while (closers.length) await closers.pop()!();
  expect(steps.length).toBeGreaterThan(1);
  for (let k = 1; k <= steps.length; k++) {
    const w = await setup();
    let killed = await killedAt(
      victim(w),
      k,
      () => act(w),
      () => done(w),
    );
    // The last steps (saves after the action) come a moment later, and not always: wait for them,
    // or for the loop to go back to waiting without them.
    if (!killed) await until(`${name}: step ${k}`, async () => victim(w).killer.dead || (await quiet(victim(w), w.relay.url)));
    killed = victim(w).killer.dead;
    if (!killed) {
      table.push(`| ${name} | ${k} of ${steps.length} | (this run ended in ${victim(w).killer.steps.length} steps) | ok |`);
      while (closers.length) await closers.pop()!();
      continue;
    }
    await afterKill(w);
    await resume(w, await reopen(victim(w)));
    table.push(`| ${name} | ${k} of ${steps.length} | before ${named(k)} | ok |`);
    while (closers.length) await closers.pop()!();
  }
}

/** A tablet paired through the laptop as well. */
async function threeDevices() {
  const w = await pairLaptopPhone();
  const tablet = await device('tablet');
  closers.push(() => (tablet.sync.stop(), tablet.repo.close()));
  await tablet.sync.join(w.relay.url, await w.laptop.sync.offerCode(), 'Tablet');
  await until('the tablet’s first sync', async () => (await count(tablet)) === 20);
  await until('the tablet in every list', () => [w.laptop, w.phone].every((d) => d.sync.status.devices.length === 3));
  await settled('all idle', w.laptop, w.phone, tablet);
  return { ...w, tablet };
}

/** The laptop's key change is over: no `rotation` row, idle. */
const rotated = async (d: Device) =>
  (await readSyncRow(d.repo.db, 'rotation')) === undefined && d.sync.status.phase === 'synced' && !d.sync.status.pending;

/** A memory written on `from` after everything: who gets it. */
async function canary(from: Device, id: string) {
  await from.repo.apply({ memories: [memory(id, `written after the key change: ${id}`)] });
  await until('the canary sent', () => !from.sync.status.pending && from.sync.status.phase === 'synced');
}

describe('the fault matrix', () => {
  it('“Keep this device’s data”: the phone never loses its data, and it reaches the laptop', async () => {
    const setup = async () => {
      const w = await pairLaptopPhone();
      await w.phone.repo.apply({ memories: many(12, 'p') });
      await until('the phone’s own on the laptop', async () => (await count(w.laptop)) === 32);
      await w.laptop.repo.wipeAll({ syncReset: true });
      await w.laptop.sync.deletedAll();
      await until('the question', () => w.phone.sync.status.phase === 'deleted-elsewhere');
      return w;
    };
    await matrix(
      'Keep this device’s data',
      setup,
      (w) => w.phone,
      async (w) => w.phone.sync.answerReset('keep'),
      async (w) => (await count(w.laptop)) === 32 && w.phone.sync.status.phase === 'synced' && !w.phone.sync.status.pending,
      async (w) => {
        // Right after the kill: every record of the phone is still there.
        expect(await count(w.phone)).toBe(32);
      },
      async (w, phone) => {
        closers.push(() => (phone.sync.stop(), phone.repo.close()));
        // Asked again if the answer had not been kept; the same answer.
        await until('the phone resumes', () => phone.sync.status.phase === 'deleted-elsewhere' || phone.sync.status.phase === 'synced');
        if (phone.sync.status.phase === 'deleted-elsewhere') phone.sync.answerReset('keep');
        await until('the laptop gets the phone’s data', async () => (await count(w.laptop)) === 32);
        expect(await count(phone)).toBe(32);
      },
    );
  });

  it('unpairing: the laptop ends in the new room; the unpaired phone reads nothing written after, the tablet does', async () => {
    await matrix(
      'Unpair a device',
      threeDevices,
      (w) => w.laptop,
      async (w) => w.laptop.sync.unpair(w.phone.sync.status.selfId),
      async (w) => rotated(w.laptop),
      async () => undefined,
      async (w, laptop) => {
        closers.push(() => (laptop.sync.stop(), laptop.repo.close()));
        await until('the laptop resumes', () => laptop.sync.status.phase === 'synced');
        // Killed before the change was kept anywhere: nothing happened, so the user unpairs again.
        if ((await readSyncRow(laptop.repo.db, 'rotation')) === undefined && laptop.sync.status.devices.length === 3) {
          await laptop.sync.unpair(w.phone.sync.status.selfId);
        }
        await until('the key change finished', () => rotated(laptop));
        expect(laptop.sync.status.devices.map((d) => d.name).sort()).toEqual(['Laptop', 'Tablet']);
        await until('the phone told', () => w.phone.sync.status.phase === 'unpaired');
        await canary(laptop, 'after-unpair');
        await until('the tablet gets it', async () => (await w.tablet.repo.getMemory('after-unpair')) !== undefined);
        // The phone's loop ended when it was told (phase unpaired): nothing reaches it after that.
        expect(await w.phone.repo.getMemory('after-unpair')).toBeUndefined();
      },
    );
  });

  it('a new key for all: every device ends in the one new room', async () => {
    await matrix(
      'Make a new key',
      threeDevices,
      (w) => w.laptop,
      async (w) => w.laptop.sync.unpair(),
      async (w) => rotated(w.laptop),
      async () => undefined,
      async (w, laptop) => {
        closers.push(() => (laptop.sync.stop(), laptop.repo.close()));
        await until('the laptop resumes', () => laptop.sync.status.phase === 'synced');
        const key = async (d: Device) => ((await readSyncRow(d.repo.db, 'config')) as { key: { raw: Uint8Array } }).key.raw.join();
        const before = await key(w.tablet);
        if ((await readSyncRow(laptop.repo.db, 'rotation')) === undefined && (await key(laptop)) === before) await laptop.sync.unpair();
        await until('the key change finished', () => rotated(laptop));
        await canary(laptop, 'after-rotation');
        for (const d of [w.phone, w.tablet])
          await until(`${d.name} gets it`, async () => (await d.repo.getMemory('after-rotation')) !== undefined);
        await settled('all idle', w.phone, w.tablet);
        expect(new Set([await key(laptop), await key(w.phone), await key(w.tablet)]).size).toBe(1);
      },
    );
  });

  it('“Delete here too”: the phone ends empty, asked again if the tab closed first, and syncs on', async () => {
    const setup = async () => {
      const w = await pairLaptopPhone();
      await w.laptop.repo.wipeAll({ syncReset: true });
      await w.laptop.sync.deletedAll();
      await until('the question', () => w.phone.sync.status.phase === 'deleted-elsewhere');
      return w;
    };
    await matrix(
      'Delete here too',
      setup,
      (w) => w.phone,
      async (w) => w.phone.sync.answerReset('wipe'),
      async (w) => (await count(w.phone)) === 0 && w.phone.sync.status.phase === 'synced',
      async (w) => {
        // All or nothing: the phone's data is whole or gone, never half of it.
        expect([0, 20]).toContain(await count(w.phone));
      },
      async (w, phone) => {
        closers.push(() => (phone.sync.stop(), phone.repo.close()));
        await until('the phone resumes', () => phone.sync.status.phase === 'deleted-elsewhere' || phone.sync.status.phase === 'synced');
        if (phone.sync.status.phase === 'deleted-elsewhere') phone.sync.answerReset('wipe');
        await until('the phone empty', async () => (await count(phone)) === 0 && phone.sync.status.phase === 'synced');
        await canary(w.laptop, 'after-wipe');
        await until('the phone syncs on', async () => (await phone.repo.getMemory('after-wipe')) !== undefined);
        expect(await count(phone)).toBe(1);
      },
    );
  });

  it('receiving: every change arrives once, none refused as a replay', async () => {
    const setup = async () => {
      const w = await pairLaptopPhone();
      const phone = await reopen(w.phone, false);
      closers.push(() => (phone.sync.stop(), phone.repo.close()));
      // Five changes while the phone is closed, each its own message.
      for (let i = 0; i < 5; i++) {
        await w.laptop.repo.apply({ memories: many(3, `r${i}-`) });
        await settled('sent', w.laptop);
      }
      return { ...w, phone };
    };
    await matrix(
      'Receive messages',
      setup,
      (w) => w.phone,
      async (w) => w.phone.sync.start(),
      async (w) => (await count(w.phone)) === 35 && w.phone.sync.status.phase === 'synced',
      async () => undefined,
      async (w, phone) => {
        closers.push(() => (phone.sync.stop(), phone.repo.close()));
        await until('everything arrives', async () => (await count(phone)) === 35 && phone.sync.status.phase === 'synced');
        await canary(w.laptop, 'after-receive');
        await until('a later change arrives', async () => (await phone.repo.getMemory('after-receive')) !== undefined);
        expect(phone.sync.status.history).toBeUndefined();
      },
    );
  });

  it('sending: a change written on the phone reaches the laptop once, and the next one too', async () => {
    await matrix(
      'Send a change',
      pairLaptopPhone,
      (w) => w.phone,
      async (w) => w.phone.repo.apply({ memories: [memory('sent-1', 'a change to send')] }),
      async (w) => (await w.laptop.repo.getMemory('sent-1')) !== undefined && !w.phone.sync.status.pending,
      async () => undefined,
      async (w, phone) => {
        closers.push(() => (phone.sync.stop(), phone.repo.close()));
        // Killed before its own write: the change was never made (the user sees it was not saved).
        if ((await phone.repo.getMemory('sent-1')) === undefined)
          await phone.repo.apply({ memories: [memory('sent-1', 'a change to send')] });
        await until('the change on the laptop', async () => (await w.laptop.repo.getMemory('sent-1')) !== undefined);
        await phone.repo.apply({ memories: [memory('sent-2', 'the next change')] });
        await until('the next change on the laptop', async () => (await w.laptop.repo.getMemory('sent-2')) !== undefined);
        expect(w.laptop.sync.status.history).toBeUndefined();
      },
    );
  });

  it('a delete and the compaction after it: the relay ends compacted, the delete everywhere, sync goes on', async () => {
    const compacted = async (w: { relay: { url: string }; laptop: Device }) => {
      const relay = new RelayClient(w.relay.url);
      const config = (await readSyncRow(w.laptop.repo.db, 'config')) as SyncConfig;
      const room = await roomOf(await keyFromRaw(config.key.raw, config.key.createdAt));
      return ((await relay.read(room, 0)).messages[0]?.seq ?? 0) > 1;
    };
    await matrix(
      'Delete, then compact',
      pairLaptopPhone,
      (w) => w.laptop,
      async (w) => w.laptop.repo.apply({ deleteMemories: ['l0', 'l1'], tombstones: [{ kind: 'memory', id: 'l0', deletedAt: Date.now() }] }),
      async (w) => (await compacted(w)) && w.laptop.sync.status.phase === 'synced' && !w.laptop.sync.status.pending,
      async () => undefined,
      async (w, laptop) => {
        closers.push(() => (laptop.sync.stop(), laptop.repo.close()));
        // Killed before its own write: the delete was never made (the user sees it was not); again.
        if ((await laptop.repo.getMemory('l0')) !== undefined) {
          await laptop.repo.apply({ deleteMemories: ['l0', 'l1'], tombstones: [{ kind: 'memory', id: 'l0', deletedAt: Date.now() }] });
        }
        await until('the relay compacted', () => compacted({ relay: w.relay, laptop }));
        await until('the phone deletes them', async () => (await w.phone.repo.getMemory('l1')) === undefined);
        await w.phone.repo.apply({ memories: [memory('after-compaction', 'still syncing')] });
        await until('sync goes on', async () => (await laptop.repo.getMemory('after-compaction')) !== undefined);
      },
    );
  });

  it('a backup imported with sync on: it reaches the phone whole', async () => {
    const backup = JSON.stringify({
      format: 'tealeaf-backup',
      version: 1,
      exportedAt: Date.now(),
      data: { sessions: [], turns: [], memories: many(8, 'b').map((m) => ({ ...m })), edges: [], segments: [], settings: [] },
    });
    const imported = async (d: Device) => (await d.repo.listMemories()).filter((m) => m.id.startsWith('b')).length;
    await matrix(
      'Import a backup',
      pairLaptopPhone,
      (w) => w.laptop,
      async (w) => {
        await importBackup(w.laptop.repo.db, backup, { mode: 'merge' });
        w.laptop.sync.imported();
      },
      async (w) => (await imported(w.phone)) === 8 && (await readSyncRow(w.laptop.repo.db, 'reconcile')) === undefined,
      async (w) => {
        // The import is all or nothing.
        expect([0, 8]).toContain(await imported(w.laptop));
      },
      async (w, laptop) => {
        closers.push(() => (laptop.sync.stop(), laptop.repo.close()));
        // Killed before the import's own write: nothing was imported (the user is told), so again.
        if ((await imported(laptop)) === 0) {
          await importBackup(laptop.repo.db, backup, { mode: 'merge' });
          laptop.sync.imported();
        }
        await until('the import on the phone', async () => (await imported(w.phone)) === 8);
      },
    );
  });
});
