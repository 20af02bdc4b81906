// Sync in the app (docs/SYNC.md, "In the app"): one loop per device (one tab holds it, by a Web
// Lock) that sends this device's changes and applies the relay's through the store's `apply`.
//
// What is kept, in the store's `sync` rows: `config` (relay, key, this device, the devices),
// `state` (cursor, seq, marks... without the document), the document as `doc:base` plus a log of
// updates `doc:u:<n>`, and an out-box `out:<n>`: every local write puts what it wrote there in
// its own transaction (IdbRepository.syncHook), so no tab and no crash loses a change to sync.
// A remote message's records are written in one transaction with the cursor and the document
// rows they came with; anything after (a refused message) is saved at the end of the pull.
import * as Y from 'yjs';
import type { AppliedChange, ChangeSet } from '../../ports';
import type { IdbRepository } from '../../store/repository';
import { clearSyncRows, readSyncRow, readSyncRows, writeSyncRows, type SyncRows } from '../../store/sync-store';
import { Emitter } from '../emitter';
import { type Bytes, toBase64Url } from './bytes';
import { SyncEngine, type SyncState } from './engine';
import { Sealer } from './envelope';
import { type Device, type DeviceInfo, acceptRotation, generateDevice, generateSyncKey, keyFromRaw, roomOf, rotate } from './keys';
import { newPairingCode } from './pairing';
import { joinWithCode, offerPairing } from './pairing-session';
import { RelayClient, RelayError } from './relay-client';
import { relayRefusal, pagePolicy } from './relay-policy';
import { OFF, type SyncStatus } from './sync-status';
import { adoptOpenChats, takeOverChats } from './chat-owner';

export interface SyncConfig {
  relayUrl: string;
  device: Device;
  key: { raw: Bytes; createdAt: number };
  devices: DeviceInfo[];
}

/** Only these kinds sync (vectors and jobs stay per device: SYNC.md, "Mapping our records"). */
function syncedPart(c: AppliedChange): AppliedChange | undefined {
  const part: AppliedChange = {
    dropped: [],
    sessions: c.sessions,
    turns: c.turns,
    memories: c.memories,
    edges: c.edges,
    segments: c.segments,
    tombstones: c.tombstones,
    deleteSessions: c.deleteSessions,
    deleteTurns: c.deleteTurns,
    deleteMemories: c.deleteMemories,
    deleteEdges: c.deleteEdges,
    deleteSegments: c.deleteSegments,
    deleteTombstones: c.deleteTombstones,
  };
  const any = Object.entries(part).some(([k, v]) => k !== 'dropped' && Array.isArray(v) && v.length > 0);
  return any ? part : undefined;
}

const LOG_LIMIT = 300;
const pad = (n: number) => n.toString().padStart(12, '0');

class ProgressRelay extends RelayClient {
  onRead?: (seq: number, last: number) => void;
  override async read(room: string, after: number, limit?: number, signal?: AbortSignal) {
    const got = await super.read(room, after, limit, signal);
    this.onRead?.(got.messages.at(-1)?.seq ?? after, got.last);
    return got;
  }
}

export class SyncService extends Emitter<{ status: SyncStatus }> {
  status: SyncStatus = OFF;
  private config?: SyncConfig;
  private engine?: SyncEngine;
  private relay?: ProgressRelay;
  private running = false;
  private wake?: AbortController;
  /** A kick heard while the loop was busy: it goes round again instead of waiting. */
  private kicked = false;
  private logN = 0;
  private logRows = 0;
  private docUpdates: Bytes[] = [];
  private outSeq = 0;
  private readonly channel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-sync') : undefined;
  private readonly memoryChannel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-memory') : undefined;
  private readonly chatChannel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-chat') : undefined;
  private pairing?: AbortController;

  constructor(private readonly repo: IdbRepository) {
    super();
    // Every local write (any tab) leaves its synced part in the out-box, in its own transaction;
    // the repository keeps it only while sync is on (its config row exists), read in that transaction.
    repo.syncHook = (applied) => {
      const part = syncedPart(applied);
      if (!part) return undefined;
      return { puts: [{ key: `out:${pad(Date.now())}-${pad(this.outSeq++)}-${Math.random().toString(36).slice(2, 8)}`, value: part }] };
    };
    // Once the write has committed: this tab's loop, or the loop in whichever tab holds it.
    repo.afterSyncQueued = () => {
      this.kick();
      this.channel?.postMessage({ type: 'queued' });
    };
    if (this.channel) this.channel.onmessage = () => this.kick();
  }

  private set(patch: Partial<SyncStatus>): void {
    this.status = { ...this.status, ...patch };
    this.emit('status', this.status);
  }

  /** At start: resumes sync if it is on (one tab runs the loop; the others wait for the lock). */
  async start(): Promise<void> {
    const rows = await readSyncRows(this.repo.db);
    const config = rows.get('config') as SyncConfig | undefined;
    if (!config) return;
    this.set({ phase: 'starting', relayUrl: config.relayUrl, selfId: config.device.info.id, devices: config.devices });
    this.hold(() => this.resume());
  }

  private hold(run: () => Promise<void>): void {
    const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
    if (!locks) void run();
    else void locks.request('tealeaf-sync', () => run().then(() => this.untilStopped()));
  }
  private stopped?: () => void;
  private untilStopped(): Promise<void> {
    return new Promise((ok) => (this.stopped = ok));
  }

  private async resume(): Promise<void> {
    const rows = await readSyncRows(this.repo.db);
    const config = rows.get('config') as SyncConfig | undefined;
    if (!config) return;
    const saved = rows.get('state') as SyncState | undefined;
    // A number reserved for a post the relay may have taken after the state was last saved.
    const reserved = (rows.get('seq') as number | undefined) ?? 0;
    const state = saved || reserved ? { cursor: 0, marks: {}, ...saved, seq: Math.max(saved?.seq ?? 0, reserved) } : undefined;
    const updates = [...rows.entries()].filter(([k]) => k.startsWith('doc:u:')).sort(([a], [b]) => (a < b ? -1 : 1));
    const base = rows.get('doc:base') as Bytes | undefined;
    const parts = [...(base ? [base] : []), ...updates.map(([, v]) => v as Bytes)];
    this.logN = updates.length ? Number(updates.at(-1)![0].slice(6)) + 1 : 0;
    this.logRows = updates.length;
    await this.begin(config, state ? { ...state, doc: parts.length ? (Y.mergeUpdates(parts) as Bytes) : undefined } : undefined);
  }

  private async begin(config: SyncConfig, state: SyncState | undefined): Promise<void> {
    const key = await keyFromRaw(config.key.raw, config.key.createdAt);
    const room = await roomOf(key);
    this.config = config;
    this.relay = new ProgressRelay(config.relayUrl);
    const repo = this.repo;
    const store = Object.create(repo) as IdbRepository;
    // Remote writes: with the cursor and document rows, and not into the out-box again.
    store.apply = (change: ChangeSet) => repo.apply(change, { remote: true, rows: this.rows(true) });
    this.engine = new SyncEngine({
      store,
      relay: this.relay,
      room,
      sealer: await Sealer.of(key, room),
      deviceId: config.device.info.id,
      // A state of another room is dropped, but not its sequence number: a higher one is harmless.
      state: state?.room === room ? state : state ? { cursor: 0, marks: {}, seq: state.seq } : undefined,
      wipe: async () => void (await repo.wipeAll()),
      reserve: (seq) => writeSyncRows(repo.db, { puts: [{ key: 'seq', value: seq }] }),
      onRotation: async (rotation) => {
        const next = await acceptRotation(config.device, rotation);
        if (next !== 'unpaired') this.config = { ...config, key: { raw: next.raw, createdAt: next.createdAt }, devices: rotation.devices };
        return next;
      },
    });
    this.engine.records.doc.on('update', (u: Uint8Array) => this.docUpdates.push(u as Bytes));
    this.set({ phase: 'starting', relayUrl: config.relayUrl, selfId: config.device.info.id, devices: config.devices, error: undefined });
    this.running = true;
    void this.loop();
  }

  /** The rows to keep now: the document's new updates, and (with state) the config and cursor. */
  private rows(withState: boolean): SyncRows {
    const puts: SyncRows['puts'] = this.docUpdates.map((u) => ({ key: `doc:u:${pad(this.logN++)}`, value: u }));
    this.logRows += this.docUpdates.length;
    this.docUpdates = [];
    if (withState && this.engine && this.config) {
      puts.push({ key: 'state', value: this.engine.state(false) }, { key: 'config', value: this.config });
    }
    return { puts };
  }

  private async save(): Promise<void> {
    if (!this.engine) return;
    if (this.logRows > LOG_LIMIT) {
      // The log folds into one snapshot now and then (one transaction: never both, never neither).
      this.docUpdates = [];
      const snapshot = Y.encodeStateAsUpdate(this.engine.records.doc) as Bytes;
      const rows = this.rows(true);
      rows.puts.push({ key: 'doc:base', value: snapshot });
      await writeSyncRows(this.repo.db, { puts: rows.puts, deletes: ['doc:u:*'] });
      this.logRows = 0;
      return;
    }
    await writeSyncRows(this.repo.db, this.rows(true));
  }

  kick(): void {
    this.kicked = true;
    this.wake?.abort();
  }

  /** Waits for `until` unless a kick came since the loop last looked (a write made while it read or sent). */
  private async sleep(until: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    this.wake = new AbortController();
    if (this.kicked) return;
    try {
      await until(this.wake.signal);
    } catch (e) {
      if (!this.wake.signal.aborted) throw e;
    }
  }

  /** Local writes from the out-box into the document (then deleted from the out-box, with the document rows). */
  private async drainOutbox(): Promise<void> {
    const rows = await readSyncRows(this.repo.db);
    const out = [...rows.entries()].filter(([k]) => k.startsWith('out:')).sort(([a], [b]) => (a < b ? -1 : 1));
    if (out.length === 0) return;
    for (const [, change] of out) await this.engine!.recordLocal(change as AppliedChange);
    const r = this.rows(true);
    await writeSyncRows(this.repo.db, { puts: r.puts, deletes: out.map(([k]) => k) });
  }

  private async loop(): Promise<void> {
    let backoff = 1000;
    while (this.running && this.engine) {
      const engine = this.engine;
      this.kicked = false;
      try {
        // Before the out-box: what was written after the wipe belongs to the new epoch.
        await this.takeReset();
        await this.drainOutbox();
        if (engine.unpaired) {
          this.set({ phase: 'unpaired', pending: false });
          return;
        }
        const start = engine.position;
        this.relay!.onRead = (seq, last) => {
          if (last - start > 4) this.set({ phase: 'syncing', progress: { done: seq - start, total: last - start } });
        };
        const applied = await engine.pull();
        if (!engine.unpaired) await engine.push();
        await this.save();
        if (applied > 0) this.announce();
        if (engine.unpaired) continue;
        this.set({
          phase: 'synced',
          progress: undefined,
          lastSyncAt: Date.now(),
          pending: engine.pending,
          error: undefined,
          devices: this.config!.devices,
        });
        backoff = 1000;
        const room = await this.room();
        await this.sleep((signal) => this.relay!.wait(room, engine.position, signal));
      } catch (e) {
        if (!this.running) return;
        const offline = e instanceof RelayError && e.status === undefined;
        this.set({ phase: offline ? 'offline' : 'error', error: (e as Error).message, pending: engine.pending, progress: undefined });
        await this.sleep(
          (signal) =>
            new Promise<void>((ok) => {
              const t = setTimeout(ok, backoff);
              signal.addEventListener('abort', () => (clearTimeout(t), ok()));
            }),
        );
        backoff = Math.min(backoff * 2, 15_000);
      }
    }
  }

  private async room(): Promise<string> {
    return roomOf(await keyFromRaw(this.config!.key.raw, this.config!.key.createdAt));
  }

  /** Tells this tab's views (and other tabs) what a remote change touched, as another tab's write would. */
  private announce(): void {
    this.memoryChannel?.postMessage({ type: 'memory-changed' });
    this.chatChannel?.postMessage({ type: 'session-changed', sessionId: '' });
  }

  private checkRelay(relayUrl: string): void {
    const refusal = relayRefusal(relayUrl, pagePolicy());
    if (refusal) throw new Error(refusal);
  }

  /** The first device: makes the key and sends everything this device holds. */
  async turnOn(relayUrl: string, name: string): Promise<void> {
    this.checkRelay(relayUrl);
    const key = await generateSyncKey();
    const device = await generateDevice(name);
    const config: SyncConfig = { relayUrl, device, key: { raw: key.raw, createdAt: key.createdAt }, devices: [device.info] };
    await writeSyncRows(this.repo.db, { puts: [{ key: 'config', value: config }] });
    await adoptOpenChats(this.repo, device.info.id);
    this.hold(async () => {
      await this.begin(config, undefined);
      await this.engine!.adoptStore();
      await this.save();
    });
  }

  /** A new device: takes the key ring from the device showing `code`; its own memory joins the rest. */
  async join(relayUrl: string, code: string, name: string): Promise<void> {
    this.checkRelay(relayUrl);
    const got = await joinWithCode(new RelayClient(relayUrl), code.trim().toUpperCase(), name);
    const config: SyncConfig = {
      relayUrl,
      device: got.device,
      key: { raw: got.key.raw, createdAt: got.key.createdAt },
      devices: got.devices,
    };
    await writeSyncRows(this.repo.db, { puts: [{ key: 'config', value: config }] });
    await adoptOpenChats(this.repo, got.device.info.id);
    this.hold(async () => {
      await this.begin(config, undefined);
      await this.engine!.adoptStore();
      await this.save();
    });
  }

  /** Shows a code for a new device and waits for it (10 minutes); the device list grows when it joins. */
  async offerCode(): Promise<string> {
    const config = this.config;
    if (!config) throw new Error('Turn sync on first.');
    const code = newPairingCode();
    this.pairing?.abort();
    const ctl = (this.pairing = new AbortController());
    this.set({ code });
    offerPairing(
      new RelayClient(config.relayUrl),
      code,
      { key: toBase64Url(config.key.raw), keyCreatedAt: config.key.createdAt, devices: config.devices, relayUrl: config.relayUrl },
      { signal: ctl.signal },
    ).then(
      async (joined) => {
        this.config = { ...this.config!, devices: [...this.config!.devices.filter((d) => d.id !== joined.id), joined] };
        await this.save();
        this.set({ code: undefined, devices: this.config.devices });
      },
      (e: unknown) => {
        if (!ctl.signal.aborted) this.set({ code: undefined, phase: 'error', error: (e as Error).message });
      },
    );
    return code;
  }

  /** Unpairs a device (a new key for the others: keys.ts, rotate); `undefined` rotates the key for all. */
  async unpair(deviceId?: string): Promise<void> {
    const config = this.config;
    if (!config || !this.engine) throw new Error('Sync is off.');
    const keep = config.devices.filter((d) => d.id !== deviceId);
    if (deviceId) await takeOverChats(this.repo, deviceId, config.device.info.id);
    const { key, rotation } = await rotate(config.device, keep);
    await this.engine.rekey(key, rotation);
    this.config = { ...config, key: { raw: key.raw, createdAt: key.createdAt }, devices: rotation.devices };
    this.docUpdates = [];
    await writeSyncRows(this.repo.db, {
      puts: [
        { key: 'doc:base', value: Y.encodeStateAsUpdate(this.engine.records.doc) as Bytes },
        { key: 'state', value: this.engine.state(false) },
        { key: 'config', value: this.config },
      ],
      deletes: ['doc:u:*'],
    });
    this.set({ devices: this.config.devices });
    this.kick();
  }

  /**
   * Delete-all on this device: the wipe left a `reset` row (IdbRepository.wipeAll); the tab that
   * runs the loop starts a new epoch from it, so every paired device empties too (SYNC.md,
   * "Delete-all"). From another tab, the loop tab is woken; the row waits for it either way.
   */
  async deletedAll(): Promise<void> {
    if (!this.engine) {
      this.channel?.postMessage({ type: 'reset' });
      return;
    }
    if (!(await this.takeReset())) return;
    try {
      await this.engine.push();
      await this.save();
    } catch {
      // Offline: the new epoch is in the saved document and goes out with the next push.
    }
  }

  /** A delete-all made in any tab: the new epoch and the `reset` row's removal in one transaction. */
  private async takeReset(): Promise<boolean> {
    if (!this.engine || (await readSyncRow(this.repo.db, 'reset')) === undefined) return false;
    await this.engine.deleteAll();
    const r = this.rows(true);
    await writeSyncRows(this.repo.db, { puts: r.puts, deletes: ['reset'] });
    return true;
  }

  /** Stops syncing on this device and forgets the key (its memory stays). */
  async turnOff(): Promise<void> {
    this.running = false;
    this.pairing?.abort();
    this.kick();
    this.engine = undefined;
    this.config = undefined;
    await clearSyncRows(this.repo.db);
    this.stopped?.();
    this.set({ ...OFF });
  }
}
