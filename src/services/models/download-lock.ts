// One model download at a time across tabs (Web Locks): two tabs resuming the same download at
// start-up would fetch and cache every shard twice.

export const isAbort = (e: unknown): boolean => e instanceof DOMException && e.name === 'AbortError';

/**
 * Runs `fn` holding the cross-tab download lock (Web Locks); `onWait` is called if another tab
 * holds it first. Where locks are unsupported, just runs `fn`.
 */
export async function exclusiveDownload(signal: AbortSignal, onWait: () => void, fn: () => Promise<void>): Promise<void> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (!locks) return fn();
  let ran = false;
  await locks.request('tealeaf-model-download', { ifAvailable: true }, async (lock) => {
    if (!lock) return;
    ran = true;
    await fn();
  });
  if (ran) return;
  onWait();
  await locks.request('tealeaf-model-download', { signal }, fn);
}
