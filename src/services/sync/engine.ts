// One device's sync (docs/SYNC.md, "Engine"): local writes go into the record document and out
// to the relay as sealed Yjs updates; sealed updates from the relay are opened, merged into the
// document and written to the store through the same `apply` as a local change.
import * as Y from 'yjs';
import type { AppliedChange, ChangeSet, Repository } from '../../ports';
import { type Bytes, concat, fromUtf8, utf8 } from './bytes';
import { EnvelopeError, type Opened, ReplayGuard, Sealer } from './envelope';
import { type Rotation, type SyncKey, roomOf } from './keys';
import { type Admit, type Epoch, type Kind, REMOTE, RecordDoc, type Touched, touchedBy } from './record-doc';
import { Quarantine, type Quarantined } from './record-gate';
import type { RelayClient } from './relay-client';

/** What a device keeps between runs (with its store; see SYNC.md for where). */
export interface SyncState {
  /** The last relay position read. */
  cursor: number;
  /** This device's last sequence number sent. */
  seq: number;
  /** The replay guard's marks in the current room: the last sequence number applied per device. */
  marks: Record<string, number>;
  /** The Yjs document, encoded. */
  doc?: Bytes;
  /** The state vector of what the relay already has (sent or received), encoded. */
  sent?: Bytes;
  /** A local change not sent yet. Deletions move no clock, so the vector alone would miss them. */
  unsent?: boolean;
  epoch?: Epoch;
  /** Keys merged into the document whose write to the store failed: written at the next pull. */
  unapplied?: Array<[string, string[]]>;
  /** Pieces of a large update received so far, per sending device. */
  partial?: Record<string, Bytes[]>;
  /** Records another device sent that did not pass the gate (record-gate.ts): not written. */
  quarantine?: Quarantined[];
  /** The room in use. After a rotation the caller keeps the new key (from `onRotation`) and, on
   * the next start, passes that key's room and sealer: a state of another room is refused. */
  room?: string;
}

export interface SyncEngineOptions {
  store: Repository;
  relay: RelayClient;
  room: string;
  sealer: Sealer;
  deviceId: string;
  /** Empties this device's store (delete-all heard from another device). */
  wipe: () => Promise<void>;
  /** Asked when another device deleted everything; `keep` puts this device's data back. Default wipe. */
  onReset?: (epoch: Epoch) => Promise<'wipe' | 'keep'>;
  state?: SyncState;
  /** Called with every message that could not be applied (wrong key, tampered, replayed). */
  onRefused?: (seq: number, error: EnvelopeError) => void;
  /** A device turned sync off (it forgot the key): the others drop it from their device list. */
  onLeft?: (deviceId: string) => Promise<void>;
  /** A device rotated the key: the new key if this device kept it (keys.ts, acceptRotation). */
  onRotation?: (rotation: Rotation) => Promise<SyncKey | 'unpaired'>;
  /** Largest compressed update sent as one message (tests make it small). */
  pieceBytes?: number;
  /**
   * Keeps a sequence number before the message that uses it is posted: a tab killed after the
   * relay took the message but before the state was saved must not number its next one the same
   * (the other devices would refuse it as a replay). The caller persists it; a start takes the
   * larger of it and `state.seq`.
   */
  reserve?: (seq: number) => Promise<void>;
}

export class SyncEngine implements Repository {
  readonly records: RecordDoc;
  private guard: ReplayGuard;
  private cursor: number;
  private seq: number;
  private epoch: Epoch;
  /** What the relay has, per Yjs client: nothing below it needs sending. */
  private sent: Map<number, number>;
  private unsent: boolean;
  private queue: Promise<unknown> = Promise.resolve();
  private unapplied: Touched;
  private partial: Record<string, Bytes[]>;
  private room: string;
  private sealer: Sealer;
  private quarantine: Quarantine;
  /** This device was left out of a key rotation: it no longer syncs. */
  unpaired = false;
  refused = 0;
  lastError: string | undefined;
  lastSyncAt: number | undefined;

  constructor(private readonly o: SyncEngineOptions) {
    const doc = new Y.Doc();
    if (o.state?.doc) Y.applyUpdate(doc, o.state.doc, REMOTE);
    this.records = new RecordDoc(doc, o.state?.epoch);
    this.guard = new ReplayGuard({ ...(o.state?.marks ?? {}) });
    this.cursor = o.state?.cursor ?? 0;
    this.seq = o.state?.seq ?? 0;
    this.epoch = o.state?.epoch ?? this.records.epoch;
    this.sent = o.state?.sent ? Y.decodeStateVector(o.state.sent) : new Map();
    this.unsent = o.state?.unsent ?? false;
    doc.on('update', (_u: Uint8Array, origin: unknown) => {
      if (origin !== REMOTE) this.unsent = true;
    });
    this.unapplied = new Map((o.state?.unapplied ?? []).map(([k, ids]) => [k as Kind, new Set(ids)]));
    this.partial = { ...(o.state?.partial ?? {}) };
    this.quarantine = new Quarantine(o.state?.quarantine);
    if (o.state?.room !== undefined && o.state.room !== o.room) {
      throw new Error('The saved sync state belongs to another key: start with the key in use.');
    }
    this.room = o.room;
    this.sealer = o.sealer;
  }

  /** Records held back by the gate, the newest last. */
  get quarantined(): Quarantined[] {
    return this.quarantine.list();
  }

  /** The relay position read so far (the app's progress bar). */
  get position(): number {
    return this.cursor;
  }

  /** A local write another path already stored (the app's out-box): into the document only. */
  recordLocal(applied: AppliedChange): Promise<void> {
    return this.serial(async () => this.records.record(applied));
  }

  /** What to persist now (after a pull or a push); without the document where the caller keeps it as a log. */
  state(withDoc = true): SyncState {
    return {
      cursor: this.cursor,
      seq: this.seq,
      marks: { ...this.guard.marks },
      doc: withDoc ? (Y.encodeStateAsUpdate(this.records.doc) as Bytes) : undefined,
      sent: encodeVector(this.sent),
      unsent: this.unsent,
      epoch: this.epoch,
      unapplied: [...this.unapplied].map(([k, ids]) => [k, [...ids]]),
      partial: { ...this.partial },
      quarantine: this.quarantine.list(),
      room: this.room,
    };
  }

  /** One at a time: a pull, a push and a local write never interleave their document edits. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  // The Repository: writes go to the store and into the document; reads go to the store.
  apply(change: ChangeSet): Promise<AppliedChange> {
    return this.serial(async () => {
      const applied = await this.o.store.apply(change);
      this.records.record(applied);
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

  /** Delete-all on this device: the caller has wiped the store; the document starts a new epoch. */
  deleteAll(now = Date.now()): Promise<Epoch> {
    return this.serial(async () => (this.epoch = this.records.reset(this.o.deviceId, now)));
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
    return this.serial(async () => {
      if (this.unpaired) throw new Error('This device was unpaired: it no longer syncs.');
      if (!this.pending) return false;
      const update = Y.encodeStateAsUpdate(this.records.doc, encodeVector(this.sent));
      const vector = Y.decodeStateVector(Y.encodeStateVector(this.records.doc));
      await this.send(this.room, this.sealer, await gzip(update));
      // Only now: a message the relay never took keeps its changes pending.
      this.sent = vector;
      this.unsent = false;
      return true;
    });
  }

  /** Posts a compressed update, in pieces when it is larger than one message may be. */
  private async send(room: string, sealer: Sealer, gz: Bytes, kind: number = KIND_UPDATE): Promise<void> {
    const piece = this.o.pieceBytes ?? PIECE;
    const pieces = kind === KIND_UPDATE && gz.length > piece ? Math.ceil(gz.length / piece) : 1;
    for (let i = 0; i < pieces; i++) {
      const body =
        pieces === 1
          ? concat(Uint8Array.of(kind), gz)
          : concat(Uint8Array.of(KIND_PIECE, i >> 8, i & 255, pieces >> 8, pieces & 255), gz.subarray(i * piece, (i + 1) * piece));
      // Used up before the post, kept first: a gap after a failed post is harmless, a reuse is not.
      const seq = ++this.seq;
      try {
        await this.o.reserve?.(seq);
        await this.o.relay.post(room, await sealer.seal(this.o.deviceId, seq, body));
      } catch (e) {
        this.lastError = (e as Error).message;
        throw e;
      }
    }
    this.lastError = undefined;
    this.lastSyncAt = Date.now();
  }

  /**
   * This device rotates the key (to unpair a device, or after delete-all): the whole document goes
   * to the new key's room first, then the notice, sealed under the old key, to the old room, where
   * every device still reading it finds it (keys.ts, rotate).
   */
  rekey(key: SyncKey, rotation: Rotation): Promise<void> {
    return this.serial(async () => {
      const room = await roomOf(key);
      const sealer = await Sealer.of(key, room);
      await this.send(room, sealer, await gzip(Y.encodeStateAsUpdate(this.records.doc)));
      await this.send(this.room, this.sealer, utf8(JSON.stringify(rotation)), KIND_ROTATION);
      this.moveTo(room, sealer);
      this.sent = Y.decodeStateVector(Y.encodeStateVector(this.records.doc));
      this.unsent = false;
    });
  }

  /** This device turns sync off: tells the others (best effort; the relay may be away). */
  leave(): Promise<void> {
    return this.serial(() => this.send(this.room, this.sealer, Uint8Array.of(0) as Bytes, KIND_LEFT));
  }

  private moveTo(room: string, sealer: Sealer): void {
    this.room = room;
    this.sealer = sealer;
    this.cursor = 0;
    this.partial = {};
    // Marks are per room: the room and key are in every message's authenticated data, so nothing
    // of the old room replays into the new one (and the rotator's upload precedes its notice).
    this.guard = new ReplayGuard();
  }

  /** Reads, opens and applies everything the relay has after the cursor. Returns how many applied. */
  pull(): Promise<number> {
    return this.serial(async () => {
      let applied = 0;
      if (this.unapplied.size > 0) await this.catchUp(new Map());
      for (;;) {
        if (this.unpaired) break;
        const { messages } = await this.o.relay.read(this.room, this.cursor);
        if (messages.length === 0) break;
        for (const m of messages) {
          const room = this.room;
          const took = await this.take(m.seq, m.bytes);
          if (this.room !== room || this.unpaired) break; // moved to a new room, or left out
          // The document has the message now; if the store write below fails, `unapplied` retries it.
          this.cursor = m.seq;
          if (took) {
            applied++;
            if (took !== 'reset') await this.catchUp(took.touched, took.from);
          }
        }
      }
      this.lastSyncAt = Date.now();
      return applied;
    });
  }

  /** Writes the touched keys (and any left from a failed write) to the store through `apply`. */
  private async catchUp(touched: Touched, from?: string): Promise<void> {
    for (const [kind, ids] of touched) {
      const set = this.unapplied.get(kind) ?? new Set<string>();
      ids.forEach((id) => set.add(id));
      this.unapplied.set(kind, set);
    }
    await this.o.store.apply(await this.records.changeFor(this.unapplied, this.o.store, this.gate(from)));
    this.unapplied = new Map();
  }

  /** The gate for what `from` sent: a record that fails it is held back, named, and not written. */
  private gate(from?: string): Admit {
    const admit: Admit = (kind, key, value) => this.quarantine.admit(kind, key, value, from);
    admit.release = (kind, key) => this.quarantine.release(kind, key);
    return admit;
  }

  /** Opens and merges one message; what it touched, `reset` for a delete-all, false if refused. */
  private async take(seq: number, bytes: Bytes): Promise<{ touched: Touched; from: string } | 'reset' | false> {
    let opened: Opened;
    try {
      opened = await this.sealer.open(bytes, this.guard);
    } catch (e) {
      if (!(e instanceof EnvelopeError)) throw e;
      this.refused++;
      this.o.onRefused?.(seq, e);
      return false;
    }
    const from = opened.deviceId;
    const body = opened.plaintext;
    if (from === this.o.deviceId) {
      // Our own message: its number was used, whatever the saved state says (a second guard).
      this.seq = Math.max(this.seq, opened.seq);
      return false;
    }
    if (body[0] === KIND_LEFT) {
      await this.o.onLeft?.(from);
      return false;
    }
    if (body[0] === KIND_ROTATION) {
      const key = (await this.o.onRotation?.(JSON.parse(fromUtf8(body.subarray(1))) as Rotation)) ?? 'unpaired';
      if (key === 'unpaired') this.unpaired = true;
      else {
        const room = await roomOf(key);
        this.moveTo(room, await Sealer.of(key, room));
      }
      return false;
    }
    let gz: Bytes;
    if (body[0] === KIND_PIECE) {
      const index = (body[1] << 8) | body[2];
      const count = (body[3] << 8) | body[4];
      const have = index === 0 ? [] : (this.partial[from] ?? []);
      if (have.length !== index) return false; // a piece out of order: a lost start, nothing to join it to
      have.push(body.slice(5));
      this.partial[from] = have;
      if (index + 1 < count) return false;
      delete this.partial[from];
      gz = concat(...have);
    } else gz = body.slice(1);
    const update = await gunzip(gz);
    const before = this.epoch.id;
    let touched: Touched = new Map();
    const listen = (tr: Y.Transaction) => {
      if (tr.origin === REMOTE) touched = touchedBy(this.records, tr, before);
    };
    this.records.doc.on('afterTransaction', listen);
    try {
      Y.applyUpdate(this.records.doc, update, REMOTE);
    } finally {
      this.records.doc.off('afterTransaction', listen);
    }
    // The relay has what it brought: not sent back. (Its end clocks: a state vector read from an
    // update that does not start at a client's first clock says 0 for that client.)
    for (const [client, clock] of Y.parseUpdateMeta(update).to) {
      if ((this.sent.get(client) ?? 0) < clock) this.sent.set(client, clock);
    }
    const now = this.records.epoch;
    if (now.id !== before) {
      await this.resetTo(now);
      return 'reset';
    }
    return { touched, from };
  }

  /** Another device deleted everything: wipe here (or keep, if the user says so) and take the new epoch. */
  private async resetTo(epoch: Epoch): Promise<void> {
    const choice = (await this.o.onReset?.(epoch)) ?? 'wipe';
    this.unapplied = new Map();
    const keep = choice === 'keep' ? await storeAsChange(this.o.store) : undefined;
    await this.o.wipe();
    this.epoch = epoch;
    await this.o.store.apply(await this.records.changeFor(this.records.everything(), this.o.store, this.gate()));
    if (keep) this.records.record(await this.o.store.apply(keep));
  }
}

/** Everything a store holds that syncs, as one change that puts it. */
async function storeAsChange(store: Repository): Promise<AppliedChange> {
  const sessions = await store.listSessions();
  const turns = (await Promise.all(sessions.map((s) => store.listTurns(s.id)))).flat();
  return {
    dropped: [],
    sessions,
    turns,
    memories: await store.listMemories(),
    edges: await store.listEdges(),
    segments: await store.listSegments(),
    tombstones: [...(await store.listTombstones('session')), ...(await store.listTombstones('memory'))],
  };
}

// The first byte of every message's plaintext says what it holds.
const KIND_UPDATE = 1;
const KIND_ROTATION = 2;
const KIND_LEFT = 4;
const KIND_PIECE = 3;
/** A compressed update larger than this goes in pieces (the relay takes at most 8 MiB a message). */
const PIECE = 4 * 1024 * 1024;

const ORDER = ['tombstones', 'sessions', 'turns', 'memories', 'edges', 'segments'] as const;

function* inParts(all: AppliedChange, part: number): Generator<AppliedChange> {
  for (const kind of ORDER) {
    const list = (all[kind] ?? []) as unknown[];
    for (let i = 0; i < list.length; i += part) yield { dropped: [], [kind]: list.slice(i, i + part) };
  }
}

function encodeVector(v: Map<number, number>): Bytes {
  // A state vector is encoded as a count, then (client, clock) pairs, all as varuints.
  const out: number[] = [];
  const varuint = (n: number) => {
    while (n > 127) {
      out.push((n & 127) | 128);
      n = Math.floor(n / 128);
    }
    out.push(n);
  };
  varuint(v.size);
  for (const [client, clock] of v) {
    varuint(client);
    varuint(clock);
  }
  return Uint8Array.from(out) as Bytes;
}

async function gzip(b: Uint8Array): Promise<Bytes> {
  return pipe(b, new CompressionStream('gzip'));
}
async function gunzip(b: Uint8Array): Promise<Bytes> {
  return pipe(b, new DecompressionStream('gzip'));
}
async function pipe(b: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Bytes> {
  const out = new Response(new Blob([b as Bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}
