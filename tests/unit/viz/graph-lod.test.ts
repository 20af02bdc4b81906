import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Edge, Memory } from '../../../src/memory/types';
import { GraphLod, pickGraphSubset } from '../../../src/viz/graph-lod';
import { components as componentsOf } from '../../../src/viz/components';
import { reading } from '../../support/scaling';

const components = (ms: readonly Memory[], es: readonly Edge[]): string[][] => componentsOf(ms, es);

function mem(id: string, time: number): Memory {
  return { id, kind: 'event', text: `memory ${id}`, time, sourceTurnIds: [], sessionId: 's', edited: false, createdAt: time };
}

function edge(from: string, to: string): Edge {
  return { id: `${from}->${to}`, from, to, relation: 'Cause', origin: 'model', createdAt: 0 };
}

/** `count` threads of `size` memories each, a chain per thread; thread t's memories at times t*100+i. */
function threads(count: number, size: number): { memories: Memory[]; edges: Edge[] } {
  const memories: Memory[] = [];
  const edges: Edge[] = [];
  for (let t = 0; t < count; t++) {
    for (let i = 0; i < size; i++) {
      memories.push(mem(`t${t}m${i}`, t * 100 + i));
      if (i > 0) edges.push(edge(`t${t}m${i - 1}`, `t${t}m${i}`));
    }
  }
  return { memories, edges };
}

const ids = (ms: readonly Memory[]): string[] => ms.map((m) => m.id).sort();

describe('pickGraphSubset', () => {
  it('returns the input arrays when they fit the limit', () => {
    const { memories, edges } = threads(3, 4);
    const s = pickGraphSubset(memories, edges, { limit: 12 });
    expect(s.complete).toBe(true);
    expect(s.memories).toBe(memories);
    expect(s.edges).toBe(edges);
    expect(s.total).toBe(12);
    expect(s.totalEdges).toBe(9);
  });

  it('takes whole threads, the most recently active first', () => {
    const { memories, edges } = threads(5, 4); // thread 4 is the newest
    const s = pickGraphSubset(memories, edges, { limit: 8 });
    expect(s.complete).toBe(false);
    expect(ids(s.memories)).toEqual(ids(memories.filter((m) => m.id.startsWith('t4') || m.id.startsWith('t3'))));
    expect(s.edges).toHaveLength(6);
    expect(s.total).toBe(20);
    expect(s.totalEdges).toBe(15);
  });

  it('recency is by each memory, not by thread order in the input', () => {
    const { memories, edges } = threads(3, 3);
    // Thread 0 gets the newest memory of all.
    memories[0] = { ...memories[0], time: 10_000 };
    const s = pickGraphSubset(memories, edges, { limit: 3 });
    expect(ids(s.memories)).toEqual(['t0m0', 't0m1', 't0m2']);
  });

  it('pinned memories and their threads come first, whatever their age', () => {
    const { memories, edges } = threads(5, 4);
    const s = pickGraphSubset(memories, edges, { limit: 8, pinned: ['t0m2'] });
    expect(s.ids.has('t0m2')).toBe(true);
    expect(ids(s.memories)).toEqual(ids(memories.filter((m) => m.id.startsWith('t0') || m.id.startsWith('t4'))));
    expect(s.pinnedShown).toBe(1);
  });

  it('keeps every pinned memory up to the limit, then drops the rest; unknown pins are ignored', () => {
    const { memories, edges } = threads(5, 4);
    const s = pickGraphSubset(memories, edges, { limit: 3, pinned: ['nope', 't0m0', 't1m0', 't2m0', 't3m0'] });
    expect(ids(s.memories)).toEqual(['t0m0', 't1m0', 't2m0']);
    expect(s.pinnedShown).toBe(3);
    expect(s.edges).toHaveLength(0);
  });

  it('a thread larger than the limit is cut around its seed, breadth first', () => {
    // A star around h plus a long tail: the newest memory is the hub.
    const memories = [mem('h', 100), ...Array.from({ length: 6 }, (_, i) => mem(`s${i}`, i)), mem('tail', 50)];
    const edges = [...Array.from({ length: 6 }, (_, i) => edge(`s${i}`, 'h')), edge('tail', 's0')];
    const s = pickGraphSubset(memories, edges, { limit: 7 });
    expect(ids(s.memories)).toEqual(['h', 's0', 's1', 's2', 's3', 's4', 's5']);
    expect(s.edges).toHaveLength(6);
  });

  it('one index answers many picks, each independent of the ones before', () => {
    const { memories, edges } = threads(6, 5);
    const lod = new GraphLod(memories, edges);
    const a = lod.pick({ limit: 10 });
    const b = lod.pick({ limit: 10, pinned: ['t0m0'] });
    const c = lod.pick({ limit: 15 });
    expect(ids(b.memories)).toEqual(ids(memories.filter((m) => m.id.startsWith('t0') || m.id.startsWith('t5'))));
    expect(ids(lod.pick({ limit: 10 }).memories)).toEqual(ids(a.memories));
    expect(ids(c.memories)).toEqual(ids(memories.filter((m) => /^t[345]/.test(m.id))));
    expect(lod.has('t2m1')).toBe(true);
    expect(lod.has('nope')).toBe(false);
  });

  it('ignores edges to memories that are not in the data', () => {
    const { memories, edges } = threads(2, 3);
    const s = pickGraphSubset(memories, [...edges, edge('ghost', 't1m0'), edge('t0m0', 'ghost')], { limit: 4 });
    expect(s.totalEdges).toBe(4);
    expect(s.edges.every((e) => s.ids.has(e.from) && s.ids.has(e.to))).toBe(true);
  });

  it('random graphs: never more than the limit, pins shown first, edges exactly those inside', () => {
    const cases = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 80 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 120 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.integer({ min: 0, max: 90 }),
        (times, pairs, pins, limit) => {
          cases.add(JSON.stringify([times, pairs, pins, limit]));
          const memories = times.map((t, i) => mem(`m${i}`, t));
          const edges = pairs.map(([a, b]) => edge(`m${a % (times.length + 2)}`, `m${b % times.length}`));
          const pinned = pins.map((p) => `m${p % times.length}`);
          const s = pickGraphSubset(memories, edges, { limit, pinned });
          expect(s.memories.length).toBe(Math.min(limit, memories.length));
          expect(new Set(s.memories.map((m) => m.id)).size).toBe(s.memories.length);
          const distinctPins = [...new Set(pinned)];
          for (const p of distinctPins.slice(0, limit)) expect(s.ids.has(p)).toBe(true);
          if (s.complete) expect(s.edges).toBe(edges);
          else expect(s.edges).toEqual(edges.filter((e) => s.ids.has(e.from) && s.ids.has(e.to)));
          // Whole threads: besides the pinned memories' threads, at most one thread (the last one
          // grown, cut by the limit) is partly shown.
          const partly = components(memories, edges).filter((c) => {
            const shown = c.filter((id) => s.ids.has(id)).length;
            return shown > 0 && shown < c.length;
          });
          expect(partly.length).toBeLessThanOrEqual(1 + distinctPins.length);
        },
      ),
      { numRuns: 300, seed: 9 },
    );
    expect(cases.size).toBeGreaterThan(250);
  });

  it('100,000 memories with 150,000 edges: limited in one pass', () => {
    const memories: Memory[] = [];
    for (let i = 0; i < 100_000; i++) memories.push(mem(`m${i}`, (i * 7919) % 100_000));
    const edges: Edge[] = [];
    for (let i = 0; i < 150_000; i++) edges.push(edge(`m${(i * 31) % 100_000}`, `m${(i * 17 + 3) % 100_000}`));
    const m = reading(memories);
    const e = reading(edges);
    const s = pickGraphSubset(m.records, e.records, { limit: 2000, pinned: ['m5'] });
    expect(s.memories).toHaveLength(2000);
    expect(s.ids.has('m5')).toBe(true);
    // One pass, counted rather than timed: two reads of each record (a field or two, once).
    expect((m.reads() + e.reads()) / (memories.length + edges.length)).toBeLessThan(3);
  });
});
