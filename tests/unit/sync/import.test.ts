// A backup imported with sync on reaches the other devices. The import's own
// transaction leaves a `reconcile` row (importBackup), and the sync loop takes what differs from the
// store into its document; a replace also deletes there what the file does not hold.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { importBackup } from '../../../src/store/backup';
import type { TealeafBackup } from '../../../src/store/backup';
import { readSyncRow } from '../../../src/store/sync-store';
import { T, memory, session } from './records';
import { until } from './devices';
import { device, relayFor, reopen, settled } from './faults';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const file = (ids: string[]): TealeafBackup => ({
  format: 'tealeaf-backup',
  version: 1,
  exportedAt: T,
  data: {
    sessions: [{ ...session, id: 'imported', title: 'from the backup' }],
    turns: [],
    memories: ids.map((id) => ({ ...memory(id, `imported ${id}`), sessionId: 'imported' })),
    edges: [],
    segments: [],
    settings: [],
  },
});

async function paired() {
  const relay = await relayFor(closers);
  const laptop = await device('laptop');
  const phone = await device('phone');
  for (const d of [laptop, phone]) closers.push(() => (d.sync.stop(), d.repo.close()));
  await laptop.repo.apply({ sessions: [session], memories: [memory('m1', 'already here')] });
  await laptop.sync.turnOn(relay.url, 'Laptop');
  await settled('the upload', laptop);
  await phone.sync.join(relay.url, await laptop.sync.offerCode(), 'Phone');
  await until('the first sync', async () => (await phone.repo.getMemory('m1')) !== undefined);
  await settled('both idle', laptop, phone);
  return { laptop, phone };
}

describe('a backup imported with sync on', () => {
  it('merged: its records reach the other device', async () => {
    const { laptop, phone } = await paired();
    await importBackup(laptop.repo.db, JSON.stringify(file(['b1', 'b2', 'b3'])), { mode: 'merge' });
    laptop.sync.imported();
    await until('the import on the phone', async () => (await phone.repo.listMemories()).length === 4);
    expect((await phone.repo.getSession('imported'))?.title).toBe('from the backup');
    await until('the row taken', async () => (await readSyncRow(laptop.repo.db, 'reconcile')) === undefined);
    expect((await phone.repo.getMemory('m1'))?.text).toBe('already here');
  });

  it('replacing: the other device ends with exactly what the file holds', async () => {
    const { laptop, phone } = await paired();
    await importBackup(laptop.repo.db, JSON.stringify(file(['r1'])), { mode: 'replace' });
    laptop.sync.imported();
    await until('the phone holds the file', async () => (await phone.repo.listMemories()).map((m) => m.id).join() === 'r1');
    expect((await phone.repo.listSessions()).map((s) => s.id)).toEqual(['imported']);
  });

  it('made in a tab without the loop (the row waits for it), also across a restart', async () => {
    const { laptop, phone } = await paired();
    laptop.sync.stop();
    await importBackup(laptop.repo.db, JSON.stringify(file(['c1'])), { mode: 'merge' });
    expect(await readSyncRow(laptop.repo.db, 'reconcile')).toBeDefined();
    const again = await reopen(laptop);
    closers.push(() => (again.sync.stop(), again.repo.close()));
    await until('the import on the phone', async () => (await phone.repo.getMemory('c1')) !== undefined);
  });
});
