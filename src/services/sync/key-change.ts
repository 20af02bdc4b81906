// A key change this device makes (docs/SYNC.md, "Rotation"): unpairing a device, or a new key for
// all. Crash-safe: the new key and its signed notice are kept in a `rotation` row before anything
// is posted, and the change is carried to its end from that row (by the loop after a restart)
// until the config, the state and the row's removal are written together. If another device's
// key change came first in the old room, this device follows it and, when it was unpairing a
// device that the winner kept, unpairs it again in the winner's room.
import type { Repository } from '../../ports';
import type { TealeafDb } from '../../store/db';
import { writeSyncRows } from '../../store/sync-store';
import type { SyncEngine } from './engine';
import { keyFromRaw, rotate } from './keys';
import { takeOverChats } from './chat-owner';
import { type PendingRotation, type SyncConfig, sign } from './sync-config';
import type { StateRows } from './sync-rows';

export interface KeyChangeHost {
  readonly db: TealeafDb;
  readonly repo: Repository;
  readonly rows: StateRows;
  engine(): SyncEngine | undefined;
  config(): SyncConfig | undefined;
  setConfig(config: SyncConfig): void;
}

export class KeyChange {
  /** The change under way, from its row; undefined when there is none. */
  pending?: PendingRotation;
  private run?: Promise<void>;

  constructor(private readonly host: KeyChangeHost) {}

  /** Leaves `deviceId` out of a new key (every device kept when undefined), and carries it through. */
  async start(deviceId?: string): Promise<void> {
    const config = this.host.config();
    if (!config || !this.host.engine()) throw new Error('Sync is off.');
    const keep = config.devices.filter((d) => d.id !== deviceId);
    // What the room holds first, so the chats taken over are written after everything read there.
    if (deviceId) await this.host.engine()!.pull();
    if (deviceId) await takeOverChats(this.host.repo, deviceId, config.device.info.id);
    const { key, rotation } = await rotate(
      config.device,
      keep,
      Date.now(),
      config.devices.map((d) => d.id),
    );
    const notice = await sign(config, { type: 'rotation', rotation });
    const pending: PendingRotation = { key: { raw: key.raw, createdAt: key.createdAt }, rotation, notice, remove: deviceId };
    await writeSyncRows(this.host.db, { puts: [{ key: 'rotation', value: pending }] });
    this.pending = pending;
    await this.finish();
  }

  /** Carries the pending change to its end; one run at a time (the loop and the user's click may both ask). */
  finish(): Promise<void> {
    this.run ??= this.carry().finally(() => (this.run = undefined));
    return this.run;
  }

  private async carry(): Promise<void> {
    const engine = this.host.engine();
    const p = this.pending;
    if (!engine || !p) return;
    // What this device wrote (a chat taken over) goes into the document before the old room is read
    // to its end: a change read there then merges with it, instead of overwriting it in the store.
    await this.host.rows.drainOutbox(engine);
    const result = await engine.rekey(await keyFromRaw(p.key.raw, p.key.createdAt), p.notice);
    // Moved: this device's own key and ring. Lost: another device's change came first, and the
    // service took its key and ring as for any rotation read.
    if (result === 'moved') this.host.setConfig({ ...this.host.config()!, key: p.key, devices: p.rotation.devices });
    const again = result === 'lost' && p.remove !== undefined && this.host.config()!.devices.some((d) => d.id === p.remove);
    this.pending = undefined;
    await this.host.rows.save({ puts: [], deletes: ['rotation'] }, true);
    if (again) {
      // This run is over: the new change gets its own (finish() would hand back this one, which
      // waits on it: a deadlock, met when the relay's timing let the other device win).
      this.run = undefined;
      await this.start(p.remove);
    }
  }
}
