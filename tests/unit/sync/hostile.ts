// A device that holds the sync key and posts what it likes (a stolen or buggy device, or a newer
// version): Yjs updates written straight into the record document's maps, sealed like any message.
import * as Y from 'yjs';
import type { Bytes } from '../../../src/services/sync/bytes';
import { Sealer } from '../../../src/services/sync/envelope';
import { keyFromRaw, roomOf } from '../../../src/services/sync/keys';
import { RelayClient } from '../../../src/services/sync/relay-client';
import { KIND, decodeBody, decodeSnapshot, encodeBody, readPiece } from '../../../src/services/sync/messages';
import type { SyncConfig } from '../../../src/services/sync/sync-service';
import type { TealeafDb } from '../../../src/store/db';
import { readSyncRow } from '../../../src/store/sync-store';

async function pipe(b: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Bytes> {
  const out = new Response(new Blob([b as Bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}
const gzip = (b: Uint8Array) => pipe(b, new CompressionStream('gzip'));
const gunzip = (b: Uint8Array) => pipe(b, new DecompressionStream('gzip'));

/** Posts as `deviceId` with the key a paired device keeps in `db`. */
export async function keyHolder(db: TealeafDb, relayUrl: string, deviceId = 'e'.repeat(32)) {
  const config = (await readSyncRow(db, 'config')) as SyncConfig;
  const key = await keyFromRaw(config.key.raw, config.key.createdAt);
  const room = await roomOf(key);
  const sealer = await Sealer.of(key, room);
  const relay = new RelayClient(relayUrl);
  const doc = new Y.Doc();
  let seq = 0;
  return {
    room,
    sealer,
    relay,
    doc,
    /** A message of any kind (its first byte) as the next of this device's numbers. */
    post: async (kind: number, payload: Bytes, at = ++seq) =>
      relay.post(room, await sealer.seal(deviceId, at, encodeBody(kind, at - 1, 0, payload))),
    /** Every message of the room opened: what the relay would hand a device paired now, in plain bytes. */
    plaintexts: async (): Promise<Buffer> => {
      const out: Uint8Array[] = [];
      for (const m of (await relay.read(room, 0, 10_000)).messages) {
        const opened = await sealer.open(m.bytes).catch(() => undefined);
        if (!opened) continue;
        const body = decodeBody(opened.plaintext, opened.version);
        if (body.kind === KIND.update) out.push(await gunzip(body.payload));
        else if (body.kind === KIND.snapshot) out.push(await gunzip(decodeSnapshot(body.payload).gz));
        else if (body.kind === KIND.piece) out.push(readPiece(body.payload).chunk);
        else out.push(body.payload);
      }
      return Buffer.concat(out);
    },
    /** Reads the room into its document first, so what it writes next wins over what is there. */
    read: async () => {
      for (const m of (await relay.read(room, 0)).messages) {
        const opened = await sealer.open(m.bytes).catch(() => undefined);
        const body = opened && decodeBody(opened.plaintext, opened.version);
        if (body?.kind === KIND.update) Y.applyUpdate(doc, await gunzip(body.payload));
      }
    },
    /** Writes `values` (map name -> key -> value) into its document and posts that update. */
    write: async (values: Record<string, Record<string, unknown>>) => {
      let update: Uint8Array | undefined;
      const grab = (u: Uint8Array) => (update = u);
      doc.on('update', grab);
      doc.transact(() => {
        for (const [name, entries] of Object.entries(values)) {
          for (const [k, v] of Object.entries(entries)) doc.getMap(name).set(k, v);
        }
      });
      doc.off('update', grab);
      const at = ++seq;
      return relay.post(room, await sealer.seal(deviceId, at, encodeBody(KIND.update, at - 1, 0, await gzip(update!))));
    },
  };
}
