import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { neighbourhood, neighbours, resolveHighlight, timelineFocus } from '../../../src/viz/highlight';
import { navigate } from '../../../src/viz/keys';
import { layoutTimelines } from '../../../src/viz/lanes';
import { timelinesThrough } from '../../../src/viz/paths';
import { searchMemories } from '../../../src/viz/search';
import { indexMemories } from '../../../src/viz/memory-index';
import { DAY, edge, mem } from './fixtures';

describe('graph queries', () => {
  // a -> b -> d, a -> c -> d, d -> e ; x isolated
  const memories = ['a', 'b', 'c', 'd', 'e', 'x'].map((id, i) => mem(id, i * DAY));
  const edges = [edge('ab', 'a', 'b'), edge('ac', 'a', 'c', 'Want'), edge('bd', 'b', 'd'), edge('cd', 'c', 'd', 'React'), edge('de', 'd', 'e', 'Changed')];
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
