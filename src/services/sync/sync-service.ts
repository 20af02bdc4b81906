// Sync in the app (docs/SYNC.md, "In the app"): one loop per device (one tab holds it, by a Web
// Lock) that sends this device's changes and applies the relay's through the store's `apply`.
//
// What is kept, in the store's `sync` rows: `config` (relay, key, this device, the devices),
// `state` (cursor, seq, marks... without the document), the document as `doc:base` plus a log of
// updates `doc:u:<n>`, and an out-box `out:<n>`: every local write puts what it wrote there in
// its own transaction (IdbRepository.syncHook), so no tab and no crash loses a change to sync.
// A remote message's records are written in one transaction with the cursor and the document
// rows they came with; anything after (a refused message) is saved at the end of the pull.
import type { ChangeSet } from '../../ports';
import type { IdbRepository } from '../../store/repository';
import { clearSyncRows, readSyncRows, writeSyncRows } from '../../store/sync-store';
import { Emitter } from '../emitter';
import { type Refused, SyncEngine, type SyncState } from './engine';
import type { Epoch } from './record-doc';
import { Sealer } from './envelope';
import { keyFromRaw, roomOf } from './keys';
import { KeyChange } from './key-change';
import { Compactor } from './compaction';
import { CodeShown, firstDevice, joinedDevice } from './pair-flows';
import { ProgressRelay, RelayError } from './relay-client';
import { DocLog } from './doc-log';
import { outboxKey, syncedPart, tellViews } from './outbox';
import { MAX_DEVICE_NAME, RingRefusal } from './ring';
import { distinctNames } from './device-names';
import {
  type PendingRotation,
  type RingOutcome,
  type SyncConfig,
  renamed,
  sign,
  takeRotation,
  takeStatement,
  withSigningKey,
} from './sync-config';
import { ResetQuestion } from './reset-question';
import { StateRows } from './sync-rows';
import { TabLink, type TabMessage } from './sync-tabs';
import { OFF, type SyncStatus, seenWords } from './sync-status';
import { adoptOpenChats } from './chat-owner';

export type { PendingRotation, SyncConfig } from './sync-config';

export interface SyncServiceOptions {
  /** The relay's fetch (tests wrap it to stop a tab at a post). */
  fetch?: typeof fetch;
  /** The least time between two compactions after deletes (a delete-all compacts at once); default a minute. */
  compactEveryMs?: number;
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
  /** The loop waits in `sleep` (on the relay, or out a backoff). */
  private sleeping = false;
  private readonly rows: StateRows;
  private readonly keyChange: KeyChange;
  private readonly compactor: Compactor;
  private outSeq = 0;
  private readonly tabs = new TabLink((m) => this.heard(m));
  private readonly memoryChannel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-memory') : undefined;
  private readonly chatChannel = typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel('tealeaf-chat') : undefined;
  private readonly shown: CodeShown;
  private readonly asked = new ResetQuestion();
  /** Runs this device's wipe for another device's delete-all (Tealeaf stops its jobs around it). */
  wipeHere?: (wipe: () => Promise<unknown>) => Promise<unknown>;

  constructor(
    private readonly repo: IdbRepository,
    private readonly options: SyncServiceOptions = {},
  ) {
    super();
    this.rows = new StateRows(repo.db, () => ({ engine: this.engine, config: this.config }));
    this.compactor = new Compactor(this.rows, options.compactEveryMs);
    this.shown = new CodeShown({
      config: () => this.config,
      fetch: options.fetch,
      show: (code, error) => this.set(error === undefined ? { code } : { code, phase: 'error', error }),
      announce: (config, s) => this.announce(config, s),
    });
    this.keyChange = new KeyChange({
      db: repo.db,
      repo,
      rows: this.rows,
      engine: () => this.engine,
      config: () => this.config,
      setConfig: (c) => (this.config = c),
    });
    // Every local write (any tab) leaves its synced part in the out-box, in its own transaction;
    // the repository keeps it only while sync is on (its config row exists), read in that transaction.
    repo.syncHook = (applied) => {
      const part = syncedPart(applied);
      return part && { puts: [{ key: outboxKey(Date.now(), this.outSeq++), value: part }] };
    };
    // Once the write has committed: this tab's loop, or the loop in whichever tab holds it.
    repo.afterSyncQueued = () => {
      this.kick();
      this.tabs.post({ type: 'queued' });
    };
  }

  /** `replace`: the whole status (sync off), not a patch over the last one. */
  private set(patch: Partial<SyncStatus>, replace = false): void {
    // Shown told apart: two devices named alike (paired at once through two devices) get a number.
    if (patch.devices) patch = { ...patch, devices: distinctNames(patch.devices) };
    this.status = replace ? { ...OFF, ...patch } : { ...this.status, ...patch };
    this.emit('status', this.status);
    // The other tabs show what the loop's tab knows (theirs would say "starting" for ever).
    if (this.tabs.holdsLoop) this.tabs.post({ type: 'status', status: this.status });
  }

  /** What another tab of this profile said (tabs share one database, and one tab runs the loop). */
  private heard(m: TabMessage): void {
    if (m.type === 'status') {
      if (!this.tabs.holdsLoop) {
        this.status = { ...m.status, code: undefined, elsewhere: m.status.phase !== 'off' };
        this.emit('status', this.status);
      }
    } else if (m.type === 'ask') {
      if (this.tabs.holdsLoop) this.set({});
    } else if (m.type === 'answer') {
      if (this.tabs.holdsLoop) this.answerReset(m.choice);
    } else if (m.type === 'turn-off') {
      if (this.tabs.holdsLoop) void this.turnOff();
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
    this.tabs.hold(run, () => this.running);
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
    this.rows.log = log;
    // A key change stopped half-way (a closed tab): the loop finishes it before anything else.
    this.keyChange.pending = rows.get('rotation') as PendingRotation | undefined;
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
      const applied = await this.rows.with((rows) => repo.apply(change, { remote: true, rows }));
      tellViews(applied, this.memoryChannel, this.chatChannel);
      return applied;
    };
    this.engine = new SyncEngine({
      store,
      relay: this.relay,
      room,
      sealer: await Sealer.of(key, room),
      deviceId: config.device.info.id,
      joinedAt: config.device.info.pairedAt,
      // A state of another room is dropped, but not its sequence number: a higher one is harmless.
      state: state?.room === room ? state : state ? { cursor: 0, marks: {}, seq: state.seq } : undefined,
      // Another device deleted everything: the user says whether this device follows (askReset).
      onReset: (epoch) => this.askReset(epoch),
      // The wipe keeps the state that goes with it (the new epoch, what is left to write) in its own transaction.
      wipe: async () =>
        void (await (this.wipeHere ?? ((w) => w()))(() => this.rows.with((rows) => repo.wipeAll({ dropOutbox: true, rows })))),
      reserve: (seq) => writeSyncRows(repo.db, { puts: [{ key: 'seq', value: seq }] }),
      // Changes of the ring: taken only when a device of this ring signed them (ring.ts).
      onLeft: async (_id, payload) => this.ringChanged(await takeStatement(this.config!, payload, 'left')),
      onRing: async (payload) => this.ringChanged(await takeStatement(this.config!, payload, 'ring')),
      onRotation: async (notice, others) => {
        const taken = await takeRotation(this.config!, notice, others);
        if (taken instanceof RingRefusal) return { refused: taken.why, conflict: taken.conflict };
        if (taken === 'unpaired') return taken;
        this.config = taken.config;
        return taken.key;
      },
    });
    this.rows.log.watch(this.engine.records.doc);
    // A device paired before signatures makes its signing key and introduces it (posted by the loop).
    const upgrade = await withSigningKey(config);
    if (upgrade) {
      this.config = upgrade.config;
      await this.rows.save({ puts: [{ key: 'introduce', value: upgrade.introduce }] });
    }
    this.set({ phase: 'starting', relayUrl: config.relayUrl, selfId: config.device.info.id, devices: config.devices, error: undefined });
    this.running = true;
    if (adopt) {
      await this.engine.adoptStore(500, (done, total) =>
        this.set({ phase: 'syncing', progress: total > 4 ? { done, total, sending: true } : undefined }),
      );
      await this.rows.save();
    }
    void this.loop();
  }

  /** A change of the ring taken (the config after it), or refused: the engine counts and names it. */
  private ringChanged(outcome: RingOutcome): Refused | undefined {
    if (outcome instanceof RingRefusal) return { refused: outcome.why };
    this.config = outcome.config;
    this.set({ devices: this.config.devices });
    return undefined;
  }

  kick(): void {
    this.kicked = true;
    this.wake?.abort();
  }

  /** Tests: the loop has done all it had to and waits (for the relay, or out a backoff); nothing woke it since. */
  get idle(): boolean {
    return this.sleeping && !this.kicked;
  }

  /** Waits for `until` unless a kick came since the loop last looked (a write made while it read or sent). */
  private async sleep(until: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    this.wake = new AbortController();
    if (this.kicked) return;
    this.sleeping = true;
    try {
      await until(this.wake.signal);
    } catch (e) {
      if (!this.wake.signal.aborted) throw e;
    } finally {
      this.sleeping = false;
    }
  }

  private async loop(): Promise<void> {
    let backoff = 1000;
    while (this.running && this.engine) {
      const engine = this.engine;
      this.kicked = false;
      try {
        // Left out of a new key (now, or before this tab opened): nothing more to send or read.
        if (engine.unpaired) {
          this.set({ phase: 'unpaired', pending: false, ...seenWords(engine, this.config?.devices ?? []) });
          return;
        }
        // A key change this device started and did not finish (a crash, the relay away) comes first.
        if (this.keyChange.pending) await this.keyChange.finish();
        // Before the out-box: what was written after the wipe belongs to the new epoch.
        await this.rows.takeReset(engine);
        await this.rows.takeImport(engine);
        await this.rows.drainOutbox(engine);
        await this.rows.introduce(engine);
        const start = engine.position;
        this.relay!.onRead = (seq, last) => {
          if (last - start > 4) this.set({ phase: 'syncing', progress: { done: seq - start, total: last - start } });
        };
        const epoch = engine.records.epoch.id;
        const applied = await engine.pull();
        if (!engine.unpaired) await engine.push();
        await this.rows.save();
        if (!engine.unpaired) await this.compactor.after(engine);
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
          ...seenWords(engine, this.config!.devices),
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
          ...seenWords(engine, this.config?.devices ?? []),
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

  private async room(): Promise<string> {
    return roomOf(await keyFromRaw(this.config!.key.raw, this.config!.key.createdAt));
  }

  /** The first device: makes the key and sends everything this device holds. */
  async turnOn(relayUrl: string, name: string): Promise<void> {
    await this.begun(await firstDevice(relayUrl, name));
  }

  /** A new device: takes the key ring from the device showing `code`; its own memory joins the rest. `signal` cancels the wait. */
  async join(relayUrl: string, code: string, name: string, signal?: AbortSignal): Promise<void> {
    await this.begun(await joinedDevice(relayUrl, code, name, this.options.fetch, signal));
  }

  /** Sync on with a new config: kept first, this device's open chats named, then the loop with its records taken in. */
  private async begun(config: SyncConfig): Promise<void> {
    await writeSyncRows(this.repo.db, { puts: [{ key: 'config', value: config }] });
    await adoptOpenChats(this.repo, config.device.info.id);
    this.hold(() => this.begin(config, undefined, true));
  }

  /** Shows a code for a new device once the relay holds its offer, and adds the device that types it (pair-flows.ts). */
  offerCode = (): Promise<string> => this.shown.offer();
  /** Stops showing the code: a device typing it is told so; one whose answer the relay took first stays paired. */
  cancelCode = (): void => this.shown.cancel();

  /** Renames this device here and, signed, on every paired device. */
  async rename(name: string): Promise<void> {
    const clean = name.trim().slice(0, MAX_DEVICE_NAME);
    if (!this.config || !clean || clean === this.config.device.info.name) return;
    await this.announce(renamed(this.config, this.config.device.info.id, clean), { type: 'renamed', name: clean });
  }

  /** The ring changed here: told, signed, to every device, then kept and shown. */
  private async announce(config: SyncConfig, s: Parameters<typeof sign>[1]): Promise<void> {
    this.config = config;
    await this.engine?.postRing(await sign(config, s));
    await this.rows.save();
    this.set({ devices: config.devices });
  }

  /**
   * Unpairs a device (a new key for the others, signed: key-change.ts); `undefined` rotates the
   * key for all. Crash-safe: carried to its end from a row, by the loop after a restart.
   */
  async unpair(deviceId?: string): Promise<void> {
    await this.keyChange.start(deviceId);
    this.set({ devices: this.config!.devices });
    this.kick();
  }

  /**
   * Delete-all on this device: the wipe left a `reset` row (IdbRepository.wipeAll); the tab that
   * runs the loop starts a new epoch from it, so every paired device empties too (SYNC.md,
   * "Delete-all"). From another tab, the loop tab is woken; the row waits for it either way.
   */
  async deletedAll(): Promise<void> {
    if (!this.engine) {
      this.tabs.post({ type: 'reset' });
      return;
    }
    if (!(await this.rows.takeReset(this.engine))) return;
    try {
      await this.engine.push();
      await this.rows.save();
    } catch {
      // Offline: the new epoch is in the saved document and goes out with the next push.
    }
  }

  /** Another device deleted everything: the loop waits here until the user answers (`answerReset`). */
  private askReset(epoch: Epoch): Promise<'wipe' | 'keep'> {
    const name = distinctNames(this.config?.devices ?? []).find((d) => d.id === epoch.by)?.name ?? 'Another device';
    const answer = this.asked.ask();
    this.set({ phase: 'deleted-elsewhere', deletedBy: { name, at: epoch.at }, progress: undefined });
    return answer;
  }

  /** The user's answer to another device's delete-all: empty this device too, or keep its data (sent back to all). */
  answerReset(choice: 'wipe' | 'keep'): void {
    if (!this.tabs.holdsLoop) {
      this.tabs.post({ type: 'answer', choice });
      return;
    }
    if (this.asked.answer(choice)) this.set({ phase: 'syncing', deletedBy: undefined });
  }

  /** The store was written around the out-box (a backup import): the loop, here or in the tab that runs it, takes it in. */
  imported(): void {
    this.kick();
    this.tabs.post({ type: 'queued' });
  }

  /**
   * Stops the loop and forgets what it held in memory, leaving every row as it is: what a closed
   * tab leaves behind (the crash tests start a new service on the same database after it).
   */
  stop(): void {
    this.halt('The tab closed.');
    this.tabs.release();
  }

  /** The loop stops; an open question about another device's delete-all ends unanswered (nothing is wiped or sent). */
  private halt(why: string): void {
    this.running = false;
    this.asked.end(why);
    this.shown.cancel();
    this.kick();
    this.engine = undefined;
  }

  /** Stops syncing on this device and forgets the key (its memory stays). */
  async turnOff(): Promise<void> {
    if (this.status.elsewhere) {
      // The loop's tab stops it (and clears the rows); this tab hears its status.
      this.tabs.post({ type: 'turn-off' });
      return;
    }
    // The others drop this device from their list (if the relay answers within 3 s); signed, as only it may say so.
    const config = this.config;
    const left = config && this.engine && sign(config, { type: 'left' }).then((s) => this.engine!.leave(s));
    await Promise.race([left?.catch(() => undefined), new Promise((ok) => setTimeout(ok, 3000))]);
    this.halt('Sync was turned off.');
    this.config = undefined;
    await clearSyncRows(this.repo.db);
    // Told to the other tabs before the lock goes to one of them.
    this.set(OFF, true);
    this.tabs.release();
  }
}
