// Timelines through a memory (explorer detail panel, List tab, Focus) on link cycles, a self-link
// and one memory with 100,000 links.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { compareChronological } from '../../../src/memory/order';
import { seededRng } from '../../../src/memory/rng';
import type { Edge, Id, Memory, Relation, Timeline } from '../../../src/memory/types';
import { timelinesThrough } from '../../../src/viz/paths';
import { DAY, edge, mem } from './fixtures';

/** Each timeline names a memory once, and each step is an edge of the graph with its relation. */
function expectWellFormed(graph: MemoryGraph, ts: Timeline[], through: Id): void {
  for (const t of ts) {
    expect(new Set(t.memoryIds).size, t.memoryIds.join(' ')).toBe(t.memoryIds.length);
    expect(t.memoryIds).toContain(through);
    expect(t.relations).toHaveLength(t.memoryIds.length - 1);
    for (let i = 0; i + 1 < t.memoryIds.length; i++) {
      expect(graph.edgeBetween(t.memoryIds[i], t.memoryIds[i + 1])?.relation).toBe(t.relations[i]);
    }
  }
}

describe('timelinesThrough on cycles', () => {
  it('A→B→C→A: a timeline through each names every memory once', () => {
    const g = MemoryGraph.from(
      [mem('a', 1 * DAY), mem('b', 2 * DAY), mem('c', 3 * DAY)],
      [edge('ab', 'a', 'b'), edge('bc', 'b', 'c', 'Want'), edge('ca', 'c', 'a', 'React')],
    );
    for (const id of ['a', 'b', 'c']) {
      const ts = timelinesThrough(g, id, 3);
      expect(ts.length).toBeGreaterThan(0);
      expectWellFormed(g, ts, id);
    }
    // Back from a: c, then b; forward from a would be b, c: cut before b (already behind).
    expect(timelinesThrough(g, 'a', 3)).toEqual([{ memoryIds: ['b', 'c', 'a'], relations: ['Want', 'React'], through: 'a' }]);
  });

  it('A↔B (two edges) and a self-link', () => {
    const g = MemoryGraph.from(
      [mem('a', 1 * DAY), mem('b', 2 * DAY), mem('f', 3 * DAY), mem('g', 4 * DAY)],
      [edge('ab', 'a', 'b'), edge('ba', 'b', 'a', 'React'), edge('ff', 'f', 'f'), edge('fg', 'f', 'g')],
    );
    expect(timelinesThrough(g, 'a', 3)).toEqual([{ memoryIds: ['b', 'a'], relations: ['React'], through: 'a' }]);
    expect(timelinesThrough(g, 'b', 3)).toEqual([{ memoryIds: ['a', 'b'], relations: ['Cause'], through: 'b' }]);
    // The self-link is no step of a timeline.
    expect(timelinesThrough(g, 'f', 3)).toEqual([{ memoryIds: ['f', 'g'], relations: ['Cause'], through: 'f' }]);
  });

  it('random graphs with cycles: always terminates with well-formed timelines', () => {
    const rng = seededRng(21);
    for (let round = 0; round < 200; round++) {
      const n = 2 + Math.floor(rng() * 9);
      const memories = Array.from({ length: n }, (_, i) => mem(`m${i}`, Math.floor(rng() * 5) * DAY));
      const edges: Edge[] = [];
      for (let k = 0; k < n * 2; k++) {
        const a = Math.floor(rng() * n);
        const b = Math.floor(rng() * n);
        edges.push(edge(`e${k}`, `m${a}`, `m${b}`, k % 2 ? 'Cause' : 'Want'));
      }
      const g = MemoryGraph.from(memories, edges);
      for (const m of memories) expectWellFormed(g, timelinesThrough(g, m.id, 1 + (round % 6)), m.id);
    }
  });
});

/** The old walk: every neighbour sorted, most recent first (the reference on graphs without cycles). */
function reference(graph: MemoryGraph, id: Id, limit: number, budget = 5000): Timeline[] {
  const walk = (dir: 'back' | 'forward') => {
    const paths: { ids: Id[]; rels: Relation[] }[] = [];
    let steps = 0;
    const ids: Id[] = [id];
    const rels: Relation[] = [];
    const visit = (cur: Id): void => {
      if (paths.length >= limit || steps++ > budget) return;
      const es = dir === 'back' ? graph.incoming(cur) : graph.outgoing(cur);
      const ns = es
        .map((e) => ({ id: dir === 'back' ? e.from : e.to, rel: e.relation }))
        .sort((a, b) => compareChronological(graph.dated(b.id)!, graph.dated(a.id)!));
      if (ns.length === 0) return void paths.push({ ids: ids.slice(), rels: rels.slice() });
      for (const n of ns) {
        if (paths.length >= limit || steps > budget) return;
        ids.push(n.id);
        rels.push(n.rel);
        visit(n.id);
        ids.pop();
        rels.pop();
      }
    };
    visit(id);
    return paths;
  };
  const back = walk('back');
  const fwd = walk('forward');
  const out: Timeline[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < Math.min(limit, Math.max(back.length, fwd.length)); i++) {
    const b = back[i % back.length];
    const f = fwd[i % fwd.length];
    const ids = [...b.ids.slice().reverse(), ...f.ids.slice(1)];
    if (seen.has(ids.join(' '))) continue;
    seen.add(ids.join(' '));
    out.push({ memoryIds: ids, relations: [...b.rels.slice().reverse(), ...f.rels], through: id });
  }
  return out;
}

describe('timelinesThrough keeps its choices', () => {
  it('on graphs without cycles it picks what sorting every neighbour picked', () => {
    const rng = seededRng(7);
    for (let round = 0; round < 200; round++) {
      const n = 3 + Math.floor(rng() * 12);
      // Ties in time on purpose: the order falls back to createdAt, then id.
      const memories: Memory[] = Array.from({ length: n }, (_, i) => mem(`m${i}`, Math.floor(i / 2) * DAY));
      const edges: Edge[] = [];
      for (let k = 0; k < n * 2; k++) {
        const a = Math.floor(rng() * n);
        const b = Math.floor(rng() * n);
        if (a < b) edges.push(edge(`e${k}`, `m${a}`, `m${b}`, k % 3 ? 'Cause' : 'SameTopic'));
      }
      const g = MemoryGraph.from(memories, edges);
      const limit = 1 + (round % 5);
      for (const m of memories) expect(timelinesThrough(g, m.id, limit)).toEqual(reference(g, m.id, limit));
    }
  });

  it('one memory with 100,000 links: the most recent neighbours, without sorting them all', () => {
    const n = 100_000;
    // Older links first in the list, and the most recent not last, so taking the list's ends is wrong.
    const memories = [mem('hub', 0), ...Array.from({ length: n }, (_, i) => mem(`m${i}`, ((i * 7919) % n) + 1))];
    const g = MemoryGraph.from(
      memories,
      Array.from({ length: n }, (_, i) => edge(`e${i}`, 'hub', `m${i}`)),
    );
    const ts = timelinesThrough(g, 'hub', 3);
    const newest = [...memories.slice(1)].sort((a, b) => b.time - a.time).slice(0, 3);
    expect(ts.map((t) => t.memoryIds)).toEqual(newest.map((m) => ['hub', m.id]));
  });
});
