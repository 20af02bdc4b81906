// The record document as this device keeps it (docs/SYNC.md, "In the app"): a snapshot `doc:base`
// plus a log of updates `doc:u:<n>`, written with the rows they go with; folded into one snapshot
// after LIMIT updates, in one transaction (never both, never neither). Re-encoding the whole
// document after every pull would write 40 MB at 100k memories.
import * as Y from 'yjs';
import type { SyncRows } from '../../store/sync-store';
import type { Bytes } from './bytes';
import { logKey } from './outbox';

const LIMIT = 300;
const PREFIX = 'doc:u:';

export class DocLog {
  private next = 0;
  private count = 0;
  private fresh: Bytes[] = [];

  /** The saved document (snapshot and log merged into one update), and its log to go on with. */
  static fromRows(rows: Map<string, unknown>): { log: DocLog; doc?: Bytes } {
    const updates = [...rows.entries()].filter(([k]) => k.startsWith(PREFIX)).sort(([a], [b]) => (a < b ? -1 : 1));
    const base = rows.get('doc:base') as Bytes | undefined;
    const parts = [...(base ? [base] : []), ...updates.map(([, v]) => v as Bytes)];
    const log = new DocLog();
    log.next = updates.length ? Number(updates.at(-1)![0].slice(PREFIX.length)) + 1 : 0;
    log.count = updates.length;
    return { log, doc: parts.length ? (Y.mergeUpdates(parts) as Bytes) : undefined };
  }

  /** Keeps every update of `doc` from now on, to be written by `take`. */
  watch(doc: Y.Doc): void {
    doc.on('update', (u: Uint8Array) => this.fresh.push(u as Bytes));
  }

  /** The rows of the updates made since the last call. */
  take(): SyncRows['puts'] {
    const puts = this.fresh.map((u) => ({ key: logKey(this.next++), value: u }));
    this.count += this.fresh.length;
    this.fresh = [];
    return puts;
  }

  /** Rows `take` gave out for a write that failed: written with the next one instead. */
  putBack(puts: SyncRows['puts']): void {
    const updates = puts.filter((p) => p.key.startsWith(PREFIX)).map((p) => p.value as Bytes);
    this.count -= updates.length;
    this.fresh = [...updates, ...this.fresh];
  }

  /** A snapshot was not written: the next save folds again. */
  mustFold(): void {
    this.count = LIMIT + 1;
  }

  /** Long enough to fold (`snapshot`). */
  get long(): boolean {
    return this.count > LIMIT;
  }

  /** Rows that replace the snapshot and the whole log with the document as it is, plus `with`. */
  snapshot(doc: Y.Doc, withRows: SyncRows['puts'] = []): SyncRows {
    this.fresh = [];
    this.count = 0;
    return { puts: [{ key: 'doc:base', value: Y.encodeStateAsUpdate(doc) as Bytes }, ...withRows], deletes: [`${PREFIX}*`] };
  }
}
