// Standing instructions (kind instruction) and a change waiting for the user's answer (an edge
// with askEnded) are part of a backup; a memory of a kind a later version adds is read as a note,
// not a reason to refuse the whole file.
import { describe, expect, it } from 'vitest';
import { importBackup, validateBackup } from '../../../src/store/backup';
import { IdbRepository } from '../../../src/store/repository';
import type { Edge, Memory } from '../../../src/memory/types';
import { freshFactory } from './helpers';

const T = 1_700_000_000_000;
const memory = (id: string, kind: string, text: string): Memory =>
  ({ id, kind, text, subject: 'user', time: T, sourceTurnIds: [], sessionId: 's', edited: false, createdAt: T }) as Memory;

function backupWith(memories: unknown[], edges: Edge[] = []) {
  return {
    format: 'tealeaf-backup',
    version: 1,
    exportedAt: T,
    data: { sessions: [], turns: [], memories, edges, segments: [], settings: [] },
  };
}

describe('backup of instructions and asked changes', () => {
  it('keeps an instruction and an asked edge as they are', () => {
    const asked: Edge = { id: 'e', from: 'a', to: 'b', relation: 'SameTopic', origin: 'model', createdAt: T, askEnded: true };
    const file = backupWith(
      [memory('a', 'user-trait', 'You live in Oslo'), memory('b', 'instruction', 'Keep your answers short.')],
      [asked],
    );
    const { backup } = validateBackup(file);
    expect(backup).toBe(file);
    expect(() => validateBackup(backupWith([], [{ ...asked, askEnded: 'yes' as never }]))).toThrow(/askEnded/);
  });

  it('reads a memory of a later kind as a note and imports the rest', async () => {
    const file = backupWith([memory('a', 'reminder', 'Water the plants'), memory('b', 'event', 'You went out')]);
    const { backup } = validateBackup(file);
    expect(backup.data.memories.map((m) => [m.id, m.kind])).toEqual([
      ['a', 'note'],
      ['b', 'event'],
    ]);
    const repo = await IdbRepository.open({ factory: freshFactory() });
    await importBackup(repo.db, JSON.stringify(file), { mode: 'replace' });
    expect((await repo.listMemories()).find((m) => m.id === 'a')?.kind).toBe('note');
    // Not a kind at all: still refused.
    expect(() => validateBackup(backupWith([{ ...memory('c', 'event', 'x'), kind: 7 }]))).toThrow(/kind/);
  });
});
