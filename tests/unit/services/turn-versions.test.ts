import { describe, expect, it } from 'vitest';
import { addVersion, shownVersion, showVersion, versionCount } from '../../../src/services/turn-versions';
import type { Turn } from '../../../src/memory/types';

const turn = (i: number, text: string): Turn => ({
  id: `t${i}`,
  sessionId: 's',
  index: i,
  role: i % 2 ? 'assistant' : 'user',
  text,
  time: i,
  status: 'complete',
});
const texts = (ts: Turn[]) => ts.map((t) => t.text);

describe('turn versions', () => {
  it('a new version of a middle turn puts the turns after it away with the old version', () => {
    const turns = [turn(0, 'hi'), turn(1, 'hello'), turn(2, 'tea?'), turn(3, 'yes')];
    const c = addVersion(turns, 2, { text: 'coffee?', time: 9, status: 'complete' });
    expect(texts(c.turns)).toEqual(['hi', 'hello', 'coffee?']);
    expect(c.deleteTurnIds).toEqual(['t3']);
    expect(c.put).toHaveLength(1);
    const edited = c.turns[2];
    expect(edited.id).toBe('t2');
    expect(versionCount(edited)).toBe(2);
    expect(shownVersion(edited)).toBe(1);
    expect(edited.versions?.[0]).toMatchObject({ text: 'tea?', after: [turns[3]] });
  });

  it('flipping back restores the branch at its positions, and forth again', () => {
    const turns = [turn(0, 'hi'), turn(1, 'hello'), turn(2, 'tea?'), turn(3, 'yes')];
    const edited = addVersion(turns, 2, { text: 'coffee?', time: 9, status: 'complete' });
    const withReply = [...edited.turns, { ...turn(3, 'no coffee'), id: 'r2' }];
    const back = showVersion(withReply, 2, 0);
    expect(texts(back.turns)).toEqual(['hi', 'hello', 'tea?', 'yes']);
    expect(back.turns.map((t) => t.index)).toEqual([0, 1, 2, 3]);
    expect(back.deleteTurnIds).toEqual(['r2']);
    expect(back.put.map((t) => t.id)).toEqual(['t2', 't3']);
    expect(shownVersion(back.turns[2])).toBe(0);
    const forth = showVersion(back.turns, 2, 1);
    expect(texts(forth.turns)).toEqual(['hi', 'hello', 'coffee?', 'no coffee']);
    expect(forth.turns[3].id).toBe('r2');
    expect(showVersion(forth.turns, 2, 1).put).toEqual([]); // already shown
    expect(showVersion(forth.turns, 2, 5).put).toEqual([]); // no such version
  });

  it('keeps per-version fields (model, used memory, status) with each version', () => {
    const a: Turn = { ...turn(1, 'first'), modelId: 'm1', usedMemory: { memoryIds: ['x'], segmentIds: [], timelines: [], scores: [] } };
    const c = addVersion([turn(0, 'q'), a], 1, { text: '', time: 5, status: 'streaming', modelId: 'm2' });
    expect(c.turns[1]).toMatchObject({ text: '', status: 'streaming', modelId: 'm2' });
    expect(c.turns[1].usedMemory).toBeUndefined();
    const back = showVersion(c.turns, 1, 0);
    expect(back.turns[1]).toMatchObject({ text: 'first', modelId: 'm1', usedMemory: { memoryIds: ['x'] } });
    expect(back.turns[1].versions?.[0]).toMatchObject({ text: '', modelId: 'm2' });
  });

  it('nested branches survive a round trip', () => {
    let ts = [turn(0, 'a'), turn(1, 'b'), turn(2, 'c'), turn(3, 'd')];
    ts = addVersion(ts, 0, { text: 'A', time: 1, status: 'complete' }).turns; // [A]
    ts = [...ts, { ...turn(1, 'B'), id: 'x1' }, { ...turn(2, 'C'), id: 'x2' }, { ...turn(3, 'D'), id: 'x3' }];
    ts = addVersion(ts, 2, { text: 'C2', time: 2, status: 'complete' }).turns; // [A, B, C2]
    ts = showVersion(ts, 0, 0).turns; // back to a b c d
    expect(texts(ts)).toEqual(['a', 'b', 'c', 'd']);
    ts = showVersion(ts, 0, 1).turns; // A B C2, and C2's other version (C, D) kept
    expect(texts(ts)).toEqual(['A', 'B', 'C2']);
    ts = showVersion(ts, 2, 0).turns;
    expect(texts(ts)).toEqual(['A', 'B', 'C', 'D']);
    expect(ts.map((t) => t.index)).toEqual([0, 1, 2, 3]);
  });
});
