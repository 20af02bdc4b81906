import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { checkGraphInvariants } from '../../support/invariants';
import { edge, mem } from './helpers';

describe('MemoryGraph', () => {
  it('keeps components up to date on insert', () => {
    const g = MemoryGraph.from([mem('a', 1), mem('b', 2), mem('c', 3), mem('d', 4)], [edge('a', 'b')]);
    expect(g.componentId('a')).toBe(g.componentId('b'));
    expect(g.componentId('c')).not.toBe(g.componentId('a'));
    g.addEdge(edge('b', 'c'));
    expect(g.componentId('c')).toBe(g.componentId('a'));
    expect([...g.componentOf('a')].sort()).toEqual(['a', 'b', 'c']);
    expect(g.componentOf('d')).toEqual(['d']);
  });

  it('recomputes components after deletions', () => {
    const g = MemoryGraph.from([mem('a', 1), mem('b', 2), mem('c', 3)], [edge('a', 'b'), edge('b', 'c')]);
    g.removeEdge('edge:a->b');
    expect(g.componentId('a')).not.toBe(g.componentId('b'));
    expect(g.componentId('b')).toBe(g.componentId('c'));
    g.removeMemory('c');
    expect(g.has('c')).toBe(false);
    expect(g.edgeCount).toBe(0);
    expect(g.componentOf('b')).toEqual(['b']);
    g.addMemory('d', 5);
    g.addEdge(edge('b', 'd'));
    expect(g.componentId('d')).toBe(g.componentId('b'));
  });

  it('rejects self loops and duplicate pairs, and knows adjacency', () => {
    const g = MemoryGraph.from([mem('a', 1), mem('b', 2)], []);
    expect(g.addEdge(edge('a', 'b'))).toBe(true);
    expect(g.addEdge({ ...edge('a', 'b'), id: 'other' })).toBe(false);
    expect(g.addEdge(edge('a', 'a'))).toBe(false);
    expect(g.hasEdge('a', 'b')).toBe(true);
    expect(g.hasEdge('b', 'a')).toBe(false);
    expect(g.outgoing('a').map((e) => e.to)).toEqual(['b']);
    expect(g.incoming('b').map((e) => e.from)).toEqual(['a']);
    expect(() => g.addEdge(edge('a', 'zzz'))).toThrow();
  });

  it('builds 100k memories and answers component queries without recomputation', () => {
    const n = 100_000;
    const memories = Array.from({ length: n }, (_, i) => mem(`m${i}`, i));
    const edges = [];
    for (let i = 1; i < n; i++) if (i % 7 !== 0) edges.push(edge(`m${i - 1}`, `m${i}`));
    const t0 = performance.now();
    const g = MemoryGraph.from(memories, edges);
    const build = performance.now() - t0;
    const t1 = performance.now();
    for (let i = 0; i < 10_000; i++) g.componentId(`m${(i * 37) % n}`);
    const queries = performance.now() - t1;
    expect(g.componentId('m1')).toBe(g.componentId('m6'));
    expect(g.componentId('m6')).not.toBe(g.componentId('m7'));
    expect(build).toBeLessThan(3000);
    expect(queries).toBeLessThan(200);
  });
});

describe('checkGraphInvariants', () => {
  it('accepts a valid graph', () => {
    const ms = [mem('a', 1, 'x', 'user-trait', { supersededBy: 'b' }), mem('b', 2, 'y', 'user-trait'), mem('c', 3)];
    expect(checkGraphInvariants(ms, [edge('a', 'b', 'Changed'), edge('b', 'c')])).toEqual([]);
  });

  it('reports every kind of violation', () => {
    const ms = [
      mem('a', 1),
      mem('b', 2),
      mem('t1', 3, 'likes tea', 'user-trait', { supersededBy: 'ghost' }),
      mem('t2', 4, 'likes coffee', 'user-trait', { supersededBy: 't1' }),
      mem('t3', 5, 'is kind', 'assistant-trait', { supersededBy: 'b' }),
    ];
    const es = [edge('b', 'a'), edge('a', 'a'), edge('a', 'b'), { ...edge('a', 'b'), id: 'dup' }, edge('a', 'missing')];
    const kinds = [...new Set(checkGraphInvariants(ms, es).map((v) => v.kind))].sort();
    expect(kinds).toEqual(
      [
        'duplicate-edge',
        'edge-direction',
        'missing-end',
        'self-loop',
        'superseded-kind',
        'superseded-missing',
        'superseded-not-newer',
      ].sort(),
    );
  });

  it('breaks equal times by createdAt, then id', () => {
    const a = mem('a', 1);
    const b = mem('b', 1);
    expect(checkGraphInvariants([a, b], [edge('a', 'b')])).toEqual([]);
    expect(checkGraphInvariants([a, b], [edge('b', 'a')]).map((v) => v.kind)).toEqual(['edge-direction']);
    const later = { ...a, createdAt: a.createdAt + 1 };
    expect(checkGraphInvariants([later, b], [edge('b', 'a')])).toEqual([]);
  });
});
