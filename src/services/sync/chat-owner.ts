// Which device a chat belongs to (docs/SYNC.md, "Job ownership" and "Turn positions"). A chat
// started while sync is on carries the id of the device it was started on (`Session.deviceId`).
// Only that device continues it, ends it on the idle gap and queues its memorising: another device
// shows it read-only, and a message sent there starts a new chat. So a chat is memorised once, and
// two devices never append to one chat (the turn-position rule is only the safety net).
//
// - Sync off: every chat is this device's (it is alone; nothing else would end them here).
// - No owner, or an owner no longer paired: the first device of the key ring (the one that turned
//   sync on, or the oldest still paired): one device, the same everywhere. A device adopts its own
//   open chats when it turns sync on or joins, and the device that unpairs another takes its open
//   chats over (both written, so they sync), so this is the fallback, not the rule.
import type { Id, Session } from '../../memory/types';
import type { Repository } from '../../ports';
import type { TealeafDb } from '../../store/db';
import { readSyncRow } from '../../store/sync-store';
import { Emitter } from '../emitter';
import { distinctNames } from './device-names';
import type { DeviceInfo } from './keys';

export interface ChatDevices {
  /** This device's id while sync is on; undefined while it is off. */
  self?: string;
  /** The paired devices, this one included, in the key ring's order. */
  devices: Array<Pick<DeviceInfo, 'id' | 'name'>>;
}

export const NO_SYNC: ChatDevices = { devices: [] };

/** The device that continues and ends a chat; undefined while sync is off (then: this one). */
export function ownerOf(session: Pick<Session, 'deviceId'>, d: ChatDevices): string | undefined {
  if (d.self === undefined) return undefined;
  if (session.deviceId !== undefined && d.devices.some((x) => x.id === session.deviceId)) return session.deviceId;
  return d.devices[0]?.id ?? d.self;
}

/** Whether this device continues the chat, ends it on the idle gap and memorises it. */
export function isOurs(session: Pick<Session, 'deviceId'>, d: ChatDevices): boolean {
  return d.self === undefined || ownerOf(session, d) === d.self;
}

/** Where the chat shown can be continued: the one state the chat view's note is worded from. */
export type ChatPlace =
  | { kind: 'none' } // no chat shown
  | { kind: 'here' } // open, and this device's: continue it
  | { kind: 'ended' } // ended or memorised: sending starts a new chat (the ended note says so)
  | { kind: 'elsewhere'; device: string }; // open on another device: read-only here

export function chatPlace(session: Pick<Session, 'deviceId' | 'status'> | undefined, d: ChatDevices): ChatPlace {
  if (!session) return { kind: 'none' };
  if (session.status !== 'open') return { kind: 'ended' };
  if (isOurs(session, d)) return { kind: 'here' };
  const owner = ownerOf(session, d);
  return { kind: 'elsewhere', device: d.devices.find((x) => x.id === owner)?.name.trim() || 'another device' };
}

/** The note under a chat open on another device; none for the other places. */
export function placeWords(place: ChatPlace): string | undefined {
  return place.kind === 'elsewhere' ? `Open on ${place.device}: continue it there, or start a new chat.` : undefined;
}

/** Told when a message is sent from a chat this device does not continue, and a new chat takes it. */
export function newChatNotice(place: ChatPlace): string {
  return place.kind === 'elsewhere'
    ? `A new chat started: the one shown is open on ${place.device}.`
    : 'A new chat started: the previous one had ended and is remembered separately.';
}

/** This device and the paired devices, from the sync config (none while sync is off). */
export async function readChatDevices(db: TealeafDb): Promise<ChatDevices> {
  const config = (await readSyncRow(db, 'config')) as { device: { info: DeviceInfo }; devices: DeviceInfo[] } | undefined;
  if (!config) return NO_SYNC;
  return { self: config.device.info.id, devices: distinctNames(config.devices).map((x) => ({ id: x.id, name: x.name })) };
}

/** The chat service's view of the devices, read again when it may have changed (events for the UI). */
export class ChatOwner extends Emitter<{ devices: ChatDevices }> {
  devices: ChatDevices = NO_SYNC;

  constructor(private readonly read: () => Promise<ChatDevices> = async () => NO_SYNC) {
    super();
  }

  async load(): Promise<ChatDevices> {
    const d = await this.read();
    if (JSON.stringify(d) !== JSON.stringify(this.devices)) {
      this.devices = d;
      this.emit('devices', d);
    }
    return this.devices;
  }

  /** Whether this device continues and ends the chat (a bound function: passed as a filter). */
  readonly ours = (session: Pick<Session, 'deviceId'>): boolean => isOurs(session, this.devices);

  place(session: Pick<Session, 'deviceId' | 'status'> | undefined, devices = this.devices): ChatPlace {
    return chatPlace(session, devices);
  }

  /** The owner field of a chat started now: this device, while sync is on. */
  stamp(): Pick<Session, 'deviceId'> {
    return this.devices.self === undefined ? {} : { deviceId: this.devices.self };
  }
}

/** Open chats that name `from` (or no device, for `from` undefined) become `to`'s. */
async function reassign(repo: Repository, from: Id | undefined, to: Id): Promise<Session[]> {
  const open = (await repo.listSessions()).filter((s) => s.status === 'open' && s.deviceId === from);
  if (open.length > 0) await repo.apply({ sessions: open.map((s) => ({ ...s, deviceId: to })) });
  return open;
}

/** Sync turned on or joined: the chats open here with no device become this device's. */
export function adoptOpenChats(repo: Repository, self: Id): Promise<Session[]> {
  return reassign(repo, undefined, self);
}

/** A device unpaired: its open chats become the unpairing device's (it ends and memorises them). */
export function takeOverChats(repo: Repository, unpaired: Id, self: Id): Promise<Session[]> {
  return reassign(repo, unpaired, self);
}
