// Merging an update from another device into the record document (docs/SYNC.md, "Engine"): the
// keys it touched, for the engine to write to the store, and what it brought counted as on the
// relay. No I/O: the engine (engine.ts) writes what this returns.
import * as Y from 'yjs';
import { BodyError } from './messages';
import { REMOTE, type RecordDoc, touchedBy } from './record-doc';
import type { Touched } from './record-kinds';
import { breathe, updateParts } from './update-parts';

/** An update larger than this is merged in parts (20,000 records in one made a task of 2.4 s). */
const LARGE = 64 * 1024;

/**
 * Merges `update` into `records` and returns the keys of the epoch `epoch` it touched, and whether
 * it deleted a record (whose words are then still in this device's log of the document). `sent`
 * (what the relay holds, per Yjs client) is raised to what the update brought. Throws BodyError
 * for what is not a Yjs update.
 */
export async function mergeUpdate(
  records: RecordDoc,
  update: Uint8Array,
  sent: Map<number, number>,
  epoch: string,
): Promise<{ touched: Touched; deleted: boolean }> {
  const touched: Touched = new Map();
  const listen = (tr: Y.Transaction) => {
    if (tr.origin !== REMOTE) return;
    for (const [kind, keys] of touchedBy(records, tr, epoch))
      keys.forEach((k) => (touched.get(kind) ?? touched.set(kind, new Set()).get(kind)!).add(k));
  };
  records.doc.on('afterTransaction', listen);
  try {
    await applyInParts(records.doc, update, sent);
  } finally {
    records.doc.off('afterTransaction', listen);
  }
  const deleted = [...touched].some(([kind, keys]) => [...keys].some((k) => !records.map(kind).has(k)));
  return { touched, deleted };
}

/**
 * Merges an update, a large one in parts with the page let breathe between them (update-parts.ts);
 * counts what it brought as on the relay (its end clocks: a state vector read from an update
 * that does not start at a client's first clock says 0 for that client).
 */
async function applyInParts(doc: Y.Doc, update: Uint8Array, sent: Map<number, number>): Promise<void> {
  const count = (u: Uint8Array) => {
    for (const [client, clock] of Y.parseUpdateMeta(u).to) if ((sent.get(client) ?? 0) < clock) sent.set(client, clock);
  };
  try {
    if (update.length <= LARGE) {
      Y.applyUpdate(doc, update, REMOTE);
      count(update);
      return;
    }
    try {
      for (const part of updateParts(update)) {
        Y.applyUpdate(doc, part, REMOTE);
        count(part);
        await breathe();
      }
    } catch {
      // A struct Tealeaf never writes: the update whole (merging again what was merged is a no-op).
      Y.applyUpdate(doc, update, REMOTE);
      count(update);
    }
  } catch (err) {
    throw new BodyError(`not a Yjs update (${(err as Error).message})`);
  }
}
