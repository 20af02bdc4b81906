// One device's sync (docs/SYNC.md, "Engine"): local writes go into the record document and out
// to the relay as sealed Yjs updates; sealed updates from the relay are opened, merged into the
// document and written to the store through the same `apply` as a local change. What a message
// means (its kinds, pieces, the relay's history) is decided in inbox.ts, which returns a step; the
// engine does it (the relay, the store, its caller's callbacks). Posting is sender.ts's, writing
// to the store store-writer.ts's. Compaction and a key rotation this device makes are here too:
// both read the room and post to it.
import * as Y from 'yjs';
import type { AppliedChange } from '../../ports';
import { type Bytes, equalBytes } from './bytes';
import { type EnvelopeError, Sealer } from './envelope';
import { type SyncKey, roomOf } from './keys';
import { BodyError, KIND, encodeSnapshot, gzip } from './messages';
import { type Epoch, REMOTE, RecordDoc, type Touched } from './record-doc';
import type { Quarantine, Quarantined } from './record-gate';
import type { SeqBook, SavedBook } from './seq-book';
import { inParts, storeAsChange } from './store-records';
import { StoreWriter } from './store-writer';
import { Sender } from './sender';
import { type Heard, Inbox, type HistoryNotes, type Step } from './inbox';
import { mergeUpdate } from './merge';
import { RelayError, type RelayMessage } from './relay-client';
import type { Refused, SyncEngineOptions, SyncState } from './engine-types';

export type { Refused, SyncEngineOptions, SyncState } from './engine-types';

export class SyncEngine {
  readonly records: RecordDoc;
  epoch: Epoch;
  private queue: Promise<unknown> = Promise.resolve();
  room: string;
  sealer: Sealer;
  readonly inbox: Inbox;
  /** Writes what was merged to the store. */
  private readonly writer: StoreWriter;
  /** Posts to the relay, and knows what it holds. */
  private readonly sender: Sender;
  /** A rotation this device started and has not finished: its own notice, read back, moves it. */
  rotating?: { key: SyncKey; notice: Bytes; uploaded?: Map<number, number> };
  /** Records deleted here since the relay was last compacted (`now`: a delete-all). */
  compactDue: false | 'soon' | 'now';
  /** A deletion whose words the document's log may still hold (here or merged): fold the log. */
  foldDue: boolean;
  /** This device was left out of a key rotation: it no longer syncs. */
  unpaired = false;
  /** When this device moved into the room in use by a key change (undefined: the first room, or joined here). */
  movedAt: number | undefined;
  refused = 0;

  constructor(readonly o: SyncEngineOptions) {
    const doc = new Y.Doc();
    if (o.state?.doc) Y.applyUpdate(doc, o.state.doc, REMOTE);
    this.records = new RecordDoc(doc, o.state?.epoch);
    this.epoch = o.state?.epoch ?? this.records.epoch;
    this.sender = new Sender(o, doc, o.state);
    doc.on('update', (_u: Uint8Array, origin: unknown) => {
      if (origin !== REMOTE) this.sender.unsent = true;
    });
    this.writer = new StoreWriter(this.records, o, o.state);
    this.compactDue = o.state?.compactDue ?? false;
    this.foldDue = o.state?.foldDue ?? false;
    this.unpaired = o.state?.unpaired ?? false;
    this.movedAt = o.state?.movedAt;
    if (o.state?.room !== undefined && o.state.room !== o.room) {
      throw new Error('The saved sync state belongs to another key: start with the key in use.');
    }
    this.room = o.room;
    this.sealer = o.sealer;
    this.inbox = new Inbox(o.state);
  }

  /** Per device, what was seen of its messages in this room (seq-book.ts). */
  get book(): SeqBook {
    return this.inbox.book;
  }

  /** The last relay position read. */
  get cursor(): number {
    return this.inbox.cursor;
  }

  get deviceId(): string {
    return this.o.deviceId;
  }

  /** This device's last sequence number used. */
  get lastSeq(): number {
    return this.sender.seq;
  }

  /** A number of this device's read back from the relay: used, whatever the saved state says. */
  bump(seq: number): void {
    this.sender.seq = Math.max(this.sender.seq, seq);
  }

  /** The last failure to post, cleared by the next post that worked. */
  get lastError(): string | undefined {
    return this.sender.lastError;
  }

  /** Records held back by the gate, the newest last. */
  get quarantined(): Quarantined[] {
    return this.quarantine.list();
  }

  get quarantine(): Quarantine {
    return this.writer.quarantine;
  }

  /** Devices whose messages this device has seen in this room (or that a snapshot read here covers). */
  get seenHere(): Set<string> {
    const b = this.book.saved();
    return new Set([...Object.keys(b.marks), ...Object.keys(b.recent ?? {}), this.deviceId]);
  }

  /** What the relay's history showed: messages missing, the relay gone back, messages out of order. */
  get history(): HistoryNotes {
    return this.inbox.notes;
  }

  /** The relay position read so far (the app's progress bar). */
  get position(): number {
    return this.cursor;
  }

  /**
   * A local write, stored already: into the document only. The one way a local write reaches
   * sync: the app's store leaves each write's synced part in the out-box, and the loop brings it
   * here (sync-rows.ts, `drainOutbox`); tests do the same (store, then this).
   */
  recordLocal(applied: AppliedChange): Promise<void> {
    return this.serial(async () => this.recorded(this.records.record(applied)));
  }

  /** A local change that deleted records: the relay is to be compacted, and the log folded. */
  private recorded(deleted: boolean): void {
    if (!deleted) return;
    this.foldDue = true;
    if (this.compactDue !== 'now') this.compactDue = 'soon';
  }

  /** What to persist now (after a pull or a push); without the document where the caller keeps it as a log. */
  state(withDoc = true): SyncState {
    return {
      ...this.inbox.book.saved(),
      cursor: this.inbox.cursor,
      ...this.sender.saved(),
      doc: withDoc ? (Y.encodeStateAsUpdate(this.records.doc) as Bytes) : undefined,
      epoch: this.epoch,
      unapplied: this.writer.saved(),
      partial: { ...this.inbox.partial },
      quarantine: this.quarantine.list(),
      history: this.inbox.notes,
      compactDue: this.compactDue,
      foldDue: this.foldDue,
      unpaired: this.unpaired || undefined,
      movedAt: this.movedAt,
      room: this.room,
    };
  }

  /** One at a time: a pull, a push and a local write never interleave their document edits. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Copies the whole store into the document and sends it (the first device turning sync on), in
   * parts of at most `part` records (500: each part opens and merges in well under 100 ms; SYNC.md), what others refer to first: a receiver writes each part
   * through `apply`, which leaves out a turn whose chat it has not got yet.
   */
  async adoptStore(part = 500, onProgress?: (done: number, total: number) => void): Promise<void> {
    const all = await storeAsChange(this.o.store);
    const pieces = [...inParts(all, part)];
    let online = true;
    for (const [i, piece] of pieces.entries()) {
      await this.serial(async () => this.records.record(piece));
      // The relay away: the rest is recorded all the same, and the loop sends it when it answers.
      if (online)
        online = await this.push().then(
          () => true,
          () => false,
        );
      onProgress?.(i + 1, pieces.length);
    }
  }

  /**
   * The store was written around the document (a backup import): what differs goes into the
   * document, in parts, so it reaches the other devices; `replace` also deletes there what the
   * store no longer holds.
   */
  async reconcile(replace: boolean, part = 500): Promise<void> {
    const diff = this.records.differences(await storeAsChange(this.o.store), replace);
    const { sessions, turns, memories, edges, segments, tombstones, ...deletes } = diff;
    for (const piece of inParts({ dropped: [], sessions, turns, memories, edges, segments, tombstones }, part)) {
      await this.serial(async () => this.recorded(this.records.record(piece)));
    }
    await this.serial(async () => this.recorded(this.records.record({ ...deletes, dropped: [] })));
  }

  /** Delete-all on this device: the caller has wiped the store; the document starts a new epoch. */
  deleteAll(now = Date.now()): Promise<Epoch> {
    return this.serial(async () => {
      this.compactDue = 'now';
      this.foldDue = true;
      return (this.epoch = this.records.reset(this.o.deviceId, now));
    });
  }

  /**
   * Compaction (docs/SYNC.md, "Deleting deletes in sync too"): the relay cannot read what it keeps,
   * so this device tells it what to drop. It reads the room to its end, then posts the whole
   * document as it is now (garbage-collected: what was deleted is no longer in it) with `compact`,
   * and the relay drops every message up to where it had read. A device paired later gets the
   * snapshot, not the history. Not while something is missing (holes, changes waiting on a lost
   * one): dropping those messages could lose what this device does not hold. True when done.
   */
  compact(): Promise<boolean> {
    return this.serial(async () => {
      await this.readToEnd();
      if (this.unpaired || this.book.missing().length > 0 || this.waiting) return false;
      const upTo = this.cursor;
      const vector = Y.decodeStateVector(Y.encodeStateVector(this.records.doc));
      const gz = await gzip(Y.encodeStateAsUpdate(this.records.doc));
      await this.send(this.room, this.sealer, KIND.snapshot, encodeSnapshot(this.bookForOthers(), gz), upTo);
      this.allSent(vector);
      this.compactDue = false;
      return true;
    });
  }

  /**
   * A key rotation this device makes (docs/SYNC.md, "Rotation"; to unpair a device, or for a new
   * key): it reads the old room to its end, uploads the whole document to the new key's room, posts
   * the notice in the old one (closing it at the relay), and reads the old room to its end again.
   * The first notice in the old room's order wins: its own moves it to the new room ('moved');
   * another device's, read first, moves it to that device's room ('lost': the caller makes its
   * change again there). The caller (key-change.ts) keeps the key and the notice in a row before it
   * starts, so this runs again after a crash at any step: a notice already posted is found on the
   * way and not posted twice.
   */
  rekey(key: SyncKey, notice: Bytes): Promise<'moved' | 'lost'> {
    return this.serial(async () => {
      const room = await roomOf(key);
      if (room === this.room) return 'moved'; // finished already
      const sealer = await Sealer.of(key, room);
      const old = this.room;
      this.rotating = { key, notice };
      try {
        await this.readToEnd();
        if (this.room === old && !this.unpaired) {
          const uploaded = Y.decodeStateVector(Y.encodeStateVector(this.records.doc));
          await this.send(room, sealer, KIND.update, await gzip(Y.encodeStateAsUpdate(this.records.doc)));
          this.rotating.uploaded = uploaded;
          // The notice closes the old room: no holder of the old key (a device unpaired) can post,
          // compact or delete there after it. Refused as closed: another device's notice came first,
          // and the read below follows it.
          await this.send(old, this.sealer, KIND.rotation, notice, undefined, true).catch((err: unknown) => {
            if (!(err instanceof RelayError && err.reason === 'room-closed')) throw err;
          });
          await this.readToEnd();
        }
        if (this.room === old && !this.unpaired) throw new Error('The relay has not shown the new key’s notice yet: trying again.');
        return this.room === room ? 'moved' : 'lost';
      } finally {
        this.rotating = undefined;
      }
    });
  }

  /** The relay holds the document up to `vector` (a whole upload or snapshot taken), and nothing local waits. */
  allSent(vector: Map<number, number>): void {
    this.sender.allSent(vector);
  }

  /** Whether local changes wait to be sent. */
  get pending(): boolean {
    return this.sender.pending;
  }

  /** Sends what the relay does not have yet, as one sealed update. Throws if the relay is away. */
  push(): Promise<boolean> {
    return this.serial(() => this.pushNow());
  }

  async pushNow(): Promise<boolean> {
    if (this.unpaired) throw new Error('This device was unpaired: it no longer syncs.');
    return this.sender.pushUpdate(this.room, this.sealer, this.cursor);
  }

  /** Posts one payload (sender.ts); in the room in use it names where this device has read to. */
  send(room: string, sealer: Sealer, kind: number, payload: Bytes, compact?: number, close = false): Promise<void> {
    return this.sender.post(room, sealer, kind, payload, room === this.room ? this.cursor : undefined, compact, close);
  }

  /** This device turns sync off: tells the others (best effort; the relay may be away). */
  leave(payload: Bytes = Uint8Array.of(0)): Promise<void> {
    return this.serial(() => this.send(this.room, this.sealer, KIND.left, payload));
  }

  /** Posts a change of the key ring (ring.ts) in the room. */
  postRing(payload: Bytes): Promise<void> {
    return this.serial(() => this.send(this.room, this.sealer, KIND.ring, payload));
  }

  /**
   * Into another room (a rotation): read from its start; `sent` is what it is known to hold (the
   * rotating device's upload). A device that follows another's rotation posts there once, even
   * with nothing new, so the others see it arrived (a ring member that never does is flagged).
   */
  moveTo(room: string, sealer: Sealer, sent: Map<number, number> = new Map()): void {
    this.room = room;
    this.sealer = sealer;
    this.sender.movedRoom(sent);
    this.movedAt = Date.now();
    this.inbox.movedRoom();
  }

  /** Reads, opens and applies everything the relay has after the cursor. Returns how many applied. */
  pull(): Promise<number> {
    return this.serial(async () => {
      if (this.writer.unapplied.size > 0) await this.catchUp(new Map());
      return this.readToEnd();
    });
  }

  /** Reads everything after the cursor, doing what each message means; then asks for what is missing. Returns how many applied. */
  private async readToEnd(): Promise<number> {
    let applied = 0;
    let closed: number | undefined;
    for (;;) {
      if (this.unpaired) break;
      const room = this.room;
      const read = await this.o.relay.read(room, this.cursor);
      const { messages, last } = read;
      closed = read.closed;
      if (messages.length === 0) {
        if (last >= this.cursor) break;
        this.inbox.wentBack(last);
        // What the relay holds is learnt again as it is read; what it lost is then sent again.
        this.sender.sent = new Map();
        continue;
      }
      for (const m of messages) {
        if (m.seq <= this.cursor) continue; // a position read already: nothing new can be there
        applied += await this.take(m);
        if (this.room !== room || this.unpaired) break; // moved to a new room, or left out
      }
    }
    // Read to the end of a closed room, still in it: its devices moved on by a key change this one
    // could not take. It stops (writes there are refused anyway) instead of saying "synced".
    if (this.inbox.endOfRead(closed, this.unpaired)) this.unpaired = true;
    if (!this.unpaired && this.inbox.shouldAsk(this.waiting, this.o.needEveryMs ?? 60_000)) {
      // Holes in the history, or changes waiting on one: ask the others for what this device lacks.
      await this.send(this.room, this.sealer, KIND.need, Y.encodeStateVector(this.records.doc) as Bytes);
    }
    return applied;
  }

  /** Changes merged that wait on one not merged yet (a lost message). */
  private get waiting(): boolean {
    const store = this.records.doc.store;
    return store.pendingStructs !== null || store.pendingDs !== null;
  }

  /** One message: the inbox says what it means, the engine does it. Returns 1 when it merged records. */
  private async take(m: RelayMessage): Promise<number> {
    const step = await this.inbox.read(m, this.sealer, this.deviceId);
    try {
      return await this.act(step);
    } catch (err) {
      // An authentic message that does not parse: refused for good, not read again and again.
      if (err instanceof BodyError && 'heard' in step) return this.act(this.inbox.malformed(step.heard, err));
      throw err;
    }
  }

  private async act(step: Step): Promise<number> {
    switch (step.do) {
      case 'nothing':
        return 0;
      case 'refuse':
        this.refuse(step.seq, step.error);
        return 0;
      case 'own': {
        // Its number was used, whatever the saved state says (a second guard beside `reserve`).
        this.bump(step.seq);
        // Its own rotation notice: the move it was making (or had made, before a crash) happens now.
        const r = this.rotating;
        if (step.rotation && r && equalBytes(step.rotation, r.notice)) {
          const room = await roomOf(r.key);
          this.moveTo(room, await Sealer.of(r.key, room), r.uploaded);
        }
        return 0;
      }
      case 'merge':
        return this.merge(step.heard, step.update, step.covers);
      case 'rotation':
        return this.followRotation(step.heard, step.notice);
      case 'left':
      case 'ring': {
        const { heard, payload } = step;
        const said = step.do === 'left' ? await this.o.onLeft?.(heard.from, payload) : await this.o.onRing?.(payload, heard.from);
        this.inbox.done(heard);
        return said ? this.act(this.inbox.forged(heard, said.refused)) : 0;
      }
      case 'answer': {
        let diff: Uint8Array;
        try {
          diff = Y.encodeStateAsUpdate(this.records.doc, step.vector);
        } catch {
          throw new BodyError('a request with a malformed state vector');
        }
        this.inbox.done(step.heard);
        // What this device has that the asker lacks, with what it has seen (the asker's holes close).
        await this.send(this.room, this.sealer, KIND.snapshot, encodeSnapshot(this.bookForOthers(), await gzip(diff)));
        return 0;
      }
    }
  }

  /** Merges an update (or a snapshot's), then writes what it touched with the state that goes with it. */
  private async merge(heard: Heard, update: Uint8Array, covers?: SavedBook): Promise<number> {
    const before = this.epoch.id;
    const { touched, deleted } = await mergeUpdate(this.records, update, this.sender.sent, before);
    if (covers) this.book.cover(covers);
    // A record deleted elsewhere: its words are still in this device's log of the document.
    if (deleted) this.foldDue = true;
    const now = this.records.epoch;
    if (now.id !== before) {
      // Asked first: an answer not given (sync turned off) leaves the message unread.
      const choice = await this.writer.askReset(now);
      this.inbox.done(heard);
      await this.resetTo(now, choice);
      return 1;
    }
    this.inbox.done(heard);
    await this.catchUp(touched, heard.from);
    return 1;
  }

  /**
   * Another device's key change (docs/SYNC.md, "Which key change counts"): the rest of the room is
   * read first, for where the relay closed it and for the other key changes in it; the caller
   * (`onRotation`) says whether this device takes it.
   */
  private async followRotation(heard: Heard, notice: Bytes): Promise<number> {
    const later: Bytes[] = [];
    let closed: number | undefined;
    for (let after = heard.m.seq; ;) {
      const read = await this.o.relay.read(this.room, after);
      closed = read.closed;
      if (read.messages.length === 0) break;
      for (const m of read.messages) after = Math.max(after, m.seq);
      later.push(...(await Inbox.rotationsIn(read.messages, this.sealer, notice)));
    }
    const question = this.inbox.rotationQuestion(heard, closed, later);
    const key = 'refused' in question ? question : ((await this.o.onRotation?.(notice, question.others)) ?? 'unpaired');
    this.inbox.done(heard);
    if (typeof key === 'object' && 'refused' in key)
      return this.act(this.inbox.rotationRefused(heard, key.refused, (key as Refused).conflict));
    if (key === 'unpaired') this.unpaired = true;
    else if (key.id !== this.sealer.key.id) {
      const room = await roomOf(key);
      this.moveTo(room, await Sealer.of(key, room));
    }
    return 0;
  }

  /** What this device has seen, its own messages included (it holds all of them). */
  bookForOthers(): SavedBook {
    return this.inbox.bookFor(this.deviceId, this.sender.seq);
  }

  /** Writes the touched keys, and what a failed write left, to the store (store-writer.ts). */
  catchUp(touched: Touched, from?: string): Promise<void> {
    return this.writer.catchUp(touched, from);
  }

  /** Follows another device's delete-all: its epoch from now on, this device's data wiped or kept. */
  async resetTo(epoch: Epoch, choice: 'wipe' | 'keep'): Promise<void> {
    this.epoch = epoch;
    this.foldDue = true;
    await this.writer.reset(choice);
  }

  /** Counts and reports a refused message. */
  refuse(seq: number, error: EnvelopeError): void {
    this.refused++;
    this.o.onRefused?.(seq, error);
  }
}
