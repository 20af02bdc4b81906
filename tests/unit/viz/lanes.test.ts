import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Edge, Memory } from '../../../src/memory/types';
import { RELATIONS } from '../../../src/memory/types';
import { MemoryGraph } from '../../../src/memory/graph';
import { components } from '../../../src/viz/components';
import { layoutLanes, layoutTimelines, threads, type TimelineLayout } from '../../../src/viz/lanes';
import { DAY, KINDS, edge, graphComponents, mem } from './fixtures';
import { reading } from '../../support/scaling';

/** Random graph: times drawn from a small range so collisions are common; edges older -> newer. */
const graphArb = fc
  .record({
    times: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 60 }),
    pairs: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat({ max: RELATIONS.length - 1 })), { maxLength: 90 }),
    width: fc.integer({ min: 120, max: 1600 }),
    kinds: fc.array(fc.nat({ max: 3 }), { minLength: 60, maxLength: 60 }),
  })
  .map(({ times, pairs, width, kinds }) => {
    const memories = times.map((t, i) => mem(`m${i}`, t * DAY, KINDS[kinds[i]]));
    const edges: Edge[] = [];
    pairs.forEach(([a, b, r], i) => {
      const x = memories[a % memories.length];
      const y = memories[b % memories.length];
      if (x === y) return;
      const [older, newer] = x.time < y.time || (x.time === y.time && x.id < y.id) ? [x, y] : [y, x];
      edges.push(edge(`e${i}`, older.id, newer.id, RELATIONS[r]));
    });
    return { memories, edges, width };
  });

function checkInvariants(layout: TimelineLayout, memories: Memory[], spacing: number): void {
  // Every memory is placed exactly once.
  expect(layout.nodes.length).toBe(memories.length);
  expect(new Set(layout.nodes.map((n) => n.id)).size).toBe(memories.length);
  // Lanes do not overlap and are stacked top to bottom.
  for (let i = 1; i < layout.lanes.length; i++) {
    const a = layout.lanes[i - 1];
    expect(a.y + a.height).toBeLessThanOrEqual(layout.lanes[i].y);
  }
  // Nodes sit inside their lane.
  for (const n of layout.nodes) {
    const lane = layout.lanes[n.lane];
    expect(n.y).toBeGreaterThan(lane.y);
    expect(n.y).toBeLessThan(lane.y + lane.height);
  }
  // x is monotonic in time.
  const sorted = [...layout.nodes].sort((a, b) => a.time - b.time);
  for (let i = 1; i < sorted.length; i++) expect(sorted[i].x).toBeGreaterThanOrEqual(sorted[i - 1].x);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].time > sorted[i - 1].time) expect(sorted[i].x).toBeGreaterThan(sorted[i - 1].x - 1e-9);
  }
  // Nodes in one lane never overlap: same row => at least `spacing` apart.
  const byRow = new Map<string, number[]>();
  for (const n of layout.nodes) {
    const key = `${n.lane}:${n.row}`;
    const xs = byRow.get(key);
    if (xs) xs.push(n.x);
    else byRow.set(key, [n.x]);
  }
  for (const xs of byRow.values()) {
    xs.sort((a, b) => a - b);
    for (let i = 1; i < xs.length; i++) expect(xs[i] - xs[i - 1]).toBeGreaterThanOrEqual(spacing - 1e-9);
  }
  // Every edge points forward in time, and stays inside one lane.
  for (const e of layout.edges) {
    const a = layout.byId.get(e.from)!;
    const b = layout.byId.get(e.to)!;
    expect(a.x).toBeLessThanOrEqual(b.x);
    expect(e.backward).toBe(false);
    expect(a.lane).toBe(b.lane);
    expect(e.points[0]).toEqual([a.x, a.y]);
    expect(e.points[3]).toEqual([b.x, b.y]);
  }
}

describe('layoutTimelines', () => {
  it('gives one lane per thread, most recent thread first, unlinked memories last', () => {
    const memories = [
      mem('a', 1 * DAY),
      mem('b', 2 * DAY),
      mem('c', 3 * DAY),
      mem('d', 10 * DAY),
      mem('e', 11 * DAY),
      mem('lonely', 20 * DAY),
    ];
    const edges = [edge('1', 'a', 'b'), edge('2', 'b', 'c'), edge('3', 'd', 'e', 'Changed')];
    const layout = layoutTimelines(memories, edges, { width: 800, laneHeight: 20 });
    expect(layout.lanes.map((l) => l.memoryIds)).toEqual([['d', 'e'], ['a', 'b', 'c'], ['lonely']]);
    expect(layout.lanes[2].singletons).toBe(true);
    expect(layout.lanes[2].label).toBe('Unlinked memories');
    checkInvariants(layout, memories, 14);
  });

  it('keeps a lane per singleton when grouping is off', () => {
    const memories = [mem('a', 1), mem('b', 2), mem('c', 3)];
    const layout = layoutTimelines(memories, [], { width: 800, laneHeight: 20, groupSingletons: false });
    expect(layout.lanes.length).toBe(3);
  });

  it('stacks memories with the same time into sub-rows', () => {
    const memories = [mem('a', DAY), mem('b', DAY), mem('c', DAY)];
    const edges = [edge('1', 'a', 'b'), edge('2', 'b', 'c')];
    const layout = layoutTimelines(memories, edges, { width: 800, laneHeight: 20 });
    expect(layout.lanes).toHaveLength(1);
    expect(layout.lanes[0].rows).toBe(3);
    expect(new Set(layout.nodes.map((n) => n.row))).toEqual(new Set([0, 1, 2]));
    checkInvariants(layout, memories, 14);
  });

  it('marks superseded traits and hand-made backward edges', () => {
    const memories = [mem('old', DAY, 'user-trait', { supersededBy: 'new' }), mem('new', 5 * DAY, 'user-trait')];
    const layout = layoutTimelines(memories, [edge('x', 'new', 'old', 'Changed')], { width: 500, laneHeight: 20 });
    expect(layout.byId.get('old')!.superseded).toBe(true);
    expect(layout.byId.get('new')!.superseded).toBe(false);
    expect(layout.edges[0].backward).toBe(true);
  });

  it('places session ticks on the same time scale and ignores edges to unknown memories', () => {
    const memories = [mem('a', 10 * DAY), mem('b', 20 * DAY)];
    const layout = layoutTimelines(memories, [edge('1', 'a', 'ghost')], {
      width: 1000,
      laneHeight: 20,
      marginLeft: 0,
      marginRight: 0,
      sessions: [
        { id: 's1', startedAt: 0, title: 'first' },
        { id: 's2', startedAt: 20 * DAY, title: 'second' },
      ],
    });
    expect(layout.edges).toHaveLength(0);
    expect(layout.ticks.map((t) => t.x)).toEqual([0, 1000]);
    expect(layout.byId.get('a')!.x).toBeCloseTo(500);
    expect(layout.timeOf(layout.xOf(15 * DAY))).toBeCloseTo(15 * DAY);
  });

  it('handles an empty graph and a single instant', () => {
    expect(layoutTimelines([], [], { laneHeight: 20 }).lanes).toEqual([]);
    const one = layoutTimelines([mem('a', 5)], [], { width: 400, laneHeight: 20 });
    expect(one.nodes[0].x).toBe(200);
  });

  it('property: invariants hold on random graphs', () => {
    fc.assert(
      fc.property(graphArb, ({ memories, edges, width }) => {
        const spacing = 12;
        const layout = layoutTimelines(memories, edges, { width, laneHeight: 18, nodeSpacing: spacing });
        checkInvariants(layout, memories, spacing);
        // Lanes are components, ordered by most recent activity (the unlinked lane last).
        const linked = layout.lanes.filter((l) => !l.singletons);
        for (let i = 1; i < linked.length; i++) expect(linked[i - 1].lastActivity).toBeGreaterThanOrEqual(linked[i].lastActivity);
        expect(linked.length + (layout.lanes.some((l) => l.singletons) ? 1 : 0)).toBe(layout.lanes.length);
        const comps = components(memories, edges).filter((c) => c.length > 1);
        expect(components(memories, edges)).toEqual(graphComponents(memories, MemoryGraph.from(memories, edges)));
        expect(linked.length).toBe(comps.length);
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('lays out 5,000 memories and 10,000 edges with a few reads of each (no scan per memory)', () => {
    const memories = reading(Array.from({ length: 5000 }, (_, i) => mem(`m${i}`, Math.floor(i / 5) * DAY)));
    const edges = reading(
      Array.from({ length: 10000 }, (_, i) => {
        const a = (i * 7919) % 5000;
        const b = (a + 1 + ((i * 104729) % 40)) % 5000;
        return edge(`e${i}`, `m${Math.min(a, b)}`, `m${Math.max(a, b)}`, RELATIONS[i % 7]);
      }).filter((e) => e.from !== e.to),
    );
    const layout = layoutTimelines(memories.records, edges.records, { width: 1200, laneHeight: 16, nodeSpacing: 10 });
    // The work, counted rather than timed: 16 reads of each record (a scan per memory would be thousands).
    const perRecord = (memories.reads() + edges.reads()) / (memories.records.length + edges.records.length);
    expect(perRecord).toBeLessThan(20);
    checkInvariants(layout, memories.records, 10);
  });
});

describe('threads and layoutLanes', () => {
  it('group once and lay out per width, the same as layoutTimelines', () => {
    const memories = [mem('a', 1 * DAY), mem('b', 2 * DAY), mem('c', 9 * DAY), mem('d', 10 * DAY)];
    const edges = [edge('1', 'a', 'b'), edge('2', 'c', 'd'), edge('ghost', 'a', 'nobody')];
    const grouped = threads(memories, edges);
    expect(grouped.threads.map((t) => t.members.map((m) => m.id))).toEqual([
      ['c', 'd'],
      ['a', 'b'],
    ]);
    expect(grouped.edges.map((e) => e.id)).toEqual(['1', '2']);
    for (const width of [300, 1200]) {
      const a = layoutLanes(grouped, { width, laneHeight: 20 });
      const b = layoutTimelines(memories, edges, { width, laneHeight: 20 });
      expect(a.nodes).toEqual(b.nodes);
      expect(a.lanes).toEqual(b.lanes);
      expect(a.edges).toEqual(b.edges);
    }
  });

  it('orders members by memory/order.ts: equal times by createdAt, then id', () => {
    const memories = [
      mem('b', DAY, 'event', { createdAt: 5 }),
      mem('a', DAY, 'event', { createdAt: 5 }),
      mem('c', DAY, 'event', { createdAt: 1 }),
    ];
    const edges = [edge('1', 'c', 'a'), edge('2', 'a', 'b')];
    expect(threads(memories, edges).threads[0].members.map((m) => m.id)).toEqual(['c', 'a', 'b']);
  });
});
