import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryGraph } from '../../../src/memory/graph';
import { formatTimeline, timelineKey, timelinesForRetrieved, untangleTimelines } from '../../../src/memory/recall/timelines';
import type { Edge, Memory, Timeline } from '../../../src/memory/types';
import { edge, mem } from './helpers';

function isPath(g: MemoryGraph, t: Timeline): boolean {
  for (let i = 1; i < t.memoryIds.length; i++) {
    const e = g.edgeBetween(t.memoryIds[i - 1], t.memoryIds[i]);
    if (!e || e.relation !== t.relations[i - 1]) return false;
  }
  return t.relations.length === t.memoryIds.length - 1 && t.memoryIds.includes(t.through);
}

describe('untangleTimelines (Phase II-1, Figure 4)', () => {
  // s -> a -> re -> y1 ; re -> b -> y2 ; s -> z (a branch that does not pass through re)
  const memories = ['s', 'a', 're', 'y1', 'b', 'y2', 'z'].map((id, i) => mem(id, i + 1));
  const edges = [
    edge('s', 'a', 'Cause'),
    edge('a', 're', 'Want'),
    edge('re', 'y1', 'React'),
    edge('re', 'b', 'Changed'),
    edge('b', 'y2', 'SameTopic'),
    edge('s', 'z', 'SameTopic'),
  ];
  const g = MemoryGraph.from(memories, edges);
  const expected = new Set(['s>a>re>y1', 's>a>re>b>y2']);

  it('returns a source-to-sink path through the retrieved memory', () => {
    for (let seed = 0; seed < 20; seed++) {
      const t = untangleTimelines(g, 're', { seed });
      expect(expected.has(timelineKey(t))).toBe(true);
      expect(isPath(g, t)).toBe(true);
      expect(t.through).toBe('re');
    }
  });

  it('finds both timelines, and prefers the one not chosen yet', () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 20; seed++) seen.add(timelineKey(untangleTimelines(g, 're', { seed })));
    expect(seen).toEqual(expected);
    for (const key of expected) {
      const other = untangleTimelines(g, 're', { seed: 3, avoid: new Set([key]) });
      expect(timelineKey(other)).not.toBe(key);
    }
    // When every timeline is taken, one is still returned.
    expect(expected.has(timelineKey(untangleTimelines(g, 're', { seed: 1, avoid: expected })))).toBe(true);
  });

  it('gives one timeline per retrieved memory, distinct, deterministic per seed', () => {
    const a = timelinesForRetrieved(g, ['re', 'y1', 'b'], 7);
    const b = timelinesForRetrieved(g, ['re', 'y1', 'b'], 7);
    expect(a).toEqual(b);
    const keys = a.map(timelineKey);
    expect(new Set(keys).size).toBe(keys.length);
    for (const t of a) expect(isPath(g, t)).toBe(true);
    // y1 and b each have exactly one timeline; when both are retrieved they cover both branches.
    expect(new Set(keys)).toEqual(expected);
  });

  it('treats an isolated or unknown memory as a timeline of one', () => {
    const lone = MemoryGraph.from([mem('x', 1)], []);
    expect(untangleTimelines(lone, 'x')).toEqual({ memoryIds: ['x'], relations: [], through: 'x' });
    expect(untangleTimelines(lone, 'nope').memoryIds).toEqual(['nope']);
  });

  it('formats a timeline with dates and relations, marking superseded traits as past', () => {
    const byId = new Map<string, Memory>([
      ['p', mem('p', 0, 'User loves tea', 'user-trait', { supersededBy: 'q' })],
      ['q', mem('q', 31, 'User switched to coffee', 'user-trait')],
    ]);
    const text = formatTimeline({ memoryIds: ['p', 'q'], relations: ['Changed'], through: 'q' }, byId);
    expect(text).toBe(
      '[2024-01-01: User loves tea (true until 2024-02-01; no longer true)] -(Changed)-> [2024-02-01: User switched to coffee]',
    );
  });

  it('handles a graph with more than a million paths through a node in well under 5 ms', () => {
    // 24 layers of 3 memories, every memory linked to all 3 of the next layer: 3^23 paths in all.
    const layers = 24;
    const width = 3;
    const ms: Memory[] = [];
    const es: Edge[] = [];
    for (let l = 0; l < layers; l++) for (let w = 0; w < width; w++) ms.push(mem(`n${l}_${w}`, l));
    for (let l = 1; l < layers; l++)
      for (let a = 0; a < width; a++) for (let b = 0; b < width; b++) es.push(edge(`n${l - 1}_${a}`, `n${l}_${b}`));
    const big = MemoryGraph.from(ms, es);
    untangleTimelines(big, 'n12_1', { seed: 1 }); // warm up
    const avoid = new Set<string>();
    const t0 = performance.now();
    const t = untangleTimelines(big, 'n12_1', { seed: 2, avoid, maxSteps: 64 });
    const ms1 = performance.now() - t0;
    expect(ms1).toBeLessThan(5);
    expect(big.incoming(t.memoryIds[0]).length).toBe(0);
    expect(big.outgoing(t.memoryIds[t.memoryIds.length - 1]).length).toBe(0);
    expect(t.memoryIds.length).toBe(layers);
    const t1 = performance.now();
    timelinesForRetrieved(big, ['n3_0', 'n12_1', 'n20_2'], 5, { maxSteps: 64 });
    expect(performance.now() - t1).toBeLessThan(5);
  });

  it('random DAGs: every timeline is a valid path through the retrieved memory', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 80 }),
        fc.nat(),
        (n, pairs, seed) => {
          const ms = Array.from({ length: n }, (_, i) => mem(`m${i}`, i));
          const seen = new Set<string>();
          const es: Edge[] = [];
          for (const [x, y] of pairs) {
            const a = x % n;
            const b = y % n;
            if (a === b) continue;
            const [from, to] = a < b ? [a, b] : [b, a];
            if (seen.has(`${from}-${to}`)) continue;
            seen.add(`${from}-${to}`);
            es.push(edge(`m${from}`, `m${to}`));
          }
          const graph = MemoryGraph.from(ms, es);
          const through = `m${seed % n}`;
          const t = untangleTimelines(graph, through, { seed });
          expect(isPath(graph, t)).toBe(true);
          expect(graph.incoming(t.memoryIds[0]).length).toBe(0);
          expect(graph.outgoing(t.memoryIds[t.memoryIds.length - 1]).length).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
