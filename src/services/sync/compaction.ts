// When to compact (docs/SYNC.md, "Deleting deletes in sync too"), part of the service loop: the
// relay cannot read what it keeps, so the deleting device has it drop what came before a snapshot
// (the engine's `compact`): at once after a delete-all, at most once a `compactEveryMs` after other
// deletes; and after any delete the document's log is folded.
import type { SyncEngine } from './engine';
import type { StateRows } from './sync-rows';

/**
 * After deletes: this device's own have the relay compacted (at once after a delete-all, else at
 * most once a `everyMs`), and any delete, here or merged, folds the document's log into a fresh
 * snapshot, so the `sync` rows keep no words of what was deleted.
 */
export class Compactor {
  private lastAt = 0;

  constructor(
    private readonly rows: StateRows,
    private readonly everyMs = 60_000,
  ) {}

  async after(engine: SyncEngine): Promise<void> {
    const due = engine.compactDue;
    if (due === 'now' || (due === 'soon' && Date.now() - this.lastAt >= this.everyMs)) {
      if (await engine.compact()) this.lastAt = Date.now();
      engine.foldDue = true;
    }
    if (!engine.foldDue) return;
    engine.foldDue = false;
    try {
      await this.rows.save({ puts: [] }, true);
    } catch (e) {
      engine.foldDue = true;
      throw e;
    }
  }
}
