import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { addVersion, shownVersion, showVersion, versionCount } from '../../../src/services/chat/turn-versions';
import type { Turn, TurnStatus } from '../../../src/memory/types';

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
    expect(edited.versions).toEqual([{ text: 'tea?', time: 2, status: 'complete' }]);
    // Put away flat, naming the version it followed; no session or position of its own.
    expect(edited.branches).toEqual([
      { id: 't3', role: 'assistant', text: 'yes', time: 3, status: 'complete', follows: { turnId: 't2', version: 0 } },
    ]);
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

// ---------------------------------------------------------------------------------------------
// The flat branches against the nested ones they replaced: the nested implementation (as it was
// before the flat branches, kept here as the reference) and the flat one see the same random edits, new
// versions and flips, and must show the same conversation after each. The flat records stay
// equally shallow however many edits are made.

interface NestedTurn {
  id: string;
  index: number;
  text: string;
  status: TurnStatus;
  versions?: NestedVersion[];
  shown?: number;
}
interface NestedVersion {
  text: string;
  status: TurnStatus;
  after?: NestedTurn[];
}

const nested = {
  shown: (t: NestedTurn) => Math.max(0, Math.min(t.shown ?? t.versions?.length ?? 0, t.versions?.length ?? 0)),
  all(t: NestedTurn, after: NestedTurn[]): NestedVersion[] {
    const others = t.versions ?? [];
    const k = nested.shown(t);
    const v: NestedVersion = { text: t.text, status: t.status, ...(after.length > 0 ? { after } : {}) };
    return [...others.slice(0, k), v, ...others.slice(k)];
  },
  showing(t: NestedTurn, list: NestedVersion[], k: number): NestedTurn {
    return { ...t, text: list[k].text, status: list[k].status, versions: list.filter((_, i) => i !== k), shown: k };
  },
  add(turns: NestedTurn[], i: number, text: string): NestedTurn[] {
    const list = [...nested.all(turns[i], turns.slice(i + 1)), { text, status: 'complete' as const }];
    return [...turns.slice(0, i), nested.showing(turns[i], list, list.length - 1)];
  },
  flip(turns: NestedTurn[], i: number, k: number): NestedTurn[] {
    const t = turns[i];
    if (k < 0 || k > (t.versions?.length ?? 0) || k === nested.shown(t)) return turns;
    const list = nested.all(t, turns.slice(i + 1));
    const restored = (list[k].after ?? []).map((x, j) => ({ ...x, index: t.index + 1 + j }));
    return [...turns.slice(0, i), nested.showing(t, list, k), ...restored];
  },
};

const depth = (v: unknown): number =>
  v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depth)) : 0;

type Op = { kind: 'say'; text: string } | { kind: 'edit'; at: number; text: string } | { kind: 'flip'; at: number; to: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('say' as const), text: fc.string({ maxLength: 3 }) }),
  fc.record({ kind: fc.constant('edit' as const), at: fc.nat(40), text: fc.string({ maxLength: 3 }) }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(40), to: fc.nat(6) }),
);

describe('flat branches behave like the nested ones', () => {
  it('property: the same shown conversation after every edit, new version and flip; records stay shallow', () => {
    let cases = 0;
    let maxOps = 0;
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), (ops) => {
        let flat: Turn[] = [];
        let ref: NestedTurn[] = [];
        let n = 0;
        for (const o of ops) {
          if (o.kind === 'say' || flat.length === 0) {
            const t = { ...turn(flat.length, `${o.kind === 'say' ? o.text : ''}#${n}`), id: `x${n++}` };
            flat = [...flat, t];
            ref = [...ref, { id: t.id, index: t.index, text: t.text, status: t.status }];
          } else if (o.kind === 'edit') {
            const at = o.at % flat.length;
            const text = `${o.text}#${n++}`;
            flat = addVersion(flat, at, { text, time: n, status: 'complete' }).turns;
            ref = nested.add(ref, at, text);
          } else {
            const at = o.at % flat.length;
            flat = showVersion(flat, at, o.to).turns;
            ref = nested.flip(ref, at, o.to);
          }
          expect(flat.map((t) => [t.id, t.index, t.text, versionCount(t), shownVersion(t)])).toEqual(
            ref.map((t) => [t.id, t.index, t.text, (t.versions?.length ?? 0) + 1, nested.shown(t)]),
          );
          for (const t of flat) expect(depth(t)).toBeLessThanOrEqual(5);
        }
        cases++;
        maxOps = Math.max(maxOps, ops.length);
      }),
      { numRuns: 300 },
    );
    expect(cases).toBe(300);
  });
});
