import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryGraph } from '../../../src/memory/graph';
import { formatTimeline, timelineKey, timelineStart, timelinesForRetrieved, untangleTimelines } from '../../../src/memory/recall/timelines';
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

  it('handles a graph with more than a million paths through a node with a few hundred looks at it', () => {
    // 24 layers of 3 memories, every memory linked to all 3 of the next layer: 3^23 paths in all.
    const layers = 24;
    const width = 3;
    const ms: Memory[] = [];
    const es: Edge[] = [];
    for (let l = 0; l < layers; l++) for (let w = 0; w < width; w++) ms.push(mem(`n${l}_${w}`, l));
    for (let l = 1; l < layers; l++)
      for (let a = 0; a < width; a++) for (let b = 0; b < width; b++) es.push(edge(`n${l - 1}_${a}`, `n${l}_${b}`));
    const big = MemoryGraph.from(ms, es);
    // The work, counted rather than timed: every call on the graph (a walk of the paths would be millions).
    let looks = 0;
    const counted = new Proxy(big, {
      get(target, key) {
        const v: unknown = Reflect.get(target, key, target);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => (looks++, (v as (...a: unknown[]) => unknown).apply(target, args));
      },
    });
    const avoid = new Set<string>();
    const t = untangleTimelines(counted, 'n12_1', { seed: 2, avoid, maxSteps: 64 });
    expect(looks).toBeLessThan(1000); // 135 here
    expect(big.incoming(t.memoryIds[0]).length).toBe(0);
    expect(big.outgoing(t.memoryIds[t.memoryIds.length - 1]).length).toBe(0);
    expect(t.memoryIds.length).toBe(layers);
    looks = 0;
    timelinesForRetrieved(counted, ['n3_0', 'n12_1', 'n20_2'], 5, { maxSteps: 64 });
    expect(looks).toBeLessThan(3000); // 396 here
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

// Where a timeline starts (the paper's eq. 9): at the oldest memory of the component, which is not
// the same as "at a memory with no incoming edge" once two older branches meet.
describe('timelines start at the oldest memory (Phase II-1, eq. 9; timelineFromOldest)', () => {
  const starts = (g: MemoryGraph, through: string, options: { fromOldest?: boolean; maxSteps?: number } = {}) =>
    new Set(Array.from({ length: 40 }, (_, seed) => untangleTimelines(g, through, { seed, ...options }).memoryIds[0]));

  // a is the oldest; b1..b4 are newer memories with no incoming edge; every one leads to re.
  const fan = MemoryGraph.from(
    ['a', 'b1', 'b2', 'b3', 'b4', 're', 'y'].map((id, i) => mem(id, i === 5 ? 10 : i === 6 ? 11 : i + 1)),
    [edge('b1', 're'), edge('b2', 're'), edge('a', 're', 'Cause'), edge('b3', 're'), edge('b4', 're'), edge('re', 'y', 'React')],
  );

  it('starts every timeline at the oldest memory, where a walk to any source would mostly not', () => {
    expect(starts(fan, 're')).toEqual(new Set(['a']));
    for (let seed = 0; seed < 10; seed++) {
      const t = untangleTimelines(fan, 're', { seed });
      expect(t).toEqual({ memoryIds: ['a', 're', 'y'], relations: ['Cause', 'React'], through: 're' });
    }
    // The shortcut (the switch off): every source is a start.
    expect(starts(fan, 're', { fromOldest: false })).toEqual(new Set(['a', 'b1', 'b2', 'b3', 'b4']));
  });

  it('goes the long way round to the oldest memory', () => {
    // b (no incoming edge) -> re directly; the oldest, a, only through x.
    const g = MemoryGraph.from([mem('a', 1), mem('b', 2), mem('x', 3), mem('re', 10)], [edge('b', 're'), edge('a', 'x'), edge('x', 're')]);
    for (let seed = 0; seed < 10; seed++) expect(timelineKey(untangleTimelines(g, 're', { seed }))).toBe('a>x>re');
    expect(starts(g, 're', { fromOldest: false })).toEqual(new Set(['a', 'b']));
  });

  it('when the oldest memory of the component does not lead to it, starts at the oldest that does', () => {
    // o is the oldest of the component {o, p, c, re} but reaches only c; the paper's set of
    // timelines through re would be empty.
    const g = MemoryGraph.from([mem('o', 1), mem('p', 2), mem('c', 5), mem('re', 6)], [edge('o', 'c'), edge('p', 'c'), edge('p', 're')]);
    expect(new Set(g.componentOf('re'))).toEqual(new Set(['o', 'p', 'c', 're']));
    expect(timelineStart(g, 're', 24).start).toBe('p');
    expect(timelineKey(untangleTimelines(g, 're', { seed: 1 }))).toBe('p>re');
    // A memory with nothing before it starts its own timelines.
    expect(timelineStart(g, 'o', 24)).toEqual({ start: 'o', hops: new Map([['o', 0]]) });
    expect(timelineKey(untangleTimelines(g, 'c', { seed: 2 }))).toBe('o>c');
  });

  it('looks for the start within maxSteps edges, and walks there within them', () => {
    // s0 -> s1 -> s2 -> re, and the shortcut a -> re.
    const g = MemoryGraph.from(
      [mem('s0', 1), mem('s1', 2), mem('a', 3), mem('s2', 4), mem('re', 10)],
      [edge('s0', 's1'), edge('s1', 's2'), edge('s2', 're'), edge('a', 're')],
    );
    expect(timelineStart(g, 're', 24).start).toBe('s0');
    expect(starts(g, 're')).toEqual(new Set(['s0']));
    // Two steps back reach s1 at most: the oldest within them.
    expect(timelineStart(g, 're', 2).start).toBe('s1');
    expect(starts(g, 're', { maxSteps: 2 })).toEqual(new Set(['s1']));
    // One step back: a is older than s2.
    expect(starts(g, 're', { maxSteps: 1 })).toEqual(new Set(['a']));
  });

  it('takes only the turns towards the start that still reach it within the steps left', () => {
    // a -> re directly, and a -> x1 -> x2 -> re: with 2 steps only the direct edge gets there.
    const g = MemoryGraph.from(
      [mem('a', 1), mem('x1', 2), mem('x2', 3), mem('re', 10)],
      [edge('a', 'x1'), edge('x1', 'x2'), edge('x2', 're'), edge('a', 're')],
    );
    const keys = (maxSteps: number) =>
      new Set(Array.from({ length: 30 }, (_, seed) => timelineKey(untangleTimelines(g, 're', { seed, maxSteps }))));
    expect(keys(2)).toEqual(new Set(['a>re']));
    expect(keys(24)).toEqual(new Set(['a>re', 'a>x1>x2>re']));
  });

  it('the switch reaches the retrieval of a turn (timelinesForRetrieved)', () => {
    const paper = new Set<string>();
    const shortcut = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      paper.add(timelinesForRetrieved(fan, ['re'], seed, { fromOldest: true })[0]!.memoryIds[0]!);
      shortcut.add(timelinesForRetrieved(fan, ['re'], seed, { fromOldest: false })[0]!.memoryIds[0]!);
    }
    expect(paper).toEqual(new Set(['a']));
    expect(shortcut.size).toBeGreaterThan(1);
  });

  it('random DAGs: every timeline starts at the oldest memory that leads to the retrieved one', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 25 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 60 }),
        fc.nat(),
        (n, pairs, seed) => {
          const ms = Array.from({ length: n }, (_, i) => mem(`m${i}`, i));
          const es: Edge[] = [];
          const seen = new Set<string>();
          for (const [x, y] of pairs) {
            const [from, to] = [Math.min(x % n, y % n), Math.max(x % n, y % n)];
            if (from === to || seen.has(`${from}-${to}`)) continue;
            seen.add(`${from}-${to}`);
            es.push(edge(`m${from}`, `m${to}`));
          }
          const graph = MemoryGraph.from(ms, es);
          const through = `m${seed % n}`;
          // Every memory that leads to `through` (unbounded: n < maxSteps), by brute force.
          const leads = new Set<string>([through]);
          for (let grew = true; grew;) {
            grew = false;
            for (const e of es) if (leads.has(e.to) && !leads.has(e.from) && leads.add(e.from)) grew = true;
          }
          const oldest = [...leads].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)))[0];
          const t = untangleTimelines(graph, through, { seed, maxSteps: 30 });
          expect(isPath(graph, t)).toBe(true);
          expect(t.memoryIds[0]).toBe(oldest);
          expect(graph.outgoing(t.memoryIds[t.memoryIds.length - 1]!).length).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
