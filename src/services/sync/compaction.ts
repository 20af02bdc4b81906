// Compaction (issue 30, defect 9; docs/SYNC.md, "Deleting deletes in sync too"): the relay cannot
// read what it keeps, so a device tells it what to drop. The device posts a sealed snapshot of its
// document as it is now (garbage-collected: what was deleted is no longer in it) with `compact=n`,
// and the relay drops every message up to n, where that device had read. The deleting device does
// it: at once after a delete-all, at most once a `compactEveryMs` after other deletes.
import * as Y from 'yjs';
import type { SyncEngine } from './engine';
import { KIND, encodeSnapshot, gzip } from './messages';
import type { StateRows } from './sync-rows';

/**
 * Compaction (docs/SYNC.md, "Deleting deletes in sync too"): reads the room to its end, then
 * posts the whole document as it is now (garbage-collected: what was deleted is no longer in it)
 * and has the relay drop every message up to where it had read. A device paired later gets the
 * snapshot, not the history. Not while something is missing (holes, changes waiting on a lost
 * one): dropping those messages could lose what this device does not hold. True when done.
 */
export async function compactNow(e: SyncEngine): Promise<boolean> {
  await e.inbox.readToEnd();
  const store = e.records.doc.store;
  if (e.unpaired || e.book.missing().length > 0 || store.pendingStructs !== null || store.pendingDs !== null) return false;
  const upTo = e.cursor;
  const vector = Y.decodeStateVector(Y.encodeStateVector(e.records.doc));
  const gz = await gzip(Y.encodeStateAsUpdate(e.records.doc));
  await e.send(e.room, e.sealer, KIND.snapshot, encodeSnapshot(e.inbox.bookForOthers(), gz), upTo);
  e.allSent(vector);
  e.compactDue = false;
  return true;
}

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
