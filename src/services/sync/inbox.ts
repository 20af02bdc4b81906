// Reading the room (docs/SYNC.md, "The relay's history"): each message is opened, checked against
// what this device knows of the room, and handed to what its kind means. The relay is hostile
// input: it may drop, swap, withhold or replay messages, or come back from a restart empty or
// from an older copy. What it did is kept in words (`HistoryNotes`) and never stops what comes
// after: a swapped message still applies, a dropped one is asked for again (`need`), a relay that
// went back is read again from its start and sent what it lost.
import * as Y from 'yjs';
import { type Bytes, concat, equalBytes } from './bytes';
import { EnvelopeError, type OpenFailure, type Opened, Sealer } from './envelope';
import type { SyncEngine } from './engine';
import { roomOf } from './keys';
import { type Body, BodyError, KIND, decodeBody, decodeSnapshot, encodeSnapshot, gunzip, gzip, readPiece } from './messages';
import { REMOTE, type Touched, touchedBy } from './record-doc';
import { breathe, updateParts } from './update-parts';
import type { RelayMessage } from './relay-client';
import type { SavedBook } from './seq-book';

/** What the relay's history showed that it should not have. Kept with the state. */
export interface HistoryNotes {
  /** The relay had fewer messages than this device had read (restarted empty, restored from an older copy). */
  behind?: { had: number; now: number; at: number };
  /** Messages placed before what their sender had read when it posted them: the relay reordered. */
  reordered?: number;
  /** Messages refused, by reason. */
  refused?: Partial<Record<Refusal, number>>;
  /** The last refusal, in words. */
  lastRefused?: { reason: Refusal; why: string; at: number };
  /** When this device last asked the others for what it lacks. */
  needAt?: number;
  /** Key changes of this room this device refused: a later one whose maker they removed is refused too. */
  rotations?: Bytes[];
  /** This device read to the end of a room a key change closed (or whose key changes removed each
   * other's makers) without a key change it could take: it stopped there, and says why. */
  leftBehind?: { why: string; at: number };
}

/** Refused key changes kept per room: a relay that posts many fills no memory past this. */
const MAX_ROTATIONS = 8;

export type Refusal = OpenFailure;

/** An update larger than this is merged in parts (20,000 records in one made a task of 2.4 s). */
const LARGE = 64 * 1024;

/** Kinds whose repeat changes nothing (a merge): read again when the relay went back. */
const IDEMPOTENT = new Set<number>([KIND.update, KIND.piece, KIND.snapshot]);

export class Inbox {
  notes: HistoryNotes;
  /** Reading again from the start after the relay went back: what was seen is merged again, quietly. */
  private recovering = false;
  /** A key change refused in this read because another removed its maker: this device follows neither. */
  private conflict: string | undefined;

  constructor(
    private readonly e: SyncEngine,
    saved?: HistoryNotes,
  ) {
    this.notes = { ...saved };
  }

  /** A new room: what was noted of the old one's history goes with it. */
  movedRoom(): void {
    this.notes = {};
    this.recovering = false;
    this.conflict = undefined;
  }

  /** Reads everything after the cursor, applying it; then asks for what is missing. Returns how many applied. */
  async readToEnd(): Promise<number> {
    const e = this.e;
    let applied = 0;
    let closed: number | undefined;
    for (;;) {
      if (e.unpaired) break;
      const room = e.room;
      const read = await e.o.relay.read(room, e.cursor);
      const { messages, last } = read;
      closed = read.closed;
      if (messages.length === 0) {
        if (last >= e.cursor) break;
        this.wentBack(last);
        continue;
      }
      for (const m of messages) {
        if (m.seq <= e.cursor) continue; // a position read already: nothing new can be there
        applied += await this.take(m);
        if (e.room !== room || e.unpaired) break; // moved to a new room, or left out
      }
    }
    this.recovering = false;
    // Read to the end of a closed room, still in it: its devices moved on by a key change this one
    // could not take. It stops (writes there are refused anyway) instead of saying "synced".
    if (!e.unpaired && ((closed !== undefined && e.cursor >= closed) || this.conflict)) {
      const why = this.conflict ?? this.notes.lastRefused?.why ?? 'the key change that closed the room is missing';
      this.notes.leftBehind = { why, at: Date.now() };
      e.unpaired = true;
    }
    this.conflict = undefined;
    if (!e.unpaired) await this.askForMissing();
    return applied;
  }

  /**
   * What decides a key change read at `at` (docs/SYNC.md, "Which key change counts"): the rest of
   * the room is read first, for where the relay closed it and for the other key changes in it.
   */
  private async rotationsAfter(at: number, payload: Bytes): Promise<{ closed?: number; later: Bytes[] }> {
    const e = this.e;
    const later: Bytes[] = [];
    let closed: number | undefined;
    for (let after = at; ;) {
      const read = await e.o.relay.read(e.room, after);
      closed = read.closed;
      if (read.messages.length === 0) break;
      for (const m of read.messages) {
        after = Math.max(after, m.seq);
        try {
          const opened = await e.sealer.open(m.bytes);
          const body = decodeBody(opened.plaintext, opened.version);
          if (body.kind === KIND.rotation && !equalBytes(body.payload, payload)) later.push(body.payload);
        } catch {
          // Not readable here: it is refused in its turn, and decides nothing.
        }
      }
    }
    return { closed, later };
  }

  /** The relay has fewer messages than were read: read it again from its start, and send what it lost. */
  private wentBack(last: number): void {
    const e = this.e;
    this.notes.behind = { had: e.cursor, now: last, at: Date.now() };
    e.cursor = 0;
    e.partial = {};
    // What the relay holds is learnt again as it is read; what it lost is then sent again.
    e.sent = new Map();
    this.recovering = true;
  }

  private async take(m: RelayMessage): Promise<number> {
    const e = this.e;
    let opened: Opened;
    let body: Body;
    try {
      opened = await e.sealer.open(m.bytes);
      body = decodeBody(opened.plaintext, opened.version);
    } catch (err) {
      if (err instanceof EnvelopeError) return this.refuse(m, err);
      if (err instanceof BodyError) return this.refuse(m, new EnvelopeError('malformed', err.message));
      throw err;
    }
    const { deviceId: from, seq } = opened;
    // A message cannot sit before what its sender had read when it posted it.
    if (body.head !== undefined && body.head >= m.seq) this.notes.reordered = (this.notes.reordered ?? 0) + 1;
    if (from === e.deviceId) return this.own(m, seq, body);
    if (e.book.seen(from, seq) && !(this.recovering && IDEMPOTENT.has(body.kind))) {
      if (this.recovering) {
        e.cursor = m.seq;
        return 0;
      }
      return this.refuse(m, new EnvelopeError('replayed', `message ${seq} of device ${from.slice(0, 8)} was seen before`));
    }
    try {
      return await this.dispatch(m, from, seq, body);
    } catch (err) {
      // An authentic message that does not parse: refused for good, not read again and again.
      if (err instanceof BodyError) {
        this.done(m, from, seq, body);
        return this.refuse(m, new EnvelopeError('malformed', err.message));
      }
      throw err;
    }
  }

  private refuse(m: RelayMessage, err: EnvelopeError): number {
    const e = this.e;
    e.cursor = m.seq;
    const refused = (this.notes.refused ??= {});
    refused[err.reason] = (refused[err.reason] ?? 0) + 1;
    this.notes.lastRefused = { reason: err.reason, why: err.message, at: Date.now() };
    e.refuse(m.seq, err);
    return 0;
  }

  /** Marks a message processed: after it did what it means, with the state written next. */
  private done(m: RelayMessage, from: string, seq: number, body: Body): void {
    this.e.book.mark(from, seq, body.prev);
    this.e.cursor = m.seq;
  }

  private async dispatch(m: RelayMessage, from: string, seq: number, body: Body): Promise<number> {
    const e = this.e;
    switch (body.kind) {
      case KIND.piece: {
        const piece = readPiece(body.payload);
        const have = piece.index === 0 ? [] : (e.partial[from] ?? []);
        // A piece out of order (a lost start): nothing to join it to.
        if (have.length === piece.index) {
          have.push(piece.chunk);
          e.partial[from] = have;
        }
        if (have.length < piece.count || piece.index + 1 !== piece.count) {
          this.done(m, from, seq, body);
          return 0;
        }
        delete e.partial[from];
        return this.dispatch(m, from, seq, { ...body, kind: piece.kind, payload: concat(...have) });
      }
      case KIND.update:
        return this.merge(m, from, seq, body, await gunzip(body.payload));
      case KIND.snapshot: {
        const { book, gz } = decodeSnapshot(body.payload);
        return this.merge(m, from, seq, body, await gunzip(gz), book);
      }
      case KIND.rotation: {
        const { closed, later } = await this.rotationsAfter(m.seq, body.payload);
        // In a closed room the notice it was closed with decides; elsewhere (an older relay) every
        // other key change seen in the room may refuse this one.
        const key =
          closed !== undefined && closed !== m.seq
            ? { refused: 'a new key the relay did not close this room with: another key change closed it' }
            : ((await e.o.onRotation?.(body.payload, closed === m.seq ? [] : [...(this.notes.rotations ?? []), ...later])) ?? 'unpaired');
        this.done(m, from, seq, body);
        if (typeof key === 'object' && 'refused' in key) {
          this.notes.rotations = [...(this.notes.rotations ?? []), body.payload].slice(-MAX_ROTATIONS);
          if ('conflict' in key && key.conflict) this.conflict = key.refused;
          return this.refuse(m, new EnvelopeError('forged', key.refused));
        }
        if (key === 'unpaired') e.unpaired = true;
        else if (key.id !== e.sealer.key.id) {
          const room = await roomOf(key);
          e.moveTo(room, await Sealer.of(key, room));
        }
        return 0;
      }
      case KIND.left:
      case KIND.ring: {
        const said = body.kind === KIND.left ? await e.o.onLeft?.(from, body.payload) : await e.o.onRing?.(body.payload, from);
        this.done(m, from, seq, body);
        if (said) return this.refuse(m, new EnvelopeError('forged', said.refused));
        return 0;
      }
      case KIND.need: {
        let diff: Uint8Array;
        try {
          diff = Y.encodeStateAsUpdate(e.records.doc, body.payload);
        } catch {
          throw new BodyError('a request with a malformed state vector');
        }
        this.done(m, from, seq, body);
        // What this device has that the asker lacks, with what it has seen (the asker's holes close).
        await e.send(e.room, e.sealer, KIND.snapshot, encodeSnapshot(this.bookForOthers(), await gzip(diff)));
        return 0;
      }
      default:
        // A kind from a newer version: nothing this one can do with it.
        throw new BodyError(`a message of an unknown kind (${body.kind})`);
    }
  }

  /** What this device has seen, its own messages included (it holds all of them). */
  bookForOthers(): SavedBook {
    const b = this.e.book.saved();
    return { ...b, marks: { ...b.marks, [this.e.deviceId]: this.e.lastSeq } };
  }

  /** Merges an update (or a snapshot's), then writes what it touched with the state that goes with it. */
  private async merge(m: RelayMessage, from: string, seq: number, body: Body, update: Uint8Array, covers?: SavedBook): Promise<number> {
    const e = this.e;
    const before = e.epoch.id;
    const touched: Touched = new Map();
    const listen = (tr: Y.Transaction) => {
      if (tr.origin !== REMOTE) return;
      for (const [kind, keys] of touchedBy(e.records, tr, before))
        keys.forEach((k) => (touched.get(kind) ?? touched.set(kind, new Set()).get(kind)!).add(k));
    };
    e.records.doc.on('afterTransaction', listen);
    try {
      await this.apply(update);
    } finally {
      e.records.doc.off('afterTransaction', listen);
    }
    if (covers) e.book.cover(covers);
    // A record deleted elsewhere: its words are still in this device's log of the document.
    if ([...touched].some(([kind, keys]) => [...keys].some((k) => !e.records.map(kind).has(k)))) e.foldDue = true;
    const now = e.records.epoch;
    if (now.id !== before) {
      // Asked first: an answer not given (sync turned off) leaves the message unread.
      const choice = await e.askReset(now);
      this.done(m, from, seq, body);
      await e.resetTo(now, choice);
      return 1;
    }
    this.done(m, from, seq, body);
    await e.catchUp(touched, from);
    return 1;
  }

  /**
   * Merges an update, a large one in parts with the page let breathe between them (update-parts.ts);
   * counts what it brought as on the relay (its end clocks: a state vector read from an update
   * that does not start at a client's first clock says 0 for that client).
   */
  private async apply(update: Uint8Array): Promise<void> {
    const e = this.e;
    const sent = (u: Uint8Array) => {
      for (const [client, clock] of Y.parseUpdateMeta(u).to) if ((e.sent.get(client) ?? 0) < clock) e.sent.set(client, clock);
    };
    try {
      if (update.length <= LARGE) {
        Y.applyUpdate(e.records.doc, update, REMOTE);
        sent(update);
        return;
      }
      try {
        for (const part of updateParts(update)) {
          Y.applyUpdate(e.records.doc, part, REMOTE);
          sent(part);
          await breathe();
        }
      } catch {
        // A struct Tealeaf never writes: the update whole (merging again what was merged is a no-op).
        Y.applyUpdate(e.records.doc, update, REMOTE);
        sent(update);
      }
    } catch (err) {
      throw new BodyError(`not a Yjs update (${(err as Error).message})`);
    }
  }

  /** This device's own message, read back. */
  private async own(m: RelayMessage, seq: number, body: Body): Promise<number> {
    const e = this.e;
    // Its number was used, whatever the saved state says (a second guard beside `reserve`).
    e.bump(seq);
    e.cursor = m.seq;
    // Its own rotation notice: the move it was making (or had made, before a crash) happens now.
    const r = e.rotating;
    if (body.kind === KIND.rotation && r && equalBytes(body.payload, r.notice)) {
      const room = await roomOf(r.key);
      e.moveTo(room, await Sealer.of(r.key, room), r.uploaded);
    }
    return 0;
  }

  /** Holes in the history, or changes waiting on one: ask the others for what this device lacks. */
  private async askForMissing(): Promise<void> {
    const e = this.e;
    const store = e.records.doc.store;
    if (e.book.missing().length === 0 && store.pendingStructs === null && store.pendingDs === null) return;
    const every = e.o.needEveryMs ?? 60_000;
    if (this.notes.needAt !== undefined && Date.now() - this.notes.needAt < every) return;
    this.notes.needAt = Date.now();
    await e.send(e.room, e.sealer, KIND.need, Y.encodeStateVector(e.records.doc) as Bytes);
  }
}
