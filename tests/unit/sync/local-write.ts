// A local write as the app makes it: the store writes it, and its synced part (what the app's
// out-box row holds, src/services/sync/outbox.ts) goes into the engine's document through
// `recordLocal`, the one way a local write reaches sync.
import type { AppliedChange, ChangeSet } from '../../../src/ports';
import type { SyncEngine } from '../../../src/services/sync/engine';
import { syncedPart } from '../../../src/services/sync/outbox';

export async function writeLocal(engine: SyncEngine, change: ChangeSet): Promise<AppliedChange> {
  const applied = await engine.o.store.apply(change);
  const part = syncedPart(applied);
  if (part) await engine.recordLocal(part);
  return applied;
}
