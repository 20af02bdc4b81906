// Schema v4: a store written by an older version is brought within the limits, so its
// backup imports again. Nested edit branches become flat (with drewOn recomputed from every branch),
// a passage or memory longer than a record and a model name a server made up are cut, and the
// store of tombstones exists.
import { describe, expect, it } from 'vitest';
import { openTealeafDb } from '../../../src/store/db';
import { IdbRepository } from '../../../src/store/repository';
import { MIGRATIONS } from '../../../src/store/schema';
import { exportBackup, importBackup, serializeBackup } from '../../../src/store/backup';
import { showVersion } from '../../../src/services/chat/turn-versions';
import { MAX_MODEL_ID, MAX_TEXT } from '../../../src/memory/limits';
import type { UsedMemory } from '../../../src/memory/types';
import { dump, freshFactory, legacyEdits } from './helpers';

const used = (id: string): UsedMemory => ({ memoryIds: [id], segmentIds: [], timelines: [], scores: [] });

describe('migration to v4', () => {
  it('flattens nested branches, recomputes drewOn, fits overlong records, and the backup imports again', async () => {
    const factory = freshFactory();
    const v3 = await openTealeafDb({ factory, migrations: MIGRATIONS.slice(0, 3) });
    const turns = legacyEdits(20, { usedMemory: used('m1') });
    // The deepest put-away reply drew on another memory: only a walk through every branch finds it.
    const deepest = JSON.parse(JSON.stringify(turns)) as typeof turns;
    let node: Record<string, unknown> = deepest[0] as unknown as Record<string, unknown>;
    for (;;) {
      const after = (node.versions as Array<{ after?: Array<Record<string, unknown>> }> | undefined)?.[0]?.after;
      if (!after) break;
      const next = after.find((t) => Array.isArray(t.versions));
      if (!next) {
        after[0]!.usedMemory = used('m-deep');
        break;
      }
      node = next;
    }
    const tx = v3.transaction(['sessions', 'turns', 'segments', 'memories'], 'readwrite');
    await tx.objectStore('sessions').put({ id: 's', title: 't', startedAt: 1, lastActivityAt: 1, status: 'open' });
    for (const t of deepest) await tx.objectStore('turns').put(t as never);
    await tx.objectStore('turns').put({
      id: 'x',
      sessionId: 's',
      index: 99,
      role: 'assistant',
      text: 'hi',
      time: 1,
      status: 'complete',
      modelId: 'm'.repeat(1_000_001),
    });
    await tx.objectStore('segments').put({
      id: 's/seg/0',
      sessionId: 's',
      firstTurn: 0,
      lastTurn: 1,
      turnIds: ['u0', 'b0'],
      text: 'w'.repeat(1_204_066),
      indexText: 'w'.repeat(1_204_066),
      time: 1,
    });
    await tx.objectStore('memories').put({
      id: 'm1',
      kind: 'event',
      text: 'v'.repeat(MAX_TEXT + 5),
      time: 1,
      sourceTurnIds: [],
      sessionId: 's',
      edited: true,
      createdAt: 1,
    });
    await tx.done;
    v3.close();

    const repo = new IdbRepository(await openTealeafDb({ factory }));
    expect(repo.db.objectStoreNames.contains('tombstones')).toBe(true);
    const stored = await repo.listTurns('s');
    expect(JSON.stringify(stored)).not.toContain('"after"');
    expect(stored[0].drewOn).toEqual(['m-deep', 'm1']);
    expect(stored.find((t) => t.id === 'x')!.modelId!.length).toBeLessThanOrEqual(MAX_MODEL_ID);
    const [segment] = await repo.listSegments();
    expect(segment.text.length).toBeLessThanOrEqual(MAX_TEXT);
    expect(segment.indexText.length).toBeLessThanOrEqual(MAX_TEXT);
    expect((await repo.getMemory('m1'))!.text.length).toBeLessThanOrEqual(MAX_TEXT);
    // Every version is still there: flipping back to each first version walks the original chat.
    let shown = stored.filter((t) => t.id !== 'x');
    for (let i = 0; i < 20; i++) shown = showVersion(shown, 2 * i, 0).turns;
    expect(shown.map((t) => t.text)).toEqual(Array.from({ length: 20 }, (_, k) => [`m${k}`, `r${k}`]).flat());

    const text = serializeBackup(await exportBackup(repo.db, { now: () => 1 }));
    const target = await IdbRepository.open({ factory: freshFactory() });
    await importBackup(target.db, text, { mode: 'replace' });
    expect(await dump(target.db, ['sessions', 'turns', 'memories', 'segments'])).toBe(
      await dump(repo.db, ['sessions', 'turns', 'memories', 'segments']),
    );
  });
});
