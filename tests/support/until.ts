// How a unit test waits for something the code under test does in the background (docs/TESTING.md,
// "How tests wait"): on the condition itself, never on a time. `until` looks again every few
// milliseconds, however long that takes; the test's own timeout (vitest.config.ts) is the only
// limit, a safety net, and when it ends the test the log says what was awaited.
import { TestRunner } from 'vitest';

/** Resolves once `ok` holds. The pause between looks is a pace, not a deadline. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, paceMs = 5): Promise<void> {
  const signal = TestRunner.getCurrentTest()?.context.signal;
  const said = () => console.error(`The test ended while waiting for ${what}.`);
  signal?.addEventListener('abort', said, { once: true });
  try {
    while (!(await ok())) {
      if (signal?.aborted) throw new Error(`stopped waiting for ${what}: the test ended`);
      await new Promise((r) => setTimeout(r, paceMs));
    }
  } finally {
    signal?.removeEventListener('abort', said);
  }
}
