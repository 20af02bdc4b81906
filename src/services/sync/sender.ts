// What this device posts to the relay (docs/SYNC.md, "Engine"): each message gets the next of
// this device's sequence numbers (used up before the post, so none is ever used twice) and names
// its previous one the relay took in the room; a payload too large for one message goes in
// pieces. It keeps what the relay holds of the document (`sent`), so only what it lacks is sent.
import * as Y from 'yjs';
import type { Bytes } from './bytes';
import type { Sealer } from './envelope';
import { KIND, encodeBody, encodeVector, gzip, toPieces } from './messages';
import type { SyncEngineOptions, SyncState } from './engine-types';

/** A compressed update larger than this goes in pieces (the relay takes at most 8 MiB a message). */
const PIECE = 4 * 1024 * 1024;

type SenderOptions = Pick<SyncEngineOptions, 'relay' | 'deviceId' | 'reserve' | 'pieceBytes'>;

export class Sender {
  /** This device's last sequence number used. */
  seq: number;
  /** This device's last message in this room that the relay took (the next one names it). */
  prev: number;
  /** What the relay has, per Yjs client: nothing below it needs sending. */
  sent: Map<number, number>;
  /** A local change not sent yet. Deletions move no clock, so the vector alone would miss them. */
  unsent: boolean;
  lastError: string | undefined;

  constructor(
    private readonly o: SenderOptions,
    private readonly doc: Y.Doc,
    saved?: Pick<SyncState, 'seq' | 'prev' | 'sent' | 'unsent'>,
  ) {
    this.seq = saved?.seq ?? 0;
    this.prev = saved?.prev ?? 0;
    this.sent = saved?.sent ? Y.decodeStateVector(saved.sent) : new Map();
    this.unsent = saved?.unsent ?? false;
  }

  /** What the engine's saved state keeps of it. */
  saved(): Pick<SyncState, 'seq' | 'prev' | 'sent' | 'unsent'> {
    return { seq: this.seq, prev: this.prev, sent: encodeVector(this.sent), unsent: this.unsent };
  }

  /** Whether local changes wait to be sent. */
  get pending(): boolean {
    if (this.unsent) return true;
    const now = Y.decodeStateVector(Y.encodeStateVector(this.doc));
    for (const [client, clock] of now) if (clock > (this.sent.get(client) ?? 0)) return true;
    return false;
  }

  /** The relay holds the document up to `vector` (a whole upload or snapshot taken), and nothing local waits. */
  allSent(vector: Map<number, number>): void {
    this.sent = new Map(vector);
    this.unsent = false;
  }

  /** Into another room: nothing posted there yet; `sent` is what it is known to hold. */
  movedRoom(sent: Map<number, number>): void {
    this.prev = 0;
    this.sent = new Map(sent);
    if (sent.size === 0) this.unsent = true;
  }

  /** Sends what the relay does not have yet, as one sealed update. False when nothing waits. */
  async pushUpdate(room: string, sealer: Sealer, cursor: number): Promise<boolean> {
    if (!this.pending) return false;
    const update = Y.encodeStateAsUpdate(this.doc, encodeVector(this.sent));
    const vector = Y.decodeStateVector(Y.encodeStateVector(this.doc));
    await this.post(room, sealer, KIND.update, await gzip(update), cursor);
    // Only now: a message the relay never took keeps its changes pending.
    for (const [client, clock] of vector) if ((this.sent.get(client) ?? 0) < clock) this.sent.set(client, clock);
    this.unsent = false;
    return true;
  }

  /**
   * Posts one payload, in pieces when it is larger than one message may be; `cursor` is where this
   * device has read the room to (undefined: a room it is not in, whose messages it names none of);
   * `compact` goes with the last piece, and so does `close` (a key change's notice: the relay takes
   * nothing after it in the room).
   */
  async post(room: string, sealer: Sealer, kind: number, payload: Bytes, cursor?: number, compact?: number, close = false): Promise<void> {
    const size = this.o.pieceBytes ?? PIECE;
    const bodies = payload.length > size ? toPieces(kind, payload, size).map((p) => ({ kind: KIND.piece, p })) : [{ kind, p: payload }];
    const here = cursor !== undefined;
    for (const [i, { kind: k, p }] of bodies.entries()) {
      // Used up before the post, kept first: a gap after a failed post is harmless, a reuse is not.
      const seq = ++this.seq;
      try {
        await this.o.reserve?.(seq);
        // A message names this device's last one the relay took in the room (none in a new room).
        const sealed = await sealer.seal(this.o.deviceId, seq, encodeBody(k, here ? this.prev : 0, cursor ?? 0, p));
        const isLast = i === bodies.length - 1;
        await this.o.relay.post(room, sealed, undefined, isLast ? compact : undefined, isLast && close);
      } catch (e) {
        this.lastError = (e as Error).message;
        throw e;
      }
      if (here) this.prev = seq;
    }
    this.lastError = undefined;
  }
}
