// Sync in the app (docs/SYNC.md, "In the app"): one loop per device (one tab holds it, by a Web
// Lock) that sends this device's changes and applies the relay's through the store's `apply`.
//
// What is kept, in the store's `sync` rows: `config` (relay, key, this device, the devices),
// `state` (cursor, seq, marks... without the document), the document as `doc:base` plus a log of
// updates `doc:u:<n>`, and an out-box `out:<n>`: every local write puts what it wrote there in
// its own transaction (IdbRepository.syncHook), so no tab and no crash loses a change to sync.
// A remote message's records are written in one transaction with the cursor and the document
// rows they came with; anything after (a refused message) is saved at the end of the pull.
import type { AppliedChange, ChangeSet } from '../../ports';
import type { IdbRepository } from '../../store/repository';
import { clearSyncRows, readSyncRow, readSyncRows, readSyncRowsByPrefix, writeSyncRows, type SyncRows } from '../../store/sync-store';
import { Emitter } from '../emitter';
import { type Bytes, toBase64Url, utf8 } from './bytes';
import { SyncEngine, type SyncState } from './engine';
import type { Epoch } from './record-doc';
import { Sealer } from './envelope';
import {
  type Device,
  type DeviceInfo,
  type Rotation,
  acceptRotation,
  generateDevice,
  generateSyncKey,
  keyFromRaw,
  roomOf,
  rotate,
} from './keys';
import { newPairingCode } from './pairing';
import { joinWithCode, offerPairing } from './pairing-session';
import { ProgressRelay, RelayClient, RelayError } from './relay-client';
import { DocLog } from './doc-log';
import { outboxKey, syncedPart, tellViews } from './outbox';
import { assertRelayAllowed } from './relay-policy';
import { OFF, type RelayHistory, type SyncStatus, heldWords } from './sync-status';
import { adoptOpenChats, takeOverChats } from './chat-owner';

export interface SyncConfig {
  relayUrl: string;
  device: Device;
  key: { raw: Bytes; createdAt: number };
  devices: DeviceInfo[];
}

/** Between the tabs of one profile, on the `tealeaf-sync` channel. */
type TabMessage =
  { type: 'queued' | 'reset' | 'ask' | 'turn-off' } | { type: 'status'; status: SyncStatus } | { type: 'answer'; choice: 'wipe' | 'keep' };

/** A key change this device started (unpair, or a new key for all), kept in a row before its first post. */
export interface PendingRotation {
  key: { raw: Bytes; createdAt: number };
  rotation: Rotation;
  /** The device to leave out, when the change unpairs one: made again in the winner's room if another rotation won. */
  remove?: string;
}

export interface SyncServiceOptions {
  /** The relay's fetch (tests wrap it to stop a tab at a post). */
  fetch?: typeof fetch;
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
  private log = new DocLog();
  private outSeq = 0;
  private readonly channel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-sync') : undefined;
  private readonly memoryChannel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-memory') : undefined;
  private readonly chatChannel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-chat') : undefined;
  private pairing?: AbortController;
  private asked?: { answer: (choice: 'wipe' | 'keep') => void; fail: (e: Error) => void };
  /** Runs this device's wipe for another device's delete-all (Tealeaf stops its jobs around it). */
  wipeHere?: (wipe: () => Promise<unknown>) => Promise<unknown>;

  constructor(
    private readonly repo: IdbRepository,
    private readonly options: SyncServiceOptions = {},
  ) {
    super();
    // Every local write (any tab) leaves its synced part in the out-box, in its own transaction;
    // the repository keeps it only while sync is on (its config row exists), read in that transaction.
    repo.syncHook = (applied) => {
      const part = syncedPart(applied);
      return part && { puts: [{ key: outboxKey(Date.now(), this.outSeq++), value: part }] };
    };
    // Once the write has committed: this tab's loop, or the loop in whichever tab holds it.
    repo.afterSyncQueued = () => {
      this.kick();
      this.channel?.postMessage({ type: 'queued' } satisfies TabMessage);
    };
    if (this.channel) this.channel.onmessage = (e: MessageEvent<TabMessage>) => this.heard(e.data);
  }

  /** `replace`: the whole status (sync off), not a patch over the last one. */
  private set(patch: Partial<SyncStatus>, replace = false): void {
    this.status = replace ? { ...OFF, ...patch } : { ...this.status, ...patch };
    this.emit('status', this.status);
    // The other tabs show what the loop's tab knows (theirs would say "starting" for ever).
    if (this.holdsLoop) this.channel?.postMessage({ type: 'status', status: this.status } satisfies TabMessage);
  }

  /** What another tab of this profile said (tabs share one database, and one tab runs the loop). */
  private heard(m: TabMessage): void {
    if (m.type === 'status') {
      if (!this.holdsLoop) {
        this.status = { ...m.status, code: undefined, elsewhere: m.status.phase !== 'off' };
        this.emit('status', this.status);
      }
    } else if (m.type === 'ask') {
      if (this.holdsLoop) this.set({});
    } else if (m.type === 'answer') {
      if (this.holdsLoop) this.answerReset(m.choice);
    } else if (m.type === 'turn-off') {
      if (this.holdsLoop) void this.turnOff();
    } else this.kick();
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
    const held = () => {
      this.holdsLoop = true;
      return run();
    };
    if (!locks) void held();
    else {
      // Held while the loop runs; let go at once when there was nothing to run (sync turned off
      // meanwhile), so a tab that turns it on again later is not left waiting behind an idle one.
      void locks.request('tealeaf-sync', async () => {
        await held();
        if (this.running) await this.untilStopped();
        else this.holdsLoop = false;
      });
      // Until this tab gets the loop: the status of the tab that has it.
      this.channel?.postMessage({ type: 'ask' } satisfies TabMessage);
    }
  }
  /** This tab runs the sync loop (it holds the Web Lock). */
  private holdsLoop = false;
  private stopped?: () => void;
  private untilStopped(): Promise<void> {
    return new Promise((ok) => (this.stopped = ok));
  }

  private async resume(): Promise<void> {
    const rows = await readSyncRows(this.repo.db);
    const config = rows.get('config') as SyncConfig | undefined;
    // Turned off in another tab while this one waited for the loop.
    if (!config) return this.set(OFF, true);
    const saved = rows.get('state') as SyncState | undefined;
    // A number reserved for a post the relay may have taken after the state was last saved.
    const reserved = (rows.get('seq') as number | undefined) ?? 0;
    const state = saved || reserved ? { cursor: 0, marks: {}, ...saved, seq: Math.max(saved?.seq ?? 0, reserved) } : undefined;
    const { log, doc } = DocLog.fromRows(rows);
    this.log = log;
    // A key change stopped half-way (a closed tab): the loop finishes it before anything else.
    this.rotating = rows.get('rotation') as PendingRotation | undefined;
    // No state saved: the device stopped before its own records were taken in (turnOn, join): again.
    await this.begin(config, state ? { ...state, doc } : undefined, !saved);
  }

  /** Starts the engine and the loop; `adopt` first takes this device's records in (before any pull, so nothing received is sent back). */
  private async begin(config: SyncConfig, state: SyncState | undefined, adopt = false): Promise<void> {
    const key = await keyFromRaw(config.key.raw, config.key.createdAt);
    const room = await roomOf(key);
    this.config = config;
    this.relay = new ProgressRelay(config.relayUrl, this.options.fetch);
    const repo = this.repo;
    const store = Object.create(repo) as IdbRepository;
    // Remote writes: with the cursor and document rows, and not into the out-box again.
    store.apply = async (change: ChangeSet) => {
      const applied = await this.withRows((rows) => repo.apply(change, { remote: true, rows }));
      tellViews(applied, this.memoryChannel, this.chatChannel);
      return applied;
    };
    this.engine = new SyncEngine({
      store,
      relay: this.relay,
      room,
      sealer: await Sealer.of(key, room),
      deviceId: config.device.info.id,
      // A state of another room is dropped, but not its sequence number: a higher one is harmless.
      state: state?.room === room ? state : state ? { cursor: 0, marks: {}, seq: state.seq } : undefined,
      // Another device deleted everything: the user says whether this device follows (askReset).
      onReset: (epoch) => this.askReset(epoch),
      // The wipe keeps the state that goes with it (the new epoch, what is left to write) in its own transaction.
      wipe: async () =>
        void (await (this.wipeHere ?? ((w) => w()))(() => this.withRows((rows) => repo.wipeAll({ dropOutbox: true, rows })))),
      reserve: (seq) => writeSyncRows(repo.db, { puts: [{ key: 'seq', value: seq }] }),
      onLeft: async (id) => this.dropDevice(id),
      onRotation: async (rotation) => {
        const next = await acceptRotation(config.device, rotation);
        if (next !== 'unpaired')
          this.config = { ...this.config!, key: { raw: next.raw, createdAt: next.createdAt }, devices: rotation.devices };
        return next;
      },
    });
    this.log.watch(this.engine.records.doc);
    this.set({ phase: 'starting', relayUrl: config.relayUrl, selfId: config.device.info.id, devices: config.devices, error: undefined });
    this.running = true;
    if (adopt) {
      await this.engine.adoptStore(500, (done, total) =>
        this.set({ phase: 'syncing', progress: total > 4 ? { done, total, sending: true } : undefined }),
      );
      await this.save();
    }
    void this.loop();
  }

  /** The rows to keep now: the document's new updates, and (with state) the config and cursor. */
  private rows(withState: boolean): SyncRows {
    const puts = this.log.take();
    if (withState && this.engine && this.config) {
      puts.push({ key: 'state', value: this.engine.state(false) }, { key: 'config', value: this.config });
    }
    return { puts };
  }

  /** Runs a write with the rows that go with it; a write that fails gives the document's updates back for the next one. */
  private async withRows<T>(write: (rows: SyncRows) => Promise<T>, extra: SyncRows = { puts: [] }): Promise<T> {
    const rows = this.rows(true);
    try {
      return await write({ puts: [...extra.puts, ...rows.puts], deletes: extra.deletes });
    } catch (e) {
      this.log.putBack(rows.puts);
      throw e;
    }
  }

  private async save(extra: SyncRows = { puts: [] }): Promise<void> {
    if (!this.engine) return;
    // Now and then the log folds into one snapshot (first: the snapshot holds the updates not yet written).
    const fold = this.log.long ? this.log.snapshot(this.engine.records.doc) : undefined;
    const rows = { puts: [...(fold?.puts ?? []), ...extra.puts], deletes: [...(fold?.deletes ?? []), ...(extra.deletes ?? [])] };
    try {
      await this.withRows((r) => writeSyncRows(this.repo.db, r), rows);
    } catch (e) {
      // The snapshot was not written: fold again next time, or the updates it held are lost.
      if (fold) this.log.mustFold();
      throw e;
    }
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
    const out = await readSyncRowsByPrefix(this.repo.db, 'out:');
    if (out.length === 0) return;
    for (const [, change] of out) await this.engine!.recordLocal(change as AppliedChange);
    await this.withRows((r) => writeSyncRows(this.repo.db, r), { puts: [], deletes: out.map(([k]) => k) });
  }

  private async loop(): Promise<void> {
    let backoff = 1000;
    while (this.running && this.engine) {
      const engine = this.engine;
      this.kicked = false;
      try {
        // A key change this device started and did not finish (a crash, the relay away) comes first.
        if (this.rotating) await this.finishRotation();
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
        const epoch = engine.records.epoch.id;
        const applied = await engine.pull();
        if (!engine.unpaired) await engine.push();
        await this.save();
        // A delete-all empties the store under the views: they read it again, not a part of it.
        if (applied > 0 && engine.records.epoch.id !== epoch) this.memoryChannel?.postMessage({ type: 'memory-changed' });
        if (engine.unpaired) continue;
        this.set({
          phase: 'synced',
          progress: undefined,
          lastSyncAt: Date.now(),
          pending: engine.pending,
          error: undefined,
          devices: this.config!.devices,
          quarantined: heldWords(engine.quarantined, this.config!.devices),
          history: this.historyOf(engine),
        });
        backoff = 1000;
        const room = await this.room();
        await this.sleep((signal) => this.relay!.wait(room, engine.position, signal));
      } catch (e) {
        if (!this.running) return;
        const offline = e instanceof RelayError && e.status === undefined;
        this.set({
          phase: offline ? 'offline' : 'error',
          error: (e as Error).message,
          pending: engine.pending,
          progress: undefined,
          quarantined: heldWords(engine.quarantined, this.config?.devices ?? []),
        });
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

  /** The relay's history as this device saw it, with senders by name; undefined when all was well. */
  private historyOf(engine: SyncEngine): RelayHistory | undefined {
    const h = engine.history;
    const devices = this.config?.devices ?? [];
    const missing = engine.book
      .missing()
      .map((m) => ({ from: devices.find((d) => d.id === m.device)?.name ?? 'a device not in your list', count: m.count }));
    if (missing.length === 0 && !h.behind && !h.reordered && !h.refused) return undefined;
    return { missing, behind: h.behind, reordered: h.reordered, refused: h.refused };
  }

  private async room(): Promise<string> {
    return roomOf(await keyFromRaw(this.config!.key.raw, this.config!.key.createdAt));
  }

  /** The first device: makes the key and sends everything this device holds. */
  async turnOn(relayUrl: string, name: string): Promise<void> {
    assertRelayAllowed(relayUrl);
    const key = await generateSyncKey();
    const device = await generateDevice(name);
    const config: SyncConfig = { relayUrl, device, key: { raw: key.raw, createdAt: key.createdAt }, devices: [device.info] };
    await writeSyncRows(this.repo.db, { puts: [{ key: 'config', value: config }] });
    await adoptOpenChats(this.repo, device.info.id);
    this.hold(() => this.begin(config, undefined, true));
  }

  /** A new device: takes the key ring from the device showing `code`; its own memory joins the rest. */
  async join(relayUrl: string, code: string, name: string): Promise<void> {
    assertRelayAllowed(relayUrl);
    const got = await joinWithCode(new RelayClient(relayUrl), code.trim().toUpperCase(), name);
    const config: SyncConfig = {
      relayUrl,
      device: got.device,
      key: { raw: got.key.raw, createdAt: got.key.createdAt },
      devices: got.devices,
    };
    await writeSyncRows(this.repo.db, { puts: [{ key: 'config', value: config }] });
    await adoptOpenChats(this.repo, got.device.info.id);
    this.hold(() => this.begin(config, undefined, true));
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

  /** A device that turned sync off (it forgot the key) leaves the list. */
  private dropDevice(id: string): void {
    if (this.config)
      this.set({ devices: (this.config = { ...this.config, devices: this.config.devices.filter((d) => d.id !== id) }).devices });
  }

  /**
   * Unpairs a device (a new key for the others: keys.ts, rotate); `undefined` rotates the key for
   * all. Crash-safe: the new key and its notice are kept in a `rotation` row before anything is
   * posted, and the change is finished from that row (by the loop after a restart) until the
   * config, the state and the row's removal are written together.
   */
  async unpair(deviceId?: string): Promise<void> {
    const config = this.config;
    if (!config || !this.engine) throw new Error('Sync is off.');
    const keep = config.devices.filter((d) => d.id !== deviceId);
    if (deviceId) await takeOverChats(this.repo, deviceId, config.device.info.id);
    const { key, rotation } = await rotate(config.device, keep);
    const pending: PendingRotation = { key: { raw: key.raw, createdAt: key.createdAt }, rotation, remove: deviceId };
    await writeSyncRows(this.repo.db, { puts: [{ key: 'rotation', value: pending }] });
    this.rotating = pending;
    await this.finishRotation();
    this.kick();
  }

  /** A key change this device started, carried to its end (also again, after a crash at any step). */
  private rotating?: PendingRotation;
  private rotation?: Promise<void>;
  /** One run at a time: the loop and the user's click may both ask. */
  private finishRotation(): Promise<void> {
    this.rotation ??= this.rotate().finally(() => (this.rotation = undefined));
    return this.rotation;
  }
  private async rotate(): Promise<void> {
    const engine = this.engine;
    const p = this.rotating;
    if (!engine || !p) return;
    const key = await keyFromRaw(p.key.raw, p.key.createdAt);
    const result = await engine.rekey(key, p.rotation, utf8(JSON.stringify(p.rotation)));
    // Moved: this device's own key and ring. Lost: another device's change came first, and
    // `onRotation` took its key and ring; an unpairing is made again there if it still matters.
    if (result === 'moved') this.config = { ...this.config!, key: p.key, devices: p.rotation.devices };
    const again = result === 'lost' && p.remove !== undefined && this.config!.devices.some((d) => d.id === p.remove);
    this.rotating = undefined;
    await this.save({ ...this.log.snapshot(engine.records.doc), deletes: ['doc:u:*', 'rotation'] });
    this.set({ devices: this.config!.devices });
    if (again) await this.unpair(p.remove);
  }

  /**
   * Delete-all on this device: the wipe left a `reset` row (IdbRepository.wipeAll); the tab that
   * runs the loop starts a new epoch from it, so every paired device empties too (SYNC.md,
   * "Delete-all"). From another tab, the loop tab is woken; the row waits for it either way.
   */
  async deletedAll(): Promise<void> {
    if (!this.engine) {
      this.channel?.postMessage({ type: 'reset' } satisfies TabMessage);
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

  /** Another device deleted everything: the loop waits here until the user answers (`answerReset`). */
  private askReset(epoch: Epoch): Promise<'wipe' | 'keep'> {
    const name = this.config?.devices.find((d) => d.id === epoch.by)?.name ?? 'Another device';
    return new Promise((answer, fail) => {
      this.asked = { answer, fail };
      this.set({ phase: 'deleted-elsewhere', deletedBy: { name, at: epoch.at }, progress: undefined });
    });
  }

  /** The user's answer to another device's delete-all: empty this device too, or keep its data (sent back to all). */
  answerReset(choice: 'wipe' | 'keep'): void {
    if (!this.holdsLoop) {
      this.channel?.postMessage({ type: 'answer', choice } satisfies TabMessage);
      return;
    }
    const asked = this.asked;
    if (!asked) return;
    this.asked = undefined;
    this.set({ phase: 'syncing', deletedBy: undefined });
    asked.answer(choice);
  }

  /** A delete-all made in any tab: the new epoch and the `reset` row's removal in one transaction. */
  private async takeReset(): Promise<boolean> {
    if (!this.engine || (await readSyncRow(this.repo.db, 'reset')) === undefined) return false;
    await this.engine.deleteAll();
    const r = this.rows(true);
    await writeSyncRows(this.repo.db, { puts: r.puts, deletes: ['reset'] });
    return true;
  }

  /**
   * Stops the loop and forgets what it held in memory, leaving every row as it is: what a closed
   * tab leaves behind (the crash tests start a new service on the same database after it).
   */
  stop(): void {
    this.running = false;
    this.asked?.fail(new Error('The tab closed.'));
    this.asked = undefined;
    this.pairing?.abort();
    this.kick();
    this.engine = undefined;
    this.holdsLoop = false;
    this.stopped?.();
  }

  /** Stops syncing on this device and forgets the key (its memory stays). */
  async turnOff(): Promise<void> {
    if (this.status.elsewhere) {
      // The loop's tab stops it (and clears the rows); this tab hears its status.
      this.channel?.postMessage({ type: 'turn-off' } satisfies TabMessage);
      return;
    }
    // The others drop this device from their list (if the relay answers within 3 s).
    await Promise.race([this.engine?.leave().catch(() => undefined), new Promise((ok) => setTimeout(ok, 3000))]);
    this.running = false;
    // An open question about another device's delete-all ends unanswered: nothing is wiped or sent.
    this.asked?.fail(new Error('Sync was turned off.'));
    this.asked = undefined;
    this.pairing?.abort();
    this.kick();
    this.engine = undefined;
    this.config = undefined;
    await clearSyncRows(this.repo.db);
    // Told to the other tabs before the lock goes to one of them.
    this.set(OFF, true);
    this.holdsLoop = false;
    this.stopped?.();
  }
}
