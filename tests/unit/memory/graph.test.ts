import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { checkGraphInvariants } from '../../support/invariants';
import { leastTime } from '../../support/scaling';
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
    const edges: ReturnType<typeof edge>[] = [];
    for (let i = 1; i < n; i++) if (i % 7 !== 0) edges.push(edge(`m${i - 1}`, `m${i}`));
    const g = MemoryGraph.from(memories, edges);
    const build = leastTime(() => MemoryGraph.from(memories, edges), 2);
    const queries = leastTime(() => {
      for (let i = 0; i < 10_000; i++) g.componentId(`m${(i * 37) % n}`);
    });
    expect(g.componentId('m1')).toBe(g.componentId('m6'));
    expect(g.componentId('m6')).not.toBe(g.componentId('m7'));
    // Against the machine's own speed: 10,000 queries answered from what the build found take far
    // less than one build (each recomputing the components would take thousands of builds).
    expect(queries).toBeLessThan(build);
  });

  // Every insert walked the source's outgoing list to refuse a duplicate pair,
  // so one memory with 100,000 links cost 5e9 steps to build (tens of seconds).
  it('builds one memory with 100,000 links about as fast as a chain of as many', () => {
    const n = 100_000;
    const memories = [mem('hub', 0), ...Array.from({ length: n }, (_, i) => mem(`m${i}`, i + 1))];
    const build = (edges: ReturnType<typeof edge>[]) => {
      const t0 = performance.now();
      const g = MemoryGraph.from(memories, edges);
      return { g, ms: performance.now() - t0 };
    };
    const chain = build(Array.from({ length: n }, (_, i) => edge(i ? `m${i - 1}` : 'hub', `m${i}`)));
    const hub = build(Array.from({ length: n }, (_, i) => edge('hub', `m${i}`)));
    // A ratio, not a time: both are linear now; the old hub took seconds against a chain's ~100 ms.
    expect(hub.ms).toBeLessThan(10 * chain.ms + 100);
    const g = hub.g;
    expect(g.edgeCount).toBe(n);
    expect(g.outgoing('hub')).toHaveLength(n);
    // The pair index still refuses a duplicate and knows the two directions apart.
    expect(g.addEdge({ ...edge('hub', 'm1'), id: 'dup' })).toBe(false);
    expect(g.addEdge(edge('m1', 'hub'))).toBe(true);
    expect(g.edgeBetween('m1', 'hub')?.id).toBe('edge:m1->hub');
    expect(g.edgeBetween('hub', 'm1')?.id).toBe('edge:hub->m1');
    g.removeMemory('hub');
    expect(g.edgeCount).toBe(0);
    expect(g.incoming('m1')).toEqual([]);
    expect(g.outgoing('m1')).toEqual([]);
    expect(g.componentOf('m5')).toEqual(['m5']);
  });

  it('forgets a removed pair, so the same pair can be linked again; A↔B are two edges', () => {
    const g = MemoryGraph.from([mem('a', 1), mem('b', 2), mem('c', 3)], [edge('a', 'b'), edge('b', 'a'), edge('a', 'c')]);
    expect(g.edgeCount).toBe(3);
    g.removeEdge('edge:a->b');
    expect(g.hasEdge('a', 'b')).toBe(false);
    expect(g.hasEdge('b', 'a')).toBe(true);
    expect(g.addEdge({ ...edge('a', 'b'), id: 'again' })).toBe(true);
    expect(g.edgeBetween('a', 'b')?.id).toBe('again');
    g.removeMemory('a');
    expect([...g.edges()]).toEqual([]);
    expect(g.incoming('b')).toEqual([]);
    expect(g.outgoing('b')).toEqual([]);
    g.addMemory('a', 1);
    expect(g.addEdge(edge('b', 'a'))).toBe(true);
    expect(g.incoming('a').map((e) => e.id)).toEqual(['edge:b->a']);
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
      mem('t3', 5, 'is kind', 'assistant-trait', { supersededBy: 't2' }),
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
