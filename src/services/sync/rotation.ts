// A key rotation this device makes (issue 30, defects 3 and 6; docs/SYNC.md, "Rotation"). The
// caller (key-change.ts) keeps the new key and its signed notice in a row first, so this runs again
// after a crash at any step.
import * as Y from 'yjs';
import type { Bytes } from './bytes';
import type { SyncEngine } from './engine';
import { Sealer } from './envelope';
import { type SyncKey, roomOf } from './keys';
import { KIND, gzip } from './messages';
import { RelayError } from './relay-client';

/**
 * This device rotates the key (to unpair a device, or for a new key): it reads the old room to
 * its end, uploads the whole document to the new key's room, posts the notice in the old one
 * (closing it at the relay), and reads the old room to its end again. The first notice in the old room's order wins: its
 * own moves it to the new room ('moved'); another device's, read first, moves it to that
 * device's room ('lost': the caller makes its change again there). Safe to run again after a
 * crash at any step (the caller keeps the key and the notice in a row before it starts): a
 * notice already posted is found on the way and not posted twice.
 */
export async function rekeyNow(e: SyncEngine, key: SyncKey, notice: Bytes): Promise<'moved' | 'lost'> {
  const room = await roomOf(key);
  if (room === e.room) return 'moved'; // finished already
  const sealer = await Sealer.of(key, room);
  const old = e.room;
  e.rotating = { key, notice };
  try {
    await e.inbox.readToEnd();
    if (e.room === old && !e.unpaired) {
      const uploaded = Y.decodeStateVector(Y.encodeStateVector(e.records.doc));
      await e.send(room, sealer, KIND.update, await gzip(Y.encodeStateAsUpdate(e.records.doc)));
      e.rotating.uploaded = uploaded;
      // The notice closes the old room: no holder of the old key (a device unpaired) can post,
      // compact or delete there after it. Refused as closed: another device's notice came first,
      // and the read below follows it.
      await e.send(old, e.sealer, KIND.rotation, notice, undefined, true).catch((err: unknown) => {
        if (!(err instanceof RelayError && err.reason === 'room-closed')) throw err;
      });
      await e.inbox.readToEnd();
    }
    if (e.room === old && !e.unpaired) throw new Error('The relay has not shown the new key’s notice yet: trying again.');
    return e.room === room ? 'moved' : 'lost';
  } finally {
    e.rotating = undefined;
  }
}
