import { describe, expect, it } from 'vitest';
import { createHybridIndex, reciprocalRankFusion } from '../../../src/memory/retrieval/hybrid';
import type { IndexedUnit } from '../../../src/memory/retrieval/types';

const u = (id: string, text: string, kind: IndexedUnit['kind'] = 'memory', time = 0): IndexedUnit => ({
  id,
  kind,
  text,
  time,
  sessionId: 's',
  sourceTurnIds: [`t-${id}`],
});
const vec = (...xs: number[]) => {
  const n = Math.hypot(...xs);
  return Float32Array.from(xs, (x) => x / n);
};

describe('reciprocalRankFusion', () => {
  it('sums weight / (c + rank) over lists', () => {
    const f = reciprocalRankFusion([{ ids: ['a', 'b'] }, { ids: ['b', 'c'], weight: 2 }], 10);
    expect(f.get('a')).toBeCloseTo(1 / 11);
    expect(f.get('b')).toBeCloseTo(1 / 12 + 2 / 11);
    expect(f.get('c')).toBeCloseTo(2 / 12);
  });
  it('a unit ranked well by both beats one ranked first by only one', () => {
    const f = reciprocalRankFusion([{ ids: ['x', 'both'] }, { ids: ['y', 'both'] }]);
    expect(f.get('both')!).toBeGreaterThan(f.get('x')!);
  });
});

describe('createHybridIndex', () => {
  it('works lexical-only with no vectors and fills the score', () => {
    const ix = createHybridIndex();
    ix.upsert(u('a', 'pottery class on saturday'));
    ix.upsert(u('b', 'a hike in the mountains'));
    const hits = ix.search('pottery', undefined, 5);
    expect(hits.map((h) => h.unit.id)).toEqual(['a']);
    expect(hits[0]!.score).toMatchObject({ unitId: 'a', unitKind: 'memory', lexicalRank: 1 });
    expect(hits[0]!.score.dense).toBeUndefined();
    expect(hits[0]!.score.fused).toBeCloseTo(1 / 61);
  });

  it('fuses lexical and dense ranks', () => {
    const ix = createHybridIndex({ rrfK: 60, depth: 2 });
    ix.upsert(u('lex', 'violin'), vec(0, 1, 0));
    ix.upsert(u('both', 'violin lesson notes'), vec(1, 0.2, 0));
    ix.upsert(u('dense', 'nothing shared'), vec(1, 0, 0));
    // k = depth = 2: each retriever contributes its top 2.
    const hits = ix.search('violin', vec(1, 0, 0), 2);
    expect(hits[0]!.unit.id).toBe('both');
    const both = hits[0]!.score;
    expect(both.lexicalRank).toBe(2);
    expect(both.denseRank).toBe(2);
    expect(both.fused).toBeCloseTo(2 / 62);
    expect(hits[1]!.score.fused).toBeCloseTo(1 / 61);
  });

  it('filters by kind and exclusion set, and forgets removed units', () => {
    const ix = createHybridIndex();
    ix.upsert(u('m1', 'camping trip', 'memory'));
    ix.upsert(u('s1', 'camping trip with the kids', 'segment'));
    ix.upsert(u('m2', 'camping again', 'memory'));
    expect(ix.search('camping', undefined, 5, { kinds: ['segment'] }).map((h) => h.unit.id)).toEqual(['s1']);
    expect(ix.search('camping', undefined, 5, { kinds: ['memory'], exclude: new Set(['m1']) }).map((h) => h.unit.id)).toEqual(['m2']);
    ix.remove('m2');
    expect(ix.has('m2')).toBe(false);
    expect(ix.size).toBe(2);
    expect(ix.search('camping', undefined, 5).map((h) => h.unit.id)).not.toContain('m2');
  });

  it('upsert replaces the text a unit is found by', () => {
    const ix = createHybridIndex();
    ix.upsert(u('a', 'old words'));
    ix.upsert({ ...u('a', 'shown text'), indexText: 'brand new' });
    expect(ix.search('old', undefined, 3)).toHaveLength(0);
    expect(ix.search('brand', undefined, 3)[0]!.unit.text).toBe('shown text');
    expect(() => ix.setVector('missing', vec(1))).toThrow();
  });
});
