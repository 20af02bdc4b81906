// Turns with versions (an edited message, a regenerated reply) and the branches put away inside
// them are part of a backup: the file checks, and a field out of place inside a branch is refused.
import { describe, expect, it } from 'vitest';
import { validateBackup } from '../../../src/store/backup';
import type { Turn } from '../../../src/memory/types';

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
  it('accepts nested branches and keeps them as they were', () => {
    const inner = turn('t3', 3, 'later', { versions: [{ text: 'later, first try', time: 1, status: 'stopped', modelId: 'm' }], shown: 1 });
    const edited = turn('t0', 0, 'I like coffee', {
      versions: [
        {
          text: 'I like tea',
          time: 1_700_000_000_000,
          status: 'complete',
          after: [turn('t1', 1, 'Tea is lovely.'), turn('t2', 2, 'more'), inner],
        },
      ],
      shown: 1,
    });
    const { backup } = validateBackup(backupWith([edited, turn('t9', 1, 'You said: I like coffee')]));
    expect(backup.data.turns[0]).toEqual(edited);
  });

  it('refuses an unknown field inside a branch', () => {
    const bad = turn('t0', 0, 'x', {
      versions: [{ text: 'y', time: 1, status: 'complete', after: [{ ...turn('t1', 1, 'z'), colour: 'red' } as Turn] }],
    });
    expect(() => validateBackup(backupWith([bad]))).toThrow(/turns\[0\]/);
  });
});
