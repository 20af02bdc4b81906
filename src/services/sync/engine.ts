// One device's sync (docs/SYNC.md, "Engine"): local writes go into the record document and out
// to the relay as sealed Yjs updates; sealed updates from the relay are opened, merged into the
// document and written to the store through the same `apply` as a local change. What a message
// means (its kinds, pieces, the relay's history) is read in inbox.ts.
import * as Y from 'yjs';
import type { AppliedChange, ChangeSet, Repository } from '../../ports';
import type { Bytes } from './bytes';
import { type EnvelopeError, Sealer } from './envelope';
import type { SyncKey } from './keys';
import { KIND, encodeBody, encodeVector, gzip, toPieces } from './messages';
import { type Admit, type Epoch, type Kind, REMOTE, RecordDoc, type Touched } from './record-doc';
import { Quarantine, type Quarantined } from './record-gate';
import { SeqBook } from './seq-book';
import { inParts, storeAsChange } from './store-records';
import { Inbox, type HistoryNotes } from './inbox';
import type { SyncEngineOptions, SyncState } from './engine-types';
import { compactNow } from './compaction';
import { rekeyNow } from './rotation';
import { PART, inKeyParts, unionOf } from './touched';
import { breathe } from './update-parts';

export type { Refused, SyncEngineOptions, SyncState } from './engine-types';

/** A compressed update larger than this goes in pieces (the relay takes at most 8 MiB a message). */
const PIECE = 4 * 1024 * 1024;

export class SyncEngine implements Repository {
  readonly records: RecordDoc;
  /** Per device, what was seen of its messages in this room (seq-book.ts). */
  book: SeqBook;
  cursor: number;
  private seq: number;
  private prev: number;
  epoch: Epoch;
  /** What the relay has, per Yjs client: nothing below it needs sending. */
  sent: Map<number, number>;
  private unsent: boolean;
  private queue: Promise<unknown> = Promise.resolve();
  unapplied: Touched;
  partial: Record<string, Bytes[]>;
  room: string;
  sealer: Sealer;
  readonly quarantine: Quarantine;
  readonly inbox: Inbox;
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
  lastError: string | undefined;
  lastSyncAt: number | undefined;

  constructor(readonly o: SyncEngineOptions) {
    const doc = new Y.Doc();
    if (o.state?.doc) Y.applyUpdate(doc, o.state.doc, REMOTE);
    this.records = new RecordDoc(doc, o.state?.epoch);
    this.book = new SeqBook(o.state ?? { marks: {} });
    this.cursor = o.state?.cursor ?? 0;
    this.seq = o.state?.seq ?? 0;
    this.prev = o.state?.prev ?? 0;
    this.epoch = o.state?.epoch ?? this.records.epoch;
    this.sent = o.state?.sent ? Y.decodeStateVector(o.state.sent) : new Map();
    this.unsent = o.state?.unsent ?? false;
    doc.on('update', (_u: Uint8Array, origin: unknown) => {
      if (origin !== REMOTE) this.unsent = true;
    });
    this.unapplied = new Map((o.state?.unapplied ?? []).map(([k, ids]) => [k as Kind, new Set(ids)]));
    this.partial = { ...(o.state?.partial ?? {}) };
    this.quarantine = new Quarantine(o.state?.quarantine);
    this.compactDue = o.state?.compactDue ?? false;
    this.foldDue = o.state?.foldDue ?? false;
    this.unpaired = o.state?.unpaired ?? false;
    this.movedAt = o.state?.movedAt;
    if (o.state?.room !== undefined && o.state.room !== o.room) {
      throw new Error('The saved sync state belongs to another key: start with the key in use.');
    }
    this.room = o.room;
    this.sealer = o.sealer;
    this.inbox = new Inbox(this, o.state?.history);
  }

  get deviceId(): string {
    return this.o.deviceId;
  }

  /** This device's last sequence number used. */
  get lastSeq(): number {
    return this.seq;
  }

  /** A number of this device's read back from the relay: used, whatever the saved state says. */
  bump(seq: number): void {
    this.seq = Math.max(this.seq, seq);
  }

  /** Records held back by the gate, the newest last. */
  get quarantined(): Quarantined[] {
    return this.quarantine.list();
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

  /** A local write another path already stored (the app's out-box): into the document only. */
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
      ...this.book.saved(),
      cursor: this.cursor,
      seq: this.seq,
      prev: this.prev,
      doc: withDoc ? (Y.encodeStateAsUpdate(this.records.doc) as Bytes) : undefined,
      sent: encodeVector(this.sent),
      unsent: this.unsent,
      epoch: this.epoch,
      unapplied: [...this.unapplied].map(([k, ids]) => [k, [...ids]]),
      partial: { ...this.partial },
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

  // The Repository: writes go to the store and into the document; reads go to the store.
  apply(change: ChangeSet): Promise<AppliedChange> {
    return this.serial(async () => {
      const applied = await this.o.store.apply(change);
      this.recorded(this.records.record(applied));
      return applied;
    });
  }
  getSession: Repository['getSession'] = (id) => this.o.store.getSession(id);
  listSessions: Repository['listSessions'] = () => this.o.store.listSessions();
  listTurns: Repository['listTurns'] = (id) => this.o.store.listTurns(id);
  getTurns: Repository['getTurns'] = (ids) => this.o.store.getTurns(ids);
  getMemory: Repository['getMemory'] = (id) => this.o.store.getMemory(id);
  listMemories: Repository['listMemories'] = () => this.o.store.listMemories();
  listEdges: Repository['listEdges'] = () => this.o.store.listEdges();
  listSegments: Repository['listSegments'] = () => this.o.store.listSegments();
  listSegmentsBySession: Repository['listSegmentsBySession'] = (id) => this.o.store.listSegmentsBySession(id);
  listVectors: Repository['listVectors'] = (m) => this.o.store.listVectors(m);
  listVectorsOfUnit: Repository['listVectorsOfUnit'] = (id) => this.o.store.listVectorsOfUnit(id);
  getJob: Repository['getJob'] = (id) => this.o.store.getJob(id);
  listJobs: Repository['listJobs'] = () => this.o.store.listJobs();
  listTombstones: Repository['listTombstones'] = (k) => this.o.store.listTombstones(k);
  getSetting: Repository['getSetting'] = (k) => this.o.store.getSetting(k);
  putSetting: Repository['putSetting'] = (k, v) => this.o.store.putSetting(k, v);
  updateSetting: Repository['updateSetting'] = (k, fn) => this.o.store.updateSetting(k, fn);

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

  /** Compaction (compaction.ts): the relay drops what came before a snapshot of the document as it is. */
  compact(): Promise<boolean> {
    return this.serial(() => compactNow(this));
  }

  /** A key rotation this device makes (rotation.ts): 'moved' to its own new room, or 'lost' to another device's. */
  rekey(key: SyncKey, notice: Bytes): Promise<'moved' | 'lost'> {
    return this.serial(() => rekeyNow(this, key, notice));
  }

  /** The relay holds the document up to `vector` (a whole upload or snapshot taken), and nothing local waits. */
  allSent(vector: Map<number, number>): void {
    this.sent = new Map(vector);
    this.unsent = false;
  }

  /** Whether local changes wait to be sent. */
  get pending(): boolean {
    if (this.unsent) return true;
    const now = Y.decodeStateVector(Y.encodeStateVector(this.records.doc));
    for (const [client, clock] of now) if (clock > (this.sent.get(client) ?? 0)) return true;
    return false;
  }

  /** Sends what the relay does not have yet, as one sealed update. Throws if the relay is away. */
  push(): Promise<boolean> {
    return this.serial(() => this.pushNow());
  }

  async pushNow(): Promise<boolean> {
    if (this.unpaired) throw new Error('This device was unpaired: it no longer syncs.');
    if (!this.pending) return false;
    const update = Y.encodeStateAsUpdate(this.records.doc, encodeVector(this.sent));
    const vector = Y.decodeStateVector(Y.encodeStateVector(this.records.doc));
    await this.send(this.room, this.sealer, KIND.update, await gzip(update));
    // Only now: a message the relay never took keeps its changes pending.
    for (const [client, clock] of vector) if ((this.sent.get(client) ?? 0) < clock) this.sent.set(client, clock);
    this.unsent = false;
    return true;
  }

  /**
   * Posts one payload, in pieces when it is larger than one message may be; `compact` goes with the
   * last, and so does `close` (a key change's notice: the relay takes nothing after it in the room).
   */
  async send(room: string, sealer: Sealer, kind: number, payload: Bytes, compact?: number, close = false): Promise<void> {
    const size = this.o.pieceBytes ?? PIECE;
    const bodies = payload.length > size ? toPieces(kind, payload, size).map((p) => ({ kind: KIND.piece, p })) : [{ kind, p: payload }];
    const here = room === this.room;
    for (const [i, { kind: k, p }] of bodies.entries()) {
      // Used up before the post, kept first: a gap after a failed post is harmless, a reuse is not.
      const seq = ++this.seq;
      try {
        await this.o.reserve?.(seq);
        // A message names this device's last one the relay took in the room (none in a new room).
        const sealed = await sealer.seal(this.o.deviceId, seq, encodeBody(k, here ? this.prev : 0, here ? this.cursor : 0, p));
        const isLast = i === bodies.length - 1;
        await this.o.relay.post(room, sealed, undefined, isLast ? compact : undefined, isLast && close);
      } catch (e) {
        this.lastError = (e as Error).message;
        throw e;
      }
      if (here) this.prev = seq;
    }
    this.lastError = undefined;
    this.lastSyncAt = Date.now();
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
    this.cursor = 0;
    this.prev = 0;
    this.partial = {};
    this.sent = new Map(sent);
    if (sent.size === 0) this.unsent = true;
    this.movedAt = Date.now();
    // Marks are per room: the room and key are in every message's authenticated data, so nothing
    // of the old room replays into the new one.
    this.book = new SeqBook();
    this.inbox.movedRoom();
  }

  /** Reads, opens and applies everything the relay has after the cursor. Returns how many applied. */
  pull(): Promise<number> {
    return this.serial(async () => {
      if (this.unapplied.size > 0) await this.catchUp(new Map());
      const applied = await this.inbox.readToEnd();
      this.lastSyncAt = Date.now();
      return applied;
    });
  }

  /**
   * Writes the touched keys (and any left from a failed write) to the store through `apply`, in
   * parts of at most PART records (what others refer to first), letting the page breathe between
   * them. Each part's write keeps the state with what is still left to write, so a tab closed
   * half-way resumes with the rest.
   */
  async catchUp(touched: Touched, from?: string): Promise<void> {
    const keys: Touched = this.unapplied;
    for (const [kind, ids] of touched) {
      const set = keys.get(kind) ?? new Set<string>();
      ids.forEach((id) => set.add(id));
      keys.set(kind, set);
    }
    const parts = inKeyParts(keys, PART);
    for (let i = 0; i < parts.length; i++) {
      // Out of `unapplied` while written: the state saved with the records lists only the rest.
      this.unapplied = unionOf(parts.slice(i + 1));
      try {
        await this.o.store.apply(await this.records.changeFor(parts[i], this.o.store, this.gate(from)));
      } catch (e) {
        this.unapplied = unionOf(parts.slice(i));
        throw e;
      }
      if (i + 1 < parts.length) await breathe();
    }
    this.unapplied = new Map();
  }

  /** The gate for what `from` sent: a record that fails it is held back, named, and not written. */
  gate(from?: string): Admit {
    const admit: Admit = (kind, key, value) => this.quarantine.admit(kind, key, value, from);
    admit.release = (kind, key) => this.quarantine.release(kind, key);
    return admit;
  }

  /**
   * Another device deleted everything: wipe here, or keep this device's data and write it into
   * the new epoch. Either way in as few transactions as can be, each with the state that says
   * where it stands: "keep" wipes nothing (its data and the new epoch's records are written
   * together); "wipe" writes the new epoch and what is left to write with the wipe itself.
   */
  async resetTo(epoch: Epoch, choice: 'wipe' | 'keep'): Promise<void> {
    this.epoch = epoch;
    this.foldDue = true;
    if (choice === 'keep') {
      this.records.record(await storeAsChange(this.o.store));
      await this.catchUp(this.records.everything());
      return;
    }
    this.unapplied = this.records.everything();
    await this.o.wipe();
    await this.catchUp(new Map());
  }

  /** Asks how to follow another device's delete-all (default: wipe). */
  askReset(epoch: Epoch): Promise<'wipe' | 'keep'> {
    // A delete-all from before this device was paired: it joins the epoch with what it brought.
    if (epoch.at < (this.o.joinedAt ?? -Infinity)) return Promise.resolve('keep');
    return this.o.onReset?.(epoch) ?? Promise.resolve('wipe');
  }

  /** Counts and reports a refused message. */
  refuse(seq: number, error: EnvelopeError): void {
    this.refused++;
    this.o.onRefused?.(seq, error);
  }
}
