import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { neighbourhood, neighbours, resolveHighlight, timelineFocus } from '../../../src/viz/highlight';
import { navigate, navigatePlane } from '../../../src/viz/keys';
import { layoutTimelines } from '../../../src/viz/lanes';
import { containedIn, distinctTimelines, timelinesThrough } from '../../../src/viz/paths';
import type { Relation } from '../../../src/memory/types';
import { searchMemories } from '../../../src/viz/search';
import { indexMemories } from '../../../src/viz/memory-index';
import { DAY, edge, mem } from './fixtures';

describe('graph queries', () => {
  // a -> b -> d, a -> c -> d, d -> e ; x isolated
  const memories = ['a', 'b', 'c', 'd', 'e', 'x'].map((id, i) => mem(id, i * DAY));
  const edges = [
    edge('ab', 'a', 'b'),
    edge('ac', 'a', 'c', 'Want'),
    edge('bd', 'b', 'd'),
    edge('cd', 'c', 'd', 'React'),
    edge('de', 'd', 'e', 'Changed'),
  ];
  const graph = MemoryGraph.from(memories, edges);

  it('neighbours ignore direction', () => {
    expect(neighbours(graph, 'd')).toEqual(new Set(['b', 'c', 'e']));
    expect(neighbours(graph, 'x')).toEqual(new Set());
  });

  it('untangles bounded linear timelines through a memory, oldest first', () => {
    const ts = timelinesThrough(graph, 'd', 5);
    expect(ts.length).toBe(2);
    for (const t of ts) {
      expect(t.through).toBe('d');
      expect(t.memoryIds[0]).toBe('a');
      expect(t.memoryIds.at(-1)).toBe('e');
      expect(t.relations.length).toBe(t.memoryIds.length - 1);
      for (let i = 0; i + 1 < t.memoryIds.length; i++) {
        expect(graph.edgeBetween(t.memoryIds[i], t.memoryIds[i + 1])?.relation).toBe(t.relations[i]);
      }
    }
    expect(timelinesThrough(graph, 'x')).toEqual([{ memoryIds: ['x'], relations: [], through: 'x' }]);
    expect(timelinesThrough(graph, 'd', 1)).toHaveLength(1);
  });

  it('timelineFocus and resolveHighlight map timelines to node and edge ids', () => {
    const focus = timelineFocus([{ memoryIds: ['a', 'c', 'd'], relations: ['Want', 'React'], through: 'c' }]);
    const resolved = resolveHighlight(focus, edges)!;
    expect(resolved.nodes).toEqual(new Set(['a', 'c', 'd']));
    expect(resolved.edges).toEqual(new Set(['ac', 'cd']));
    expect(resolveHighlight(null, edges)).toBeNull();
  });

  it('search matches every word, case-insensitively', () => {
    const ms = [mem('1', 0, 'event', { text: 'User adopted a Cat named Miso' }), mem('2', 0, 'event', { text: 'User likes cats' })];
    expect(searchMemories(ms, 'cat miso')).toEqual(new Set(['1']));
    expect(searchMemories(ms, 'CAT')).toEqual(new Set(['1', '2']));
    expect(searchMemories(ms, '  ')).toEqual(new Set());
  });

  it('keyboard navigation moves along time and between lanes', () => {
    const layout = layoutTimelines(memories, edges, { width: 600, laneHeight: 20 });
    expect(layout.lanes.map((l) => l.memoryIds)).toEqual([['a', 'b', 'c', 'd', 'e'], ['x']]);
    expect(navigate(layout, null, 'next')).toBe('e');
    expect(navigate(layout, 'b', 'next')).toBe('c');
    expect(navigate(layout, 'b', 'prev')).toBe('a');
    expect(navigate(layout, 'a', 'prev')).toBe('a');
    expect(navigate(layout, 'e', 'down')).toBe('x');
    expect(navigate(layout, 'x', 'up')).toBe('e');
    expect(navigate(layout, 'a', 'up')).toBe('a');
    expect(navigate(layout, 'c', 'last')).toBe('e');
  });
});

describe('one index of the data', () => {
  const memories = ['a', 'b', 'c'].map((id, i) => mem(id, i * DAY));
  const edges = [edge('ab', 'a', 'b'), edge('bc', 'b', 'c'), edge('dangling', 'a', 'ghost')];

  it('holds the memory graph and memories by id, leaving out edges with an unknown end', () => {
    const index = indexMemories(memories, edges);
    expect(index.memories.get('b')?.text).toBe('memory b');
    expect(index.graph.edgeCount).toBe(2);
    expect(index.graph.componentOf('a').length).toBe(3);
  });

  it('neighbourhood: the memory, its neighbours and the links between them', () => {
    const { graph } = indexMemories(memories, edges);
    expect(neighbourhood(graph, 'b')).toEqual({ nodes: new Set(['a', 'b', 'c']), edges: new Set(['ab', 'bc']) });
    expect(neighbourhood(graph, 'a')).toEqual({ nodes: new Set(['a', 'b']), edges: new Set(['ab']) });
  });

  it('timelinesThrough is empty for an unknown memory and bounded by its step budget', () => {
    const { graph } = indexMemories(memories, edges);
    expect(timelinesThrough(graph, 'nobody')).toEqual([]);
    // A budget of 0 steps still returns the partial walk from the memory itself.
    expect(timelinesThrough(graph, 'b', 3, 0)[0].through).toBe('b');
  });
});

describe('navigatePlane (graph view keys)', () => {
  //        b (100, 0)
  // a (0, 100)        c (200, 100)     e (400, 100)
  //        d (100, 200)
  const nodes = [
    { id: 'a', x: 0, y: 100, time: 1 },
    { id: 'b', x: 100, y: 0, time: 2 },
    { id: 'c', x: 200, y: 100, time: 3 },
    { id: 'd', x: 100, y: 200, time: 4 },
    { id: 'e', x: 400, y: 100, time: 5 },
  ];

  it('moves to the nearest memory in the arrow direction, preferring the axis', () => {
    expect(navigatePlane(nodes, 'a', 'next')).toBe('c');
    expect(navigatePlane(nodes, 'c', 'next')).toBe('e');
    expect(navigatePlane(nodes, 'c', 'prev')).toBe('a');
    expect(navigatePlane(nodes, 'a', 'up')).toBe('b');
    expect(navigatePlane(nodes, 'b', 'down')).toBe('d');
  });

  it('stays put when nothing lies that way; Home and End go to the oldest and newest', () => {
    expect(navigatePlane(nodes, 'e', 'next')).toBe('e');
    expect(navigatePlane(nodes, 'b', 'up')).toBe('b');
    expect(navigatePlane(nodes, 'c', 'first')).toBe('a');
    expect(navigatePlane(nodes, 'a', 'last')).toBe('e');
  });

  it('starts at the newest memory; nothing to do without memories', () => {
    expect(navigatePlane(nodes, null, 'prev')).toBe('e');
    expect(navigatePlane(nodes, 'gone', 'next')).toBe('e');
    expect(navigatePlane([], null, 'next')).toBeNull();
  });
});

describe('distinctTimelines (List view, detail panel)', () => {
  const t = (ids: string, rels: (string | null)[] = []): { memoryIds: string[]; relations: (Relation | null)[] } => ({
    memoryIds: ids.split(''),
    relations: ids
      .split('')
      .slice(1)
      .map((_, i) => (rels[i] ?? 'Cause') as Relation | null),
  });

  it('containedIn: an unbroken run with the same relations', () => {
    expect(containedIn(t('bc'), t('abcd'))).toBe(true);
    expect(containedIn(t('abcd'), t('abcd'))).toBe(true);
    expect(containedIn(t('ac'), t('abcd'))).toBe(false);
    expect(containedIn(t('bc', ['Want']), t('abcd'))).toBe(false);
    expect(containedIn(t('cb'), t('abcd'))).toBe(false);
    expect(containedIn(t('abcde'), t('abcd'))).toBe(false);
  });

  it('drops repeats and timelines inside another, keeping order', () => {
    const list = [t('abc'), t('abcd'), t('xbcd'), t('abcd'), t('bc')];
    expect(distinctTimelines(list).map((x) => x.memoryIds.join(''))).toEqual(['abcd', 'xbcd']);
  });

  it('drops timelines already on screen as a thread', () => {
    const thread = { memoryIds: ['a', 'b', 'c', 'd'], relations: ['Cause', 'Cause', null] as (Relation | null)[] };
    // ab is the thread's first run; bcd is not (the thread has no link from c to d).
    expect(distinctTimelines([t('ab'), t('bcd')], [thread]).map((x) => x.memoryIds.join(''))).toEqual(['bcd']);
  });

  it('the demo case: a two-memory timeline equal to its two-memory thread is not listed twice', () => {
    const graph = MemoryGraph.from([mem('p', 1), mem('q', 2)], [edge('pq', 'p', 'q', 'SameTopic')]);
    const timelines = timelinesThrough(graph, 'p', 3);
    const thread = { memoryIds: ['p', 'q'], relations: [graph.edgeBetween('p', 'q')!.relation] };
    expect(timelines).toHaveLength(1);
    expect(distinctTimelines(timelines, [thread])).toEqual([]);
  });
});
