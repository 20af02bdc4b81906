// What Settings says about sync, derived from one state (docs/SYNC.md, "In the app"). Every word the
// user reads about sync comes from `syncWords`; tests/unit/sync/sync-status.test.ts covers each phase.
import { distinctNames } from './device-names';
import type { DeviceInfo } from './keys';

export type SyncPhase = 'off' | 'starting' | 'syncing' | 'synced' | 'offline' | 'error' | 'unpaired' | 'deleted-elsewhere';

export interface SyncStatus {
  phase: SyncPhase;
  relayUrl?: string;
  /** This device's id (the others in `devices` are the ones it syncs with). */
  selfId?: string;
  devices: DeviceInfo[];
  lastSyncAt?: number;
  /** Local changes not yet taken by the relay. */
  pending: boolean;
  /** The last failure, in words, for offline and error. */
  error?: string;
  /** A first (large) sync: parts of this device's memory sent (`sending`), or messages read of the relay's total. */
  progress?: { done: number; total: number; sending?: boolean };
  /** A pairing code shown on this device, waiting for the other one. */
  code?: string;
  /** Another device deleted everything (phase `deleted-elsewhere`): who and when; sync waits for the user's choice. */
  deletedBy?: { name: string; at: number };
  /** Another tab of this browser runs sync; this one shows its state and forwards answers. */
  elsewhere?: boolean;
  /** Records another device sent that this one left out (record-gate.ts), in the user's words. */
  quarantined?: HeldRecord[];
  /** What the relay's history showed that it should not have (inbox.ts); absent when nothing. */
  history?: RelayHistory;
  /** Devices of the ring not seen in the room since this device moved there by a key change (`since`). */
  notSeen?: { ids: string[]; since: number };
}

/** What the relay did that it should not have, as this device saw it. */
export interface RelayHistory {
  /** Messages known to be missing, by sender's name. */
  missing: Array<{ from: string; count: number }>;
  /** The relay had fewer messages than this device had read. */
  behind?: { had: number; now: number; at: number };
  /** Messages that came before what their sender had read when it sent them. */
  reordered?: number;
  /** Messages refused, by reason. */
  refused?: Partial<Record<'malformed' | 'wrong-key' | 'tampered' | 'replayed' | 'forged', number>>;
  /** The last refusal, in words. */
  lastRefused?: string;
  /** This device stopped in a room a key change closed, without a key change it could take: why. */
  leftBehind?: string;
}

/** A record left out: what it is (`chat`, `message`, `memory`...), its id, who sent it and why. */
export interface HeldRecord {
  kind: string;
  id: string;
  from: string;
  problem: string;
}

/** The relay's history as this device saw it (inbox.ts), senders by name; undefined when all was well. */
export function historyOf(
  h: {
    behind?: RelayHistory['behind'];
    reordered?: number;
    refused?: RelayHistory['refused'];
    lastRefused?: { why: string };
    leftBehind?: { why: string };
  },
  missing: ReadonlyArray<{ device: string; count: number }>,
  devices: readonly DeviceInfo[],
): RelayHistory | undefined {
  const named = missing.map((m) => ({ from: devices.find((d) => d.id === m.device)?.name ?? 'a device not in your list', count: m.count }));
  if (named.length === 0 && !h.behind && !h.reordered && !h.refused && !h.leftBehind) return undefined;
  const history = { missing: named, behind: h.behind, reordered: h.reordered, refused: h.refused, lastRefused: h.lastRefused?.why };
  return h.leftBehind ? { ...history, leftBehind: h.leftBehind.why } : history;
}

/**
 * Devices of the ring this device has not seen in its room since it moved there by a key change:
 * a device still asleep, or one left in the old room (a stolen device's new key it took). Devices
 * paired after the move are not counted.
 */
export function notSeenSince(
  engine: { movedAt?: number; seenHere: ReadonlySet<string> },
  devices: readonly DeviceInfo[],
): SyncStatus['notSeen'] {
  const since = engine.movedAt;
  if (since === undefined) return undefined;
  const ids = devices.filter((d) => d.pairedAt < since && !engine.seenHere.has(d.id)).map((d) => d.id);
  return ids.length ? { ids, since } : undefined;
}

/** The note beside a device in Settings' list when it has not shown up since the key changed; undefined when it has. */
export function notSeenWords(s: SyncStatus, id: string): string | undefined {
  if (!s.notSeen?.ids.includes(id)) return undefined;
  return `not seen since the key changed on ${new Date(s.notSeen.since).toLocaleString()}: if this stays, it did not follow the change (lost, stolen or asleep); unpair it if you no longer hold it`;
}

const RECORD_WORDS: Record<string, string> = {
  sessions: 'chat',
  turns: 'message',
  memories: 'memory',
  edges: 'link',
  segments: 'passage',
  tombstones: 'deletion',
};

/** The gate's list in words: the sender by its name in the device list. */
export function heldWords(
  held: ReadonlyArray<{ kind: string; id: string; from?: string; problem: string }>,
  devices: readonly DeviceInfo[],
): HeldRecord[] {
  return held.map((q) => ({
    kind: RECORD_WORDS[q.kind] ?? q.kind,
    id: q.id,
    from: q.from === undefined ? 'another device' : (devices.find((d) => d.id === q.from)?.name ?? 'a device not in your list'),
    problem: q.problem,
  }));
}

/** What an engine has seen that Settings shows: records held back and the relay's history, senders by name. */
export function seenWords(
  engine: {
    quarantined: ReadonlyArray<{ kind: string; id: string; from?: string; problem: string }>;
    history: Parameters<typeof historyOf>[0];
    book: { missing(): ReadonlyArray<{ device: string; count: number }> };
    movedAt?: number;
    seenHere?: ReadonlySet<string>;
  },
  devices: readonly DeviceInfo[],
): Pick<SyncStatus, 'quarantined' | 'history' | 'notSeen'> {
  const named = distinctNames(devices);
  return {
    quarantined: heldWords(engine.quarantined, named),
    history: historyOf(engine.history, engine.book.missing(), named),
    notSeen: engine.seenHere ? notSeenSince({ movedAt: engine.movedAt, seenHere: engine.seenHere }, devices) : undefined,
  };
}

export const OFF: SyncStatus = { phase: 'off', devices: [], pending: false };

export interface SyncWords {
  /** One line: the state. */
  headline: string;
  /** What it means or what to do; empty when nothing to add. */
  detail: string;
}

function ago(at: number | undefined, now: number): string {
  if (at === undefined) return 'not yet';
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 10) return 'just now';
  if (s < 90) return `${s} seconds ago`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} minute${m === 1 ? '' : 's'} ago`;
  return new Date(at).toLocaleString();
}

export function syncWords(s: SyncStatus, now = Date.now()): SyncWords {
  const w = phaseWords(s, now);
  const n = s.quarantined?.length ?? 0;
  const held =
    n === 0 || s.phase === 'off'
      ? ''
      : ` ${n} record${n === 1 ? '' : 's'} from another device ${n === 1 ? 'was' : 'were'} left out (listed below): this version cannot use ${n === 1 ? 'it' : 'them'}. The rest syncs.`;
  const tabs = s.elsewhere ? ' Sync runs in another Tealeaf tab: pair or unpair devices there.' : '';
  const history = s.history && s.phase !== 'off' ? ` ${historyWords(s.history, now, s.phase === 'unpaired').join(' ')}` : '';
  const headline = w.headline === 'Synced' && s.history?.missing.length ? 'Synced, but messages are missing' : w.headline;
  return { headline, detail: `${w.detail}${history}${held}${tabs}`.trim() };
}

const REFUSALS: Record<string, (n: number) => string> = {
  replayed: () => 'replayed (sent again by the relay)',
  tampered: () => 'altered on the way',
  'wrong-key': () => 'sealed with a newer key this device was not given (the key changed)',
  malformed: () => 'not readable by this version',
  forged: (n) => `signed by no paired device (${n === 1 ? 'a change' : 'changes'} of the device list)`,
};

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/** What to do when this device may have been left out of a new key. */
const PAIR_AGAIN = 'turn sync off here, then pair it again with a code from one of your devices. Its memory stays here.';

/**
 * What the relay did that it should not have, and what it means for the user, one sentence each.
 * `removed`: this device was left out of a new key (phase `unpaired`): what it could not read is
 * its removal's doing, whatever the envelope said (both ends run the same version).
 */
export function historyWords(h: RelayHistory, now = Date.now(), removed = false): string[] {
  const out: string[] = [];
  for (const m of h.missing) {
    out.push(
      `${m.count} ${plural(m.count, 'message', 'messages')} from ${m.from} ${plural(m.count, 'is', 'are')} missing: the relay dropped or is holding ${plural(m.count, 'it', 'them')} back. Your other devices were asked to send what they hold again; if this stays, do not trust this relay.`,
    );
  }
  if (h.behind && now - h.behind.at < 7 * 24 * 3600_000) {
    out.push(
      `On ${new Date(h.behind.at).toLocaleString()} the relay had lost messages (it had ${h.behind.now}, this device had read ${h.behind.had}): it was restarted empty or from an older copy. This device sent what it holds again; nothing is needed from you.`,
    );
  }
  if (h.reordered)
    out.push(
      `${h.reordered} ${plural(h.reordered, 'message', 'messages')} came out of order (the relay reordered them); applied all the same.`,
    );
  const refused = Object.entries(h.refused ?? {}).filter(([, n]) => (n ?? 0) > 0);
  const total = refused.reduce((sum, [, n]) => sum + (n ?? 0), 0);
  if (total > 0 && removed) {
    out.push(
      `${total} ${plural(total, 'message', 'messages')} could not be read here: this device was removed from sync, and your other devices moved to a new key it was not given. To sync it again, ${PAIR_AGAIN}`,
    );
  } else if (total > 0) {
    const reasons = refused.map(([why, n = 0]) => `${refused.length > 1 ? `${n} ` : ''}${REFUSALS[why]?.(n) ?? why}`).join(', ');
    const last = h.refused?.forged && h.lastRefused ? ` The last: ${h.lastRefused}.` : '';
    const rekeyed = h.refused?.['wrong-key'] ? ` If this stays, this device was removed from sync: ${PAIR_AGAIN}` : '';
    out.push(`${total} ${plural(total, 'message was', 'messages were')} refused: ${reasons}.${last}${rekeyed}`);
  }
  return out;
}

function phaseWords(s: SyncStatus, now: number): SyncWords {
  const others = s.devices.filter((d) => d.id !== s.selfId).length;
  const devices = others === 0 ? 'no other device paired yet' : `${others} other device${others === 1 ? '' : 's'}`;
  const pending = s.pending ? ' Changes made here wait to be sent.' : '';
  switch (s.phase) {
    case 'off':
      return { headline: 'Sync is off', detail: 'Nothing leaves this device. Turn sync on to pair another device.' };
    case 'starting':
      return { headline: 'Sync is starting', detail: `Connecting to the relay at ${s.relayUrl ?? '?'}.` };
    case 'syncing': {
      const p = s.progress;
      const part = p && p.total > 0 ? ` (${Math.min(100, Math.round((p.done / p.total) * 100))} %)` : '';
      const what = !p ? 'Syncing' : p.sending ? 'Sending this device’s memory' : 'Receiving your memory';
      return { headline: `${what}${part}`, detail: `With ${devices}.${pending}` };
    }
    case 'synced':
      return {
        headline: s.pending ? 'Synced, sending changes' : 'Synced',
        detail: `With ${devices}. Last sync: ${ago(s.lastSyncAt, now)}.`,
      };
    case 'offline':
      return {
        headline: 'Offline: the relay cannot be reached',
        detail: `Changes are kept here and sent when it answers again. Last sync: ${ago(s.lastSyncAt, now)}.${pending}`,
      };
    case 'error':
      return { headline: 'Sync stopped on an error', detail: `${s.error ?? 'Unknown error.'} It tries again by itself.${pending}` };
    case 'deleted-elsewhere': {
      const who = s.deletedBy?.name ?? 'Another device';
      const when = s.deletedBy ? ` on ${new Date(s.deletedBy.at).toLocaleString()}` : '';
      return {
        headline: `${who} deleted all its data`,
        detail: `It was deleted there${when}. This device still has its own: delete it here too, or keep it and send it back to your other devices. Syncing waits for your choice.${pending}`,
      };
    }
    case 'unpaired':
      if (s.history?.leftBehind)
        return {
          headline: 'This device was unpaired',
          detail: `Your other devices moved to a new key that this device could not follow (${s.history.leftBehind}). Its memory stays here but no longer syncs. If you still use it, turn sync off here and pair it again from a device you hold.`,
        };
      return {
        headline: 'This device was unpaired',
        detail: 'Another device removed it. Its memory stays here but no longer syncs. Turn sync off to pair it again.',
      };
  }
}
