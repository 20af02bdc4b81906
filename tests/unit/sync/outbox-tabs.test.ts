// Sync turned on in one tab: a tab opened before it still queues what it writes (the repository
// reads whether sync is on in the write's own transaction, not from what the tab heard at start).
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Memory } from '../../../src/memory/types';
import { openTealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { readSyncRows, writeSyncRows } from '../../../src/store/sync-store';
import { SyncService } from '../../../src/services/sync/sync-service';
import { freshFactory } from '../store/helpers';
import { memory, session } from './records';

const outbox = async (repo: IdbRepository) =>
  [...(await readSyncRows(repo.db)).entries()].filter(([k]) => k.startsWith('out:')).map(([, v]) => v as { memories?: Memory[] });

describe('the out-box across tabs', () => {
  it('nothing is queued while sync is off; once another tab turns it on, this tab’s writes are queued', async () => {
    const factory = freshFactory();
    const tabA = new IdbRepository(await openTealeafDb({ factory }));
    const tabB = new IdbRepository(await openTealeafDb({ factory }));
    // Both tabs start with sync off (each makes its sync service at start, as the app does).
    new SyncService(tabA);
    new SyncService(tabB);

    await tabB.apply({ sessions: [session], memories: [memory('m1', 'Before sync was on.')] });
    expect(await outbox(tabB)).toEqual([]);

    // Tab A turns sync on: its first step keeps the config row (SyncService.turnOn).
    await writeSyncRows(tabA.db, { puts: [{ key: 'config', value: { relayUrl: 'http://127.0.0.1:1' } }] });

    await tabB.apply({ memories: [memory('m2', 'Written in the tab that did not hear of it.')] });
    const queued = await outbox(tabA);
    expect(queued.flatMap((c) => c.memories ?? []).map((m) => m.id)).toEqual(['m2']);
    tabA.close();
    tabB.close();
  });
});
