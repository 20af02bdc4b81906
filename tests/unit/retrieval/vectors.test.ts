import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { VectorStore } from '../../../src/memory/retrieval/vectors';
import { seededRng } from '../../../src/memory/rng';

function unit(rng: () => number, d: number): Float32Array {
  const v = new Float32Array(d);
  let n = 0;
  for (let i = 0; i < d; i++) {
    // Box-Muller: isotropic directions.
    const x = Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
    v[i] = x;
    n += x * x;
  }
  const s = 1 / Math.sqrt(n);
  for (let i = 0; i < d; i++) v[i]! *= s;
  return v;
}

describe('VectorStore', () => {
  it('top-k equals brute force after random inserts, replacements and swap-deletes (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.oneof(fc.record({ add: fc.integer({ min: 0, max: 80 }) }), fc.record({ del: fc.integer({ min: 0, max: 80 }) })), {
          maxLength: 200,
        }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(3, 8, 33),
        (seed, ops, k, d) => {
          const rng = seededRng(seed);
          const store = new VectorStore(d, { int8: seed % 2 === 0 });
          const ref = new Map<string, Float32Array>();
          for (const o of ops) {
            if ('add' in o) {
              const v = unit(rng, d);
              store.set(`v${o.add}`, v);
              ref.set(`v${o.add}`, v);
            } else {
              expect(store.remove(`v${o.del}`)).toBe(ref.delete(`v${o.del}`));
            }
          }
          expect(store.size).toBe(ref.size);
          const q = unit(rng, d);
          const want = [...ref]
            .map(([id, v]) => ({ id, score: v.reduce((a, x, i) => a + x * q[i]!, 0) }))
            .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
            .slice(0, k);
          const got = store.search(q, k, { exact: true });
          expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
          got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 5));
          for (const [id, v] of ref) expect(Array.from(store.get(id)!)).toEqual(Array.from(v));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('int8 scan with Float32 re-scoring keeps the exact top-k on random 384-d data', () => {
    const rng = seededRng(7);
    const d = 384;
    // First pass of only k candidates: exactness must come from the error bound.
    const store = new VectorStore(d, { int8: true, exactBelow: Infinity, int8FirstPass: (k) => k });
    for (let i = 0; i < 3000; i++) store.set(`m${i}`, unit(rng, d));
    for (let t = 0; t < 20; t++) {
      const q = unit(rng, d);
      for (const k of [1, 3, 10]) {
        expect(store.searchInt8(q, k).map((h) => h.id)).toEqual(store.bruteForce(q, k).map((h) => h.id));
      }
    }
  });

  it('the sign-bit path finds a near-duplicate among many (and scores it exactly)', () => {
    const rng = seededRng(11);
    const d = 384;
    const store = new VectorStore(d, { exactBelow: 100 });
    const target = unit(rng, d);
    for (let i = 0; i < 5000; i++) store.set(`m${i}`, unit(rng, d));
    store.set('target', target);
    const q = Float32Array.from(target, (x, i) => x + 0.02 * unit(rng, d)[i]!);
    const hits = store.search(q, 3);
    expect(hits[0]!.id).toBe('target');
    expect(hits[0]!.score).toBeCloseTo(store.bruteForce(q, 1)[0]!.score, 6);
  });

  it('respects the accept filter', () => {
    const rng = seededRng(3);
    const store = new VectorStore(16);
    for (let i = 0; i < 50; i++) store.set(`m${i}`, unit(rng, 16));
    const q = unit(rng, 16);
    const hits = store.search(q, 5, { accept: (id) => Number(id.slice(1)) % 2 === 0 });
    expect(hits).toHaveLength(5);
    for (const h of hits) expect(Number(h.id.slice(1)) % 2).toBe(0);
  });

  it('rejects vectors of the wrong dimension', () => {
    const store = new VectorStore(4);
    expect(() => store.set('a', new Float32Array(3))).toThrow();
  });

  it('keeps vectors exact across chunk boundaries through growth and swap-deletes', () => {
    const rng = seededRng(21);
    const d = 8;
    for (const int8 of [false, true]) {
      const store = new VectorStore(d, { int8 });
      const ref = new Map<string, Float32Array>();
      // Over three chunks of 1024, then remove most of them (chunks are freed as they empty).
      for (let i = 0; i < 3300; i++) {
        const v = unit(rng, d);
        store.set(`v${i}`, v);
        ref.set(`v${i}`, v);
      }
      for (let i = 0; i < 3300; i += 1 + (i % 3)) {
        store.remove(`v${i}`);
        ref.delete(`v${i}`);
      }
      for (let i = 0; i < 2500; i += 7) {
        const v = unit(rng, d);
        store.set(`v${i}`, v);
        ref.set(`v${i}`, v);
      }
      expect(store.size).toBe(ref.size);
      for (const [id, v] of ref) expect(Array.from(store.get(id)!)).toEqual(Array.from(v));
      const q = unit(rng, d);
      expect(store.search(q, 10, { exact: true }).map((h) => h.id)).toEqual(store.bruteForce(q, 10).map((h) => h.id));
      const want = [...ref]
        .map(([id, v]) => ({ id, s: v.reduce((a, x, j) => a + x * q[j]!, 0) }))
        .sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : 1));
      expect(store.bruteForce(q, 10).map((h) => h.id)).toEqual(want.slice(0, 10).map((h) => h.id));
    }
  });
});
