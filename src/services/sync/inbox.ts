// Reading the room (docs/SYNC.md, "The relay's history"): what each message from the relay means.
// The inbox opens a message, checks it against what this device knows of the room (its position,
// every device's numbers seen, the pieces of a large message so far) and returns what to do with it
// (a `Step`: merge, follow a key change, answer a need, refuse, nothing); the engine (engine.ts)
// does it, with the relay and the store, and tells the inbox when it is done. The inbox does no
// I/O and never sees the engine.
//
// The relay is hostile input: it may drop, swap, withhold or replay messages, or come back from a
// restart empty or from an older copy. What it did is kept in words (`HistoryNotes`) and never
// stops what comes after: a swapped message still applies, a dropped one is asked for again
// (`need`), a relay that went back is read again from its start and sent what it lost.
import { type Bytes, concat, equalBytes } from './bytes';
import { EnvelopeError, type OpenFailure, type Opened, type Sealer } from './envelope';
import { type Body, BodyError, KIND, decodeBody, decodeSnapshot, gunzip, readPiece } from './messages';
import type { RelayMessage } from './relay-client';
import { type SavedBook, SeqBook } from './seq-book';

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

/** Kinds whose repeat changes nothing (a merge): read again when the relay went back. */
const IDEMPOTENT = new Set<number>([KIND.update, KIND.piece, KIND.snapshot]);

/** What the inbox keeps of a room between runs (with the engine's state). */
export interface SavedInbox extends Partial<SavedBook> {
  cursor?: number;
  partial?: Record<string, Bytes[]>;
  history?: HistoryNotes;
}

/** A message opened and read: what `done` marks once the engine did what it means. */
export interface Heard {
  m: RelayMessage;
  from: string;
  seq: number;
  body: Body;
}

/** What to do with one message; the engine does it (engine.ts, `take`). */
export type Step =
  /** Read already, a piece kept for later, or seen again while reading the room again: the position moved. */
  | { do: 'nothing' }
  /** Refused (noted here, the position moved): the engine counts and reports it. */
  | { do: 'refuse'; seq: number; error: EnvelopeError }
  /** This device's own message read back: its number was used; `rotation` is its key change notice. */
  | { do: 'own'; seq: number; rotation?: Bytes }
  /** An update (or a snapshot's, which `covers` what its sender had seen) to merge and write. */
  | { do: 'merge'; heard: Heard; update: Uint8Array; covers?: SavedBook }
  /** A key change: the engine reads the rest of the room for `rotationQuestion`, and asks its caller. */
  | { do: 'rotation'; heard: Heard; notice: Bytes }
  /** A device turned sync off, or the key ring changed: the engine asks its caller. */
  | { do: 'left' | 'ring'; heard: Heard; payload: Bytes }
  /** Another device asks for what it lacks (its state vector): answer with a snapshot. */
  | { do: 'answer'; heard: Heard; vector: Bytes };

export class Inbox {
  notes: HistoryNotes;
  /** The last relay position read. */
  cursor: number;
  /** Per device, what was seen of its messages in this room (seq-book.ts). */
  book: SeqBook;
  /** Pieces of a large message received so far, per sending device. */
  partial: Record<string, Bytes[]>;
  /** Reading again from the start after the relay went back: what was seen is merged again, quietly. */
  private recovering = false;
  /** A key change refused in this read because another removed its maker: this device follows neither. */
  private conflict: string | undefined;

  constructor(saved?: SavedInbox) {
    this.notes = { ...saved?.history };
    this.cursor = saved?.cursor ?? 0;
    this.book = new SeqBook({ marks: saved?.marks ?? {}, recent: saved?.recent, holes: saved?.holes });
    this.partial = { ...(saved?.partial ?? {}) };
  }

  /** A new room: read from its start; what was seen and noted of the old one goes with it. */
  movedRoom(): void {
    this.cursor = 0;
    this.partial = {};
    // Marks are per room: the room and key are in every message's authenticated data, so nothing
    // of the old room replays into the new one.
    this.book = new SeqBook();
    this.notes = {};
    this.recovering = false;
    this.conflict = undefined;
  }

  /** The relay has fewer messages than were read: read it again from its start (the engine sends what it lost). */
  wentBack(last: number): void {
    this.notes.behind = { had: this.cursor, now: last, at: Date.now() };
    this.cursor = 0;
    this.partial = {};
    this.recovering = true;
  }

  /**
   * The end of a read: true when this device is to stop, having read to the end of a room a key
   * change closed (`closed`), or whose key changes removed each other's makers, without a key
   * change it could take; it says why in `leftBehind`. `stopped`: it stopped already (unpaired).
   */
  endOfRead(closed: number | undefined, stopped: boolean): boolean {
    this.recovering = false;
    let stop = false;
    if (!stopped && ((closed !== undefined && this.cursor >= closed) || this.conflict)) {
      const why = this.conflict ?? this.notes.lastRefused?.why ?? 'the key change that closed the room is missing';
      this.notes.leftBehind = { why, at: Date.now() };
      stop = true;
    }
    this.conflict = undefined;
    return stop;
  }

  /** Opens one message and says what to do with it. */
  async read(m: RelayMessage, sealer: Sealer, deviceId: string): Promise<Step> {
    if (m.seq <= this.cursor) return { do: 'nothing' }; // a position read already: nothing new can be there
    let opened: Opened;
    let body: Body;
    try {
      opened = await sealer.open(m.bytes);
      body = decodeBody(opened.plaintext, opened.version);
    } catch (err) {
      if (err instanceof EnvelopeError) return this.refuse(m, err);
      if (err instanceof BodyError) return this.refuse(m, new EnvelopeError('malformed', err.message));
      throw err;
    }
    const { deviceId: from, seq } = opened;
    // A message cannot sit before what its sender had read when it posted it.
    if (body.head !== undefined && body.head >= m.seq) this.notes.reordered = (this.notes.reordered ?? 0) + 1;
    if (from === deviceId) {
      this.cursor = m.seq;
      return { do: 'own', seq, rotation: body.kind === KIND.rotation ? body.payload : undefined };
    }
    if (this.book.seen(from, seq) && !(this.recovering && IDEMPOTENT.has(body.kind))) {
      if (this.recovering) {
        this.cursor = m.seq;
        return { do: 'nothing' };
      }
      return this.refuse(m, new EnvelopeError('replayed', `message ${seq} of device ${from.slice(0, 8)} was seen before`));
    }
    const heard: Heard = { m, from, seq, body };
    try {
      return await this.meaning(heard);
    } catch (err) {
      if (err instanceof BodyError) return this.malformed(heard, err);
      throw err;
    }
  }

  /** An authentic message that does not parse: refused for good, not read again and again. */
  malformed(heard: Heard, err: BodyError): Step {
    this.done(heard);
    return this.refuse(heard.m, new EnvelopeError('malformed', err.message));
  }

  /** Refuses a message: noted, and the position moves past it. */
  private refuse(m: RelayMessage, error: EnvelopeError): Step {
    this.cursor = m.seq;
    const refused = (this.notes.refused ??= {});
    refused[error.reason] = (refused[error.reason] ?? 0) + 1;
    this.notes.lastRefused = { reason: error.reason, why: error.message, at: Date.now() };
    return { do: 'refuse', seq: m.seq, error };
  }

  /** Refuses what the engine's caller would not take (a key ring change, a key change), in its words. */
  forged(heard: Heard, why: string): Step {
    return this.refuse(heard.m, new EnvelopeError('forged', why));
  }

  /** Marks a message processed: after it did what it means, with the state written next. */
  done({ m, from, seq, body }: Heard): void {
    this.book.mark(from, seq, body.prev);
    this.cursor = m.seq;
  }

  private async meaning(heard: Heard): Promise<Step> {
    const { from, body } = heard;
    switch (body.kind) {
      case KIND.piece: {
        const piece = readPiece(body.payload);
        const have = piece.index === 0 ? [] : (this.partial[from] ?? []);
        // A piece out of order (a lost start): nothing to join it to.
        if (have.length === piece.index) {
          have.push(piece.chunk);
          this.partial[from] = have;
        }
        if (have.length < piece.count || piece.index + 1 !== piece.count) {
          this.done(heard);
          return { do: 'nothing' };
        }
        delete this.partial[from];
        return this.meaning({ ...heard, body: { ...body, kind: piece.kind, payload: concat(...have) } });
      }
      case KIND.update:
        return { do: 'merge', heard, update: await gunzip(body.payload) };
      case KIND.snapshot: {
        const { book, gz } = decodeSnapshot(body.payload);
        return { do: 'merge', heard, update: await gunzip(gz), covers: book };
      }
      case KIND.rotation:
        return { do: 'rotation', heard, notice: body.payload };
      case KIND.left:
        return { do: 'left', heard, payload: body.payload };
      case KIND.ring:
        return { do: 'ring', heard, payload: body.payload };
      case KIND.need:
        return { do: 'answer', heard, vector: body.payload };
      default:
        // A kind from a newer version: nothing this one can do with it.
        throw new BodyError(`a message of an unknown kind (${body.kind})`);
    }
  }

  /**
   * A key change read (docs/SYNC.md, "Which key change counts"), given where the relay closed the
   * room and the other key changes read after it (`later`): refused at once, or the other key
   * changes that may refuse it (none when the relay closed the room with it).
   */
  rotationQuestion(heard: Heard, closed: number | undefined, later: readonly Bytes[]): { refused: string } | { others: Bytes[] } {
    const at = heard.m.seq;
    // In a closed room the notice it was closed with decides; elsewhere (an older relay) every
    // other key change seen in the room may refuse this one.
    if (closed !== undefined && closed !== at)
      return { refused: 'a new key the relay did not close this room with: another key change closed it' };
    return { others: closed === at ? [] : [...(this.notes.rotations ?? []), ...later] };
  }

  /** A key change not taken: kept (a later one whose maker it removed is refused too) and refused. */
  rotationRefused(heard: Heard, why: string, conflict?: boolean): Step {
    this.notes.rotations = [...(this.notes.rotations ?? []), heard.body.payload].slice(-MAX_ROTATIONS);
    if (conflict) this.conflict = why;
    return this.forged(heard, why);
  }

  /** The key changes other than `notice` among messages read after it (ones not readable here decide nothing). */
  static async rotationsIn(messages: readonly RelayMessage[], sealer: Sealer, notice: Bytes): Promise<Bytes[]> {
    const later: Bytes[] = [];
    for (const m of messages) {
      try {
        const opened = await sealer.open(m.bytes);
        const body = decodeBody(opened.plaintext, opened.version);
        if (body.kind === KIND.rotation && !equalBytes(body.payload, notice)) later.push(body.payload);
      } catch {
        // Not readable here: it is refused in its turn, and decides nothing.
      }
    }
    return later;
  }

  /** Whether to ask the others for what this device lacks now: holes in the history, or changes (`waiting`) on one. */
  shouldAsk(waiting: boolean, everyMs: number): boolean {
    if (this.book.missing().length === 0 && !waiting) return false;
    if (this.notes.needAt !== undefined && Date.now() - this.notes.needAt < everyMs) return false;
    this.notes.needAt = Date.now();
    return true;
  }

  /** What this device has seen, its own messages (up to `lastSeq`) included: it holds all of them. */
  bookFor(deviceId: string, lastSeq: number): SavedBook {
    const b = this.book.saved();
    return { ...b, marks: { ...b.marks, [deviceId]: lastSeq } };
  }
}
