// The synced records as one Yjs document (docs/SYNC.md, "Mapping"): a Y.Map per kind of record,
// the record's id as its key and the record, as written by the store, as its value. Yjs merges the
// maps (per record: one device's write wins, the same on every device); the store's one writer
// (`Repository.apply` and its `settle`) stays the only way into the database, for local and remote
// changes alike.
//
// - Local: what `apply` actually wrote (its AppliedChange: cascades, resolved patches and derived
//   turn updates included, what was dropped left out) is copied into the document.
// - Remote: the keys a remote update touched are read back from the document into a ChangeSet and
//   written with `apply`, so the integrity rule holds after every merge.
// - A tombstone wins over an edit made elsewhere: a memory or chat the user deleted on one device
//   stays deleted even when another device, offline, edited it meanwhile.
// - A forgotten mark (and its undo) wins over any other write of its turn: each is an entry of its
//   own in the epoch's `forgotten` map, laid over the turn's record when it is read (forget-marks.ts).
// - Delete-all starts a new epoch: the records live in maps named by the epoch, so what another
//   device wrote into the old epoch (offline, before it heard of the wipe) never comes back.
// Not synced: vectors (derived; each device embeds), jobs (each device runs its own; see
// SYNC.md for ownership) and settings.
import * as Y from 'yjs';
import type { AppliedChange, ChangeSet, Repository } from '../../ports';
import type { Edge, Id, Memory, Segment, Session, Tombstone, Turn } from '../../memory/types';
import { isValidTime } from '../../memory/limits';
import { recordProblem } from './record-gate';
import { placeTurns } from './turn-positions';
import { type MarkEntry, marksByTurn, recordMarks, turnOfKey, withMarks } from './forget-marks';
import { KINDS, type Kind, type Touched } from './record-kinds';

export type { Kind, Touched } from './record-kinds';

/** The origin of transactions that apply what came from the relay (never sent back out). */
export const REMOTE = Symbol('remote sync');
/** The origin of transactions that copy local writes into the document. */
export const LOCAL = Symbol('local sync');

type RecordOf = { sessions: Session; turns: Turn; memories: Memory; edges: Edge; segments: Segment; tombstones: Tombstone };

export interface Epoch {
  id: string;
  at: number;
  /** The device that deleted everything. */
  by: string;
}

export const FIRST_EPOCH: Epoch = { id: 'e0', at: 0, by: '' };

function isEpoch(e: unknown): e is Epoch {
  const x = e as Partial<Epoch> | null;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.id === 'string' &&
    /^[\w-]{1,80}$/.test(x.id) &&
    typeof x.at === 'number' &&
    isValidTime(x.at) &&
    typeof x.by === 'string' &&
    x.by.length <= 64
  );
}

const tombKey = (kind: Tombstone['kind'], id: Id) => `${kind}:${id}`;

/** The gate (record-gate.ts): whether a value may be written; `release` when its key is gone. */
export interface Admit {
  (kind: Kind, key: string, value: unknown): boolean;
  release?: (kind: Kind, key: string) => void;
}

export class RecordDoc {
  /** The last epoch that was well formed: a malformed one another device wrote changes nothing. */
  private known: Epoch;

  constructor(
    readonly doc: Y.Doc = new Y.Doc(),
    known: Epoch = FIRST_EPOCH,
  ) {
    this.known = known;
  }

  get epoch(): Epoch {
    const e: unknown = this.doc.getMap('meta').get('epoch');
    if (e === undefined) return FIRST_EPOCH;
    if (isEpoch(e)) this.known = e;
    return this.known;
  }

  map<K extends Kind>(kind: K, epoch = this.epoch.id): Y.Map<RecordOf[K]> {
    return this.doc.getMap<RecordOf[K]>(`${epoch}/${kind}`);
  }

  /** The forgotten marks of the epoch, one entry per turn and memory (forget-marks.ts). */
  marks(epoch = this.epoch.id): Y.Map<MarkEntry> {
    return this.doc.getMap<MarkEntry>(`${epoch}/forgotten`);
  }

  /** A turn as the document holds it: its record with the mark entries laid over it (a record out of shape as it is, for the gate). */
  private turnOut(id: Id, marks: ReadonlyMap<Id, MarkEntry[]>): Turn | undefined {
    const t = this.map('turns').get(id);
    if (t === undefined || !marks.has(id) || recordProblem('turns', id, t) !== undefined) return t;
    return withMarks(t, marks.get(id));
  }

  /** Copies what the store wrote into the document (one Yjs transaction, one update). True when it deleted a record. */
  record(applied: AppliedChange): boolean {
    this.doc.transact(() => {
      const del = (kind: Kind, ids: Id[] | undefined) => ids?.forEach((id) => this.map(kind).delete(id));
      const put = <K extends Kind>(kind: K, records: RecordOf[K][] | undefined, key: (r: RecordOf[K]) => string) =>
        records?.forEach((r) => this.map(kind).set(key(r), r));
      del('sessions', applied.deleteSessions);
      del('turns', applied.deleteTurns);
      del('memories', applied.deleteMemories);
      del('edges', applied.deleteEdges);
      del('segments', applied.deleteSegments);
      applied.deleteTombstones?.forEach(([kind, id]) => this.map('tombstones').delete(tombKey(kind, id)));
      put('sessions', applied.sessions, (r) => r.id);
      put('turns', applied.turns, (r) => r.id);
      put('memories', applied.memories, (r) => r.id);
      put('edges', applied.edges, (r) => r.id);
      put('segments', applied.segments, (r) => r.id);
      put('tombstones', applied.tombstones, (r) => tombKey(r.kind, r.id));
      recordMarks(this.marks(), applied);
    }, LOCAL);
    const deletes = [applied.deleteSessions, applied.deleteTurns, applied.deleteMemories, applied.deleteEdges, applied.deleteSegments];
    return deletes.some((d) => (d?.length ?? 0) > 0);
  }

  /**
   * What of `store` (everything a store holds, as a change) the document does not hold as it is:
   * the records that differ, and with `replace` the deletes of what the store no longer has. For a
   * store written around the document (a backup import).
   */
  differences(store: AppliedChange, replace: boolean): AppliedChange {
    const out: AppliedChange = { dropped: [] };
    const same = (a: unknown, b: unknown) => a !== undefined && canonical(a) === canonical(b);
    const kinds = [
      ['sessions', 'deleteSessions'],
      ['turns', 'deleteTurns'],
      ['memories', 'deleteMemories'],
      ['edges', 'deleteEdges'],
      ['segments', 'deleteSegments'],
    ] as const;
    const marks = marksByTurn(this.marks());
    for (const [kind, del] of kinds) {
      const map = this.map(kind);
      const records = (store[kind] ?? []) as Array<{ id: Id }>;
      const held = (id: Id) => (kind === 'turns' ? this.turnOut(id, marks) : map.get(id));
      (out[kind] as unknown[]) = records.filter((r) => !same(held(r.id), r));
      if (replace) {
        const kept = new Set(records.map((r) => r.id));
        out[del] = [...map.keys()].filter((k) => !kept.has(k));
      }
    }
    const tombs = this.map('tombstones');
    out.tombstones = (store.tombstones ?? []).filter((t) => !same(tombs.get(tombKey(t.kind, t.id)), t));
    if (replace) {
      const kept = new Set((store.tombstones ?? []).map((t) => tombKey(t.kind, t.id)));
      out.deleteTombstones = [...tombs.entries()].filter(([k]) => !kept.has(k)).map(([, t]) => [t.kind, t.id]);
    }
    return out;
  }

  /** Every record of the current epoch, as a change that puts them all (a first sync, a reset). */
  everything(): Touched {
    return new Map(KINDS.map((k) => [k, new Set(this.map(k).keys())]));
  }

  /**
   * The change that brings a store in line with the document for the touched keys. Reads the
   * store for the cascades `settle` does not do (a chat deleted elsewhere takes the turns and
   * passages this device added to it meanwhile). `admit` is the gate (record-gate.ts): a value it
   * refuses is neither written nor deleted here, so the store keeps what it had.
   */
  async changeFor(touched: Touched, store: Repository, admit: Admit = () => true): Promise<ChangeSet> {
    const tombs = this.map('tombstones');
    const good = new Map<string, boolean>();
    const validTomb = (key: string) => {
      if (!good.has(key)) good.set(key, tombs.has(key) && recordProblem('tombstones', key, tombs.get(key)) === undefined);
      return good.get(key)!;
    };
    const dead = (kind: Tombstone['kind'], id: Id) => validTomb(tombKey(kind, id));
    const c: Required<Pick<ChangeSet, 'sessions' | 'turns' | 'memories' | 'edges' | 'segments' | 'tombstones'>> & {
      deleteSessions: Id[];
      deleteTurns: Id[];
      deleteMemories: Id[];
      deleteEdges: Id[];
      deleteSegments: Id[];
      deleteTombstones: Array<[Tombstone['kind'], Id]>;
    } = {
      sessions: [],
      turns: [],
      memories: [],
      edges: [],
      segments: [],
      tombstones: [],
      deleteSessions: [],
      deleteTurns: [],
      deleteMemories: [],
      deleteEdges: [],
      deleteSegments: [],
      deleteTombstones: [],
    };
    const sessionKeys = new Set(touched.get('sessions'));
    const memoryKeys = new Set(touched.get('memories'));
    for (const key of touched.get('tombstones') ?? []) {
      const [kind, ...rest] = key.split(':');
      const id = rest.join(':');
      if (!tombs.has(key)) {
        admit.release?.('tombstones', key);
        if (kind === 'session' || kind === 'memory') c.deleteTombstones.push([kind, id]);
      } else if (admit('tombstones', key, tombs.get(key))) c.tombstones.push(tombs.get(key)!);
      else continue;
      // A tombstone come or gone decides whether its record is there: look at it again.
      if (kind === 'session') sessionKeys.add(id);
      else if (kind === 'memory') memoryKeys.add(id);
    }
    // Present and admitted: put; gone (or under a tombstone): delete; refused: left as it is.
    const each = <K extends Kind>(
      kind: K,
      keys: Iterable<string>,
      puts: RecordOf[K][],
      deletes: Id[],
      isDead = (_: Id) => false,
      read = (id: Id) => this.map(kind).get(id),
    ) => {
      const map = this.map(kind);
      for (const id of keys) {
        if (!map.has(id) || isDead(id)) {
          admit.release?.(kind, id);
          deletes.push(id);
          continue;
        }
        const value = read(id);
        if (admit(kind, id, value)) puts.push(value!);
      }
    };
    const turnKeys = touched.get('turns') ?? new Set<string>();
    const marks = turnKeys.size > 0 ? marksByTurn(this.marks(), turnKeys) : new Map<Id, MarkEntry[]>();
    each('sessions', sessionKeys, c.sessions, c.deleteSessions, (id) => dead('session', id));
    each('memories', memoryKeys, c.memories, c.deleteMemories, (id) => dead('memory', id));
    each('turns', turnKeys, c.turns, c.deleteTurns, undefined, (id) => this.turnOut(id, marks));
    each('edges', touched.get('edges') ?? [], c.edges, c.deleteEdges);
    each('segments', touched.get('segments') ?? [], c.segments, c.deleteSegments);
    // Deleting a chat here takes everything of it this store holds, known to the document or not.
    const gone = new Set(c.deleteSessions);
    for (const id of gone) {
      for (const t of await store.listTurns(id)) c.deleteTurns.push(t.id);
      for (const s of await store.listSegmentsBySession(id)) c.deleteSegments.push(s.id);
    }
    c.turns = c.turns.filter((t) => !gone.has(t.sessionId));
    c.segments = c.segments.filter((s) => !gone.has(s.sessionId));
    // Two devices appended to one chat apart: number its turns again, the same on every device
    // (from the turns that pass the gate: a refused one holds no position).
    const inDoc = (sessionId: Id) =>
      [...this.map('turns').entries()]
        .filter(([id, t]) => (t as Partial<Turn> | null)?.sessionId === sessionId && recordProblem('turns', id, t) === undefined)
        .map(([, t]) => t);
    const moved = await placeTurns(c, store, inDoc);
    if (moved.length > 0) this.doc.transact(() => moved.forEach((t) => this.map('turns').set(t.id, t)), LOCAL);
    return c;
  }

  /**
   * Delete-all: a new epoch, and the old epoch's maps emptied (Yjs then drops their contents).
   * Returns the new epoch.
   */
  reset(deviceId: string, now = Date.now(), id = `e${now.toString(36)}-${deviceId.slice(0, 8)}`): Epoch {
    const old = this.epoch.id;
    const epoch = { id, at: now, by: deviceId };
    this.doc.transact(() => {
      for (const k of KINDS) this.map(k, old).clear();
      this.marks(old).clear();
      this.doc.getMap<Epoch>('meta').set('epoch', epoch);
    }, LOCAL);
    return epoch;
  }
}

/**
 * The keys a transaction changed in the maps of the given epoch. Found by name: a map another
 * device made is a placeholder type until `getMap` asks for it, so comparing instances would miss it.
 */
export function touchedBy(rd: RecordDoc, tr: Y.Transaction, epoch: string): Touched {
  const names = new Map<unknown, string>();
  for (const [name, type] of rd.doc.share) names.set(type, name);
  const out: Touched = new Map();
  for (const [type, keys] of tr.changed) {
    const name = names.get(type);
    // A mark come or gone changes its turn as read: look at the turn again (if the document has it).
    if (name === `${epoch}/forgotten`) {
      const turns = out.get('turns') ?? new Set<string>();
      for (const k of keys) {
        const turn = k === null ? undefined : turnOfKey(k);
        if (turn !== undefined && rd.map('turns', epoch).has(turn)) turns.add(turn);
      }
      if (turns.size > 0) out.set('turns', turns);
      continue;
    }
    const kind = KINDS.find((k) => name === `${epoch}/${k}`);
    if (!kind) continue;
    const set = out.get(kind) ?? new Set<string>();
    for (const k of keys) if (k !== null) set.add(k);
    out.set(kind, set);
  }
  return out;
}

/** JSON with keys in order: the same record reads the same whichever way it was written. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
}
