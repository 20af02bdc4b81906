// Two tabs of one browser profile: one runs the sync loop (Web Lock `tealeaf-sync`), the other shows
// that tab's state, not "starting" for ever, and forwards the user's answers to it (SyncService.heard).
import 'fake-indexeddb/auto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import { openTealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { SyncService } from '../../../src/services/sync/sync-service';
import { syncWords } from '../../../src/services/sync/sync-status';
import { freshFactory } from '../store/helpers';
import { memory, session } from './records';
import { onDevice, until } from './devices';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.unstubAllGlobals();
  while (closers.length) await closers.pop()!();
});

/** Web Locks as a browser has them, one lock manager per device (its tabs share it). */
function lockManager() {
  const queues = new Map<string, Promise<unknown>>();
  return {
    request(name: string, fn: () => Promise<unknown>) {
      const run = (queues.get(name) ?? Promise.resolve()).then(fn);
      queues.set(
        name,
        run.catch(() => undefined),
      );
      return run;
    },
  };
}

/** A tab of `device`: its channels and locks are that device's (one process holds every device here). */
function tab(repo: IdbRepository, device: string, locks: ReturnType<typeof lockManager>): SyncService {
  vi.stubGlobal('navigator', { locks });
  const s = onDevice(device, () => new SyncService(repo));
  // The service reads navigator.locks when it starts or turns sync on: keep it for this tab's calls.
  const wrap = <K extends 'start' | 'turnOn' | 'join'>(k: K) => {
    const f = s[k].bind(s) as (...a: unknown[]) => Promise<unknown>;
    (s as unknown as Record<string, unknown>)[k] = async (...a: unknown[]) => {
      vi.stubGlobal('navigator', { locks });
      try {
        return await f(...a);
      } finally {
        vi.unstubAllGlobals();
      }
    };
  };
  wrap('start');
  wrap('turnOn');
  wrap('join');
  return s;
}

describe('sync in two tabs of one browser', () => {
  it('the second tab shows the loop tab’s state, and its answers and “turn off” reach the loop tab', async () => {
    const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-tabs-')) });
    closers.push(() => relay.close());
    const laptopDb = freshFactory();
    const laptopLocks = lockManager();
    const tab1Repo = new IdbRepository(await openTealeafDb({ factory: laptopDb }));
    const tab2Repo = new IdbRepository(await openTealeafDb({ factory: laptopDb }));
    const phoneRepo = new IdbRepository(await openTealeafDb({ factory: freshFactory() }));
    closers.push(() => (tab1Repo.close(), tab2Repo.close(), phoneRepo.close()));
    const tab1 = tab(tab1Repo, 'laptop', laptopLocks);
    const tab2 = tab(tab2Repo, 'laptop', laptopLocks);
    const phone = tab(phoneRepo, 'phone', lockManager());
    closers.push(() => phone.turnOff());

    await tab1Repo.apply({ sessions: [session], memories: [memory('m1', 'one')] });
    await tab1.turnOn(relay.url, 'Laptop');
    await until('tab 1 synced', () => tab1.status.phase === 'synced');
    await tab2.start();
    // Tab 2 waits for the lock, and meanwhile says what tab 1 knows.
    await until('tab 2 mirrors', () => tab2.status.phase === 'synced');
    expect(tab2.status.elsewhere).toBe(true);
    expect(syncWords(tab2.status).detail).toMatch(/Sync runs in another Tealeaf tab/);
    expect(syncWords(tab1.status).detail).not.toMatch(/another Tealeaf tab/);

    await phone.join(relay.url, await tab1.offerCode(), 'Phone');
    await until('the phone has the memory', async () => (await phoneRepo.getMemory('m1')) !== undefined);
    await until('tab 2 hears of the phone', () => tab2.status.devices.length === 2);

    // The phone deletes everything: tab 2 shows the question and answers it for tab 1's loop.
    await phoneRepo.wipeAll({ syncReset: true });
    await phone.deletedAll();
    await until('tab 2 is asked', () => tab2.status.phase === 'deleted-elsewhere');
    expect(tab2.status.deletedBy?.name).toBe('Phone');
    tab2.answerReset('wipe');
    await until('the laptop empties', async () => (await tab2Repo.countAll()).memories === 0 && tab1.status.phase === 'synced');

    // Turning sync off in tab 2 stops tab 1's loop, and both say off.
    await tab2.turnOff();
    await until('both off', () => tab1.status.phase === 'off' && tab2.status.phase === 'off');
    expect(tab2.status.elsewhere ?? false).toBe(false);
    expect(syncWords(tab2.status).headline).toBe('Sync is off');
    // Turned on again in tab 2: it gets the loop (tab 1 let go), not "starting" for ever.
    await tab2.turnOn(relay.url, 'Laptop again');
    await until('tab 2 runs sync', () => tab2.status.phase === 'synced' && !tab2.status.elsewhere);
    closers.push(() => tab2.turnOff());
  });
});
