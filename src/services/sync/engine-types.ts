// What the engine keeps between runs and what its caller gives it (engine.ts).
import type { Repository } from '../../ports';
import type { Bytes } from './bytes';
import type { EnvelopeError } from './envelope';
import type { HistoryNotes } from './inbox';
import type { SyncKey } from './keys';
import type { Epoch } from './record-doc';
import type { Quarantined } from './record-gate';
import type { RoomRelay } from './relay-client';
import type { SavedBook } from './seq-book';
import type { Sealer } from './envelope';

/** What a device keeps between runs (with its store; see SYNC.md for where). */
export interface SyncState extends SavedBook {
  /** The last relay position read. */
  cursor: number;
  /** This device's last sequence number sent. */
  seq: number;
  /** This device's last message in this room that the relay took (the next one names it). */
  prev?: number;
  /** The Yjs document, encoded. */
  doc?: Bytes;
  /** The state vector of what the relay already has (sent or received), encoded. */
  sent?: Bytes;
  /** A local change not sent yet. Deletions move no clock, so the vector alone would miss them. */
  unsent?: boolean;
  epoch?: Epoch;
  /** Keys merged into the document whose write to the store failed: written at the next pull. */
  unapplied?: Array<[string, string[]]>;
  /** Pieces of a large message received so far, per sending device. */
  partial?: Record<string, Bytes[]>;
  /** Records another device sent that did not pass the gate (record-gate.ts): not written. */
  quarantine?: Quarantined[];
  /** What the relay's history showed that it should not have (inbox.ts). */
  history?: HistoryNotes;
  /** Records deleted here since the relay was last compacted: `now` after a delete-all. */
  compactDue?: false | 'soon' | 'now';
  /** A deletion whose words the document's log may still hold: the log is folded into a fresh snapshot. */
  foldDue?: boolean;
  /** This device was left out of a key rotation: kept, so a reopened tab still says so. */
  unpaired?: boolean;
  /** When this device moved into the room in use by a key change: a ring member not seen here since is flagged. */
  movedAt?: number;
  /** The room in use. After a rotation the caller keeps the new key (from `onRotation`) and, on
   * the next start, passes that key's room and sealer: a state of another room is refused. */
  room?: string;
}

export interface SyncEngineOptions {
  store: Repository;
  /** The relay, as the engine uses it: reads and posts (the loop's long poll is the service's). */
  relay: RoomRelay;
  room: string;
  sealer: Sealer;
  deviceId: string;
  /** Empties this device's store (delete-all heard from another device). */
  wipe: () => Promise<void>;
  /** Asked when another device deleted everything; `keep` puts this device's data back. Default wipe. */
  onReset?: (epoch: Epoch) => Promise<'wipe' | 'keep'>;
  /** When this device was paired: a delete-all made before it is not asked about (its own data is kept). */
  joinedAt?: number;
  state?: SyncState;
  /** Called with every message that could not be applied (wrong key, tampered, replayed, malformed). */
  onRefused?: (seq: number, error: EnvelopeError) => void;
  /** A device turned sync off: the others drop it from their device list; refused when it did not sign the notice. */
  onLeft?: (deviceId: string, payload: Bytes) => Promise<void | Refused>;
  /**
   * A device rotated the key (its signed notice, ring.ts): the new key if this device kept it,
   * `unpaired` if it was left out, refused (with why) for a notice this ring cannot verify or whose
   * maker one of `others` (the room's other rotations: docs/SYNC.md, "Which key change counts")
   * removed. Throwing leaves the notice to be read again (a passing failure).
   */
  onRotation?: (notice: Bytes, others: readonly Bytes[]) => Promise<SyncKey | 'unpaired' | Refused>;
  /** A change of the key ring from another device (ring.ts); refused (with why) when no device of the ring signed it. */
  onRing?: (payload: Bytes, from: string) => Promise<void | Refused>;
  /** Largest compressed update sent as one message (tests make it small). */
  pieceBytes?: number;
  /** How long after asking for what is missing (`need`) it asks again; default a minute. */
  needEveryMs?: number;
  /**
   * Keeps a sequence number before the message that uses it is posted: a tab killed after the
   * relay took the message but before the state was saved must not number its next one the same
   * (the other devices would refuse it as a replay). The caller persists it; a start takes the
   * larger of it and `state.seq`.
   */
  reserve?: (seq: number) => Promise<void>;
}

/** A change of the ring this device would not take, and why (in words). */
export interface Refused {
  refused: string;
  /** A key change refused because another one in the room removed its maker: this device follows neither. */
  conflict?: boolean;
}
