// Small deterministic PRNG (mulberry32) for the plain-Node scripts (test assets, benchmarks), so
// every run generates the same data. src/memory/rng.ts is the same generator for the TS core.
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
