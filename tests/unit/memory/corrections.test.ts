import { describe, expect, it } from 'vitest';
import { changeEdge, deleteMemory, editMemoryText, toggleSuperseded } from '../../../src/memory/corrections';
import { MemoryGraph } from '../../../src/memory/graph';
import { memoryLine } from '../../../src/memory/recall/turn';
import { formatTimeline } from '../../../src/memory/recall/timelines';
import { checkGraphInvariants } from '../../support/invariants';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { Edge, Memory } from '../../../src/memory/types';

const mem = (id: string, time: number, kind: Memory['kind'] = 'event', extra: Partial<Memory> = {}): Memory => ({
  id,
  kind,
  text: `text ${id}`,
  subject: 'user',
  time,
  sourceTurnIds: [],
  sessionId: 's',
  edited: false,
  createdAt: time,
  ...extra,
});
const edge = (from: string, to: string, relation: Edge['relation']): Edge => ({
  id: `${from}->${to}`,
  from,
  to,
  relation,
  origin: 'model',
  createdAt: 0,
});

function world() {
  const memories = [mem('tea', 1, 'user-trait', { supersededBy: 'coffee' }), mem('coffee', 5, 'user-trait'), mem('run', 2), mem('knee', 3)];
  const edges = [edge('tea', 'coffee', 'Changed'), edge('run', 'knee', 'HinderedBy'), edge('knee', 'coffee', 'SameTopic')];
  return { map: new Map(memories.map((m) => [m.id, m])), graph: MemoryGraph.from(memories, edges), memories, edges };
}

async function applied(memories: Memory[], edges: Edge[], ...changes: Parameters<InMemoryRepository['apply']>[0][]) {
  const repo = new InMemoryRepository();
  await repo.apply({ memories, edges });
  for (const c of changes) await repo.apply(c);
  return { memories: await repo.listMemories(), edges: await repo.listEdges() };
}

describe('corrections', () => {
  it('deleting a memory removes its edges, restores what it superseded, and undo puts all back', async () => {
    const w = world();
    const d = deleteMemory('coffee', w.map, w.graph)!;
    const after = await applied(w.memories, w.edges, d.change);
    expect(after.edges.map((e) => e.id)).toEqual(['run->knee']);
    expect(after.memories.find((m) => m.id === 'tea')?.supersededBy).toBeUndefined();
    expect(after.memories.some((m) => m.id === 'coffee')).toBe(false);
    expect(checkGraphInvariants(after.memories, after.edges)).toEqual([]);
    const undone = await applied(w.memories, w.edges, d.change, d.undo);
    expect(undone.memories.sort((a, b) => a.id.localeCompare(b.id))).toEqual([...w.memories].sort((a, b) => a.id.localeCompare(b.id)));
    expect(undone.edges.length).toBe(3);
  });

  it('editing marks the memory edited and ignores blank or unchanged text', () => {
    const m = mem('a', 1);
    expect(editMemoryText(m, '  ')).toBeUndefined();
    expect(editMemoryText(m, m.text)).toBeUndefined();
    expect(editMemoryText(m, ' new   words ')).toMatchObject({ text: 'new words', edited: true });
  });

  it('changing a relation makes it a user edge; dropping Changed un-supersedes the trait', async () => {
    const w = world();
    const c = changeEdge(w.edges[0], 'SameTopic', w.map, 9);
    expect(c.edges?.[0]).toMatchObject({ relation: 'SameTopic', origin: 'user' });
    expect(c.memoryPatches).toEqual([{ id: 'tea', supersededBy: null }]);
    const del = changeEdge(w.edges[1], null, w.map, 9);
    expect(del.deleteEdges).toEqual(['run->knee']);
    const after = await applied(w.memories, w.edges, c, del);
    expect(checkGraphInvariants(after.memories, after.edges)).toEqual([]);
  });

  it('"No longer true" ends any trait at a time, with or without a replacement; "Mark current" undoes both', async () => {
    const w = world();
    // Past by supersession: marking current clears the replacement and any end.
    expect(toggleSuperseded('tea', w.map, w.graph, 100).change?.memoryPatches).toEqual([{ id: 'tea', supersededBy: null, endedAt: null }]);
    // No newer trait replaces it: it is still marked ended, at the time given.
    const lone = toggleSuperseded('coffee', w.map, w.graph, 100);
    expect(lone.error).toBeUndefined();
    expect(lone.change?.memoryPatches).toEqual([{ id: 'coffee', endedAt: 100 }]);
    expect(toggleSuperseded('run', w.map, w.graph, 100).error).toMatch(/Only what says how things are/);
    // A newer memory it links to by a change becomes the replacement as well, and the end is that
    // change's time, not today.
    const fresh = new Map(w.map);
    fresh.set('tea', mem('tea', 1, 'user-trait'));
    expect(toggleSuperseded('tea', fresh, w.graph, 100).change?.memoryPatches).toEqual([{ id: 'tea', endedAt: 5, supersededBy: 'coffee' }]);
    // Through the store, and back.
    const ended = await applied(w.memories, w.edges, lone.change!);
    expect(ended.memories.find((m) => m.id === 'coffee')?.endedAt).toBe(100);
    const endedMap = new Map(ended.memories.map((m) => [m.id, m]));
    const back = toggleSuperseded('coffee', endedMap, w.graph, 200);
    expect(back.change?.memoryPatches).toEqual([{ id: 'coffee', supersededBy: null, endedAt: null }]);
    const current = await applied(ended.memories, w.edges, back.change!);
    expect(current.memories.find((m) => m.id === 'coffee')).not.toHaveProperty('endedAt');
  });

  it('an ended trait goes into prompts as the past, "true until" its end', () => {
    const m = mem('coffee', Date.UTC(2024, 0, 5), 'user-trait', { endedAt: Date.UTC(2024, 2, 1) });
    expect(memoryLine(m)).toMatch(/true until 2024-03-01/);
    const replaced = mem('tea', Date.UTC(2024, 0, 1), 'user-trait', { supersededBy: 'coffee' });
    const byId = new Map([
      [m.id, m],
      [replaced.id, replaced],
    ]);
    expect(memoryLine(replaced, byId)).toMatch(/true until 2024-01-05/);
    expect(formatTimeline({ memoryIds: ['tea', 'coffee'], relations: ['Changed'], through: 'coffee' }, byId)).toMatch(
      /true until 2024-03-01/,
    );
    expect(memoryLine(mem('x', 1, 'user-trait'))).not.toMatch(/until|no longer/);
  });
});
