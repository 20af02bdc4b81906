// Helpers of the sync tests that run several devices in one process.
import { vi } from 'vitest';

/** Polls `ok` until it holds; the error names what was awaited. */
export async function until(what: string, ok: () => Promise<boolean> | boolean, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Runs `make` as on its own device: BroadcastChannels made meanwhile are that device's (named
 * `device/<name>`), not shared with the other "devices" this process holds, as tabs would be.
 */
export function onDevice<T>(device: string, make: () => T): T {
  const Channel = globalThis.BroadcastChannel;
  vi.stubGlobal(
    'BroadcastChannel',
    class extends Channel {
      constructor(name: string) {
        super(`${device}/${name}`);
      }
    },
  );
  try {
    return make();
  } finally {
    vi.unstubAllGlobals();
  }
}
