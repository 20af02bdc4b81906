// Checks of how much work is done, not of how long it takes (docs/TESTING.md, "How tests wait").
// A test that wanted "5,000 memories in under 500 ms" fails on a machine busy with other work;
// what it guards against is an algorithm that does too much (a scan per item, a walk of every
// path). So: count the work (`reading`: every property read of the input's records), or, where
// nothing can be counted, compare two runs on this machine at the same moment (`leastTime`, each
// at its best of a few runs: a burst of load lengthens some runs, not all).

/** The least time, in ms, of `tries` runs of `fn`. */
export function leastTime(fn: () => unknown, tries = 3): number {
  let best = Infinity;
  for (let i = 0; i < tries; i++) {
    const t0 = performance.now();
    fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/** The records with every property read counted (`reads()`): the work done on them, whatever the machine's speed. */
export function reading<T extends object>(records: T[]): { records: T[]; reads: () => number } {
  let reads = 0;
  const counted = records.map(
    (r) =>
      new Proxy(r, {
        get(target, key, receiver) {
          reads++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      }),
  );
  return { records: counted, reads: () => reads };
}
