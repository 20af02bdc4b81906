// The sync rows a device writes with what they go with (docs/SYNC.md, "In the app"): the
// document's new updates, the engine's state and the config ride in the same transaction as the
// records a message brought, the out-box rows they replace, or a wipe. A write that fails gives
// the document's updates back, so the next write carries them.
import type { AppliedChange } from '../../ports';
import type { TealeafDb } from '../../store/db';
import { readSyncRow, readSyncRowsByPrefix, writeSyncRows, type SyncRows } from '../../store/sync-store';
import type { Bytes } from './bytes';
import { DocLog } from './doc-log';
import type { SyncEngine } from './engine';
import type { SyncConfig } from './sync-config';

export class StateRows {
  log = new DocLog();

  constructor(
    private readonly db: TealeafDb,
    private readonly now: () => { engine?: SyncEngine; config?: SyncConfig },
  ) {}

  /** The rows to keep now: the document's new updates, the state and the config. */
  private rows(): SyncRows {
    const puts = this.log.take();
    const { engine, config } = this.now();
    if (engine && config) puts.push({ key: 'state', value: engine.state(false) }, { key: 'config', value: config });
    return { puts };
  }

  /** Runs a write with the rows that go with it (`extra` first). */
  async with<T>(write: (rows: SyncRows) => Promise<T>, extra: SyncRows = { puts: [] }): Promise<T> {
    const rows = this.rows();
    try {
      return await write({ puts: [...extra.puts, ...rows.puts], deletes: extra.deletes });
    } catch (e) {
      this.log.putBack(rows.puts);
      throw e;
    }
  }

  /** Writes the rows on their own (after a pull, a push); now and then the log folds into one snapshot. */
  async save(extra: SyncRows = { puts: [] }, fold = false): Promise<void> {
    const { engine } = this.now();
    if (!engine) return;
    const snap = fold || this.log.long ? this.log.snapshot(engine.records.doc) : undefined;
    const rows = { puts: [...(snap?.puts ?? []), ...extra.puts], deletes: [...(snap?.deletes ?? []), ...(extra.deletes ?? [])] };
    try {
      await this.with((r) => writeSyncRows(this.db, r), rows);
    } catch (e) {
      // The snapshot was not written: fold again next time, or the updates it held are lost.
      if (snap) this.log.mustFold();
      throw e;
    }
  }

  /** Local writes from the out-box into the document, then deleted from the out-box with the document rows. */
  async drainOutbox(engine: SyncEngine): Promise<void> {
    const out = await readSyncRowsByPrefix(this.db, 'out:');
    if (out.length === 0) return;
    for (const [, change] of out) await engine.recordLocal(change as AppliedChange);
    await this.with((r) => writeSyncRows(this.db, r), { puts: [], deletes: out.map(([k]) => k) });
  }

  /** A delete-all made in any tab (its `reset` row): the new epoch, and the row's removal with the document rows. */
  async takeReset(engine: SyncEngine): Promise<boolean> {
    if ((await readSyncRow(this.db, 'reset')) === undefined) return false;
    await engine.deleteAll();
    await this.with((r) => writeSyncRows(this.db, r), { puts: [], deletes: ['reset'] });
    return true;
  }

  /** A backup imported in any tab (its `reconcile` row): into the document, and the row's removal with the document rows. */
  async takeImport(engine: SyncEngine): Promise<void> {
    const row = (await readSyncRow(this.db, 'reconcile')) as { mode: 'merge' | 'replace' } | undefined;
    if (!row) return;
    await engine.reconcile(row.mode === 'replace');
    await this.with((r) => writeSyncRows(this.db, r), { puts: [], deletes: ['reconcile'] });
  }

  /** A signing key made at a start (a device paired before signatures) is told to the others once. */
  async introduce(engine: SyncEngine): Promise<void> {
    const statement = (await readSyncRow(this.db, 'introduce')) as Bytes | undefined;
    if (!statement) return;
    await engine.postRing(statement);
    await this.save({ puts: [], deletes: ['introduce'] });
  }
}
