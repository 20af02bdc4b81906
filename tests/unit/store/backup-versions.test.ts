// Turns with versions (an edited message, a regenerated reply) and the branches put away with them
// are part of a backup: the file checks, and a field out of place inside a branch is refused. Files
// made before the branches were flat (nested inside each version) still import, however deep.
import { describe, expect, it } from 'vitest';
import { importBackup, validateBackup } from '../../../src/store/backup';
import { IdbRepository } from '../../../src/store/repository';
import { showVersion } from '../../../src/services/chat/turn-versions';
import type { BranchTurn, Turn } from '../../../src/memory/types';
import { freshFactory, legacyEdits } from './helpers';

const turn = (id: string, index: number, text: string, extra: Partial<Turn> = {}): Turn => ({
  id,
  sessionId: 's',
  index,
  role: index % 2 ? 'assistant' : 'user',
  text,
  time: 1_700_000_000_000 + index,
  status: 'complete',
  ...extra,
});

function backupWith(turns: unknown[]) {
  return {
    format: 'tealeaf-backup',
    version: 1,
    exportedAt: 1_700_000_000_000,
    data: {
      sessions: [{ id: 's', title: 't', startedAt: 1_700_000_000_000, lastActivityAt: 1_700_000_000_000, status: 'open' }],
      turns,
      memories: [],
      edges: [],
      segments: [],
      settings: [],
    },
  };
}

describe('backup of turn versions', () => {
  it('accepts flat branches and keeps them as they were', () => {
    const put: BranchTurn = {
      id: 't3',
      role: 'assistant',
      text: 'later',
      time: 1,
      status: 'stopped',
      versions: [{ text: 'later, first try', time: 1, status: 'stopped', modelId: 'm' }],
      shown: 1,
      follows: { turnId: 't0', version: 0 },
    };
    const edited = turn('t0', 0, 'I like coffee', {
      versions: [{ text: 'I like tea', time: 1_700_000_000_000, status: 'complete' }],
      shown: 1,
      branches: [put],
    });
    const file = backupWith([edited, turn('t9', 1, 'You said: I like coffee')]);
    const { backup } = validateBackup(file);
    expect(backup.data.turns[0]).toEqual(edited);
    // Nothing to convert: the file's own objects, so an export imports and exports byte for byte.
    expect(backup).toBe(file);
  });

  it('refuses an unknown field inside a branch, also in a nested file', () => {
    const flat = turn('t0', 0, 'x', {
      branches: [{ id: 't1', role: 'user', text: 'z', time: 1, status: 'complete', colour: 'red' } as never],
    });
    expect(() => validateBackup(backupWith([flat]))).toThrow(/turns\[0\]\.branches\[0\]/);
    const nested = turn('t0', 0, 'x', {
      versions: [{ text: 'y', time: 1, status: 'complete', after: [{ ...turn('t1', 1, 'z'), colour: 'red' }] } as never],
    });
    expect(() => validateBackup(backupWith([nested]))).toThrow(/turns\[0\]/);
  });

  it('a nested file from an older version, 40 edits deep, imports flat and every version is still there', async () => {
    const legacy = legacyEdits(40);
    const text = JSON.stringify(backupWith(legacy));
    const repo = await IdbRepository.open({ factory: freshFactory() });
    await importBackup(repo.db, text, { mode: 'replace' });
    let turns = await repo.listTurns('s');
    expect(turns.map((t) => t.text)).toEqual(['m0 edited', 'r0 edited']);
    // Stored flat: no version holds turns, the branches hold every turn put away.
    expect(JSON.stringify(turns)).not.toContain('"after"');
    expect(turns[0].branches).toHaveLength(40 * 2 - 1 + 39);
    // Flipping back to each first version walks the whole original conversation.
    for (let i = 0; i < 40; i++) {
      turns = showVersion(turns, 2 * i, 0).turns;
      expect(turns.map((t) => t.text).slice(0, 2 * i + 2)).toEqual(Array.from({ length: i + 1 }, (_, k) => [`m${k}`, `r${k}`]).flat());
    }
    expect(turns.map((t) => t.text)).toEqual(Array.from({ length: 40 }, (_, k) => [`m${k}`, `r${k}`]).flat());
    expect(turns.map((t) => t.index)).toEqual(Array.from({ length: 80 }, (_, k) => k));
  });
});
