// The record document kept as a snapshot plus an update log (src/services/sync/doc-log.ts): read
// back equal to what was written, folded after 300 updates with nothing lost and no log left over.
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { openTealeafDb } from '../../../src/store/db';
import { readSyncRows, writeSyncRows } from '../../../src/store/sync-store';
import { DocLog } from '../../../src/services/sync/doc-log';
import { freshFactory } from '../store/helpers';

const logRows = (rows: Map<string, unknown>) => [...rows.keys()].filter((k) => k.startsWith('doc:u:'));
const contents = (doc: Y.Doc) => doc.getMap('m').toJSON();

describe('the document log', () => {
  it('reads back what was written, across a fold; the fold leaves one snapshot and no log rows', async () => {
    const db = await openTealeafDb({ factory: freshFactory() });
    const doc = new Y.Doc();
    const log = new DocLog();
    log.watch(doc);
    // 320 updates, written in batches of 10 as the loop saves; the fold comes when the log is long.
    let folds = 0;
    for (let i = 0; i < 320; i++) {
      doc.getMap('m').set(`k${i % 50}`, i);
      if (i % 10 === 9) {
        if (log.long) {
          folds++;
          const fold = log.snapshot(doc);
          await writeSyncRows(db, { puts: [...fold.puts, ...log.take()], deletes: fold.deletes });
        } else await writeSyncRows(db, { puts: log.take() });
      }
    }
    // One more update not yet written when the fold runs: it is in the snapshot, not left as a log row.
    doc.getMap('m').set('last', 'in the snapshot');
    const fold = log.snapshot(doc);
    await writeSyncRows(db, { puts: [...fold.puts, ...log.take()], deletes: fold.deletes });
    expect(folds).toBe(1);
    const rows = await readSyncRows(db);
    expect(logRows(rows)).toEqual([]);
    const back = new Y.Doc();
    Y.applyUpdate(back, DocLog.fromRows(rows).doc!);
    expect(contents(back)).toEqual(contents(doc));

    // Going on from the rows: the next keys follow, and a reader gets every update.
    const { log: again } = DocLog.fromRows(rows);
    again.watch(back);
    back.getMap('m').set('after', 1);
    back.getMap('m').set('after', 2);
    await writeSyncRows(db, { puts: again.take() });
    const rows2 = await readSyncRows(db);
    expect(logRows(rows2)).toHaveLength(2);
    const third = new Y.Doc();
    Y.applyUpdate(third, DocLog.fromRows(rows2).doc!);
    expect(contents(third)).toEqual({ ...contents(doc), after: 2 });
    db.close();
  });
});
