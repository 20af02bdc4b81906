// The encryption envelope: every message a device sends through the relay (docs/SYNC.md,
// "Envelope"). AES-GCM with a fresh random nonce per message; the header (format, key id, sender
// device, sender's sequence number) and the room are authenticated, so the relay can neither read,
// alter, move to another room, nor replay a message unnoticed.
//
//   0      1         9            25        33      45
//   | v=2 | key id 8 | device 16 | seq u64 | nonce 12 | ciphertext + 16-byte tag |
//
// Version 2 seals the same header; only the plaintext's layout differs (messages.ts:
// each body names the sender's previous message in the room and how far it had read). Version 1
// messages still open, so a room written before reads to its end.
import { type Bytes, concat, fromHex, randomBytes, toHex, utf8 } from './bytes';
import { type SyncKey, sealingKey } from './keys';

const VERSION = 2;
const VERSIONS = new Set([1, 2]);
const HEADER = 33;
const NONCE = 12;
const TAG = 16;

/** `forged`: a change of the key ring (a rotation, a device added or leaving) that no device of the ring signed. */
export type OpenFailure = 'malformed' | 'wrong-key' | 'tampered' | 'replayed' | 'forged';

export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
  constructor(
    readonly reason: OpenFailure,
    detail: string,
  ) {
    super(detail);
  }
}

export interface Opened {
  deviceId: string;
  seq: number;
  plaintext: Bytes;
  /** The envelope's version: 1 for a message sealed by an older version (its plaintext has no preamble). */
  version: number;
}

/** Seals and opens envelopes of one key in one room. */
export class Sealer {
  private constructor(
    readonly key: SyncKey,
    private readonly aes: CryptoKey,
    private readonly room: Bytes,
  ) {}

  static async of(key: SyncKey, room: string): Promise<Sealer> {
    return new Sealer(key, await sealingKey(key), utf8(`tealeaf-sync v1|${room}|`));
  }

  async seal(deviceId: string, seq: number, plaintext: Bytes): Promise<Bytes> {
    if (!Number.isSafeInteger(seq) || seq < 1) throw new Error('seq must be a positive integer');
    const header = concat(Uint8Array.of(VERSION), fromHex(this.key.id), fromHex(deviceId), u64(seq));
    if (header.length !== HEADER) throw new Error('a device id is 32 hex characters');
    const nonce = randomBytes(NONCE);
    const ad = concat(this.room, header);
    const ct = await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: ad }, this.aes, plaintext);
    return concat(header, nonce, new Uint8Array(ct));
  }

  /** Decrypts; a replay guard, when given, refuses a sequence number it has seen from that device. */
  async open(envelope: Uint8Array, guard?: ReplayGuard): Promise<Opened> {
    if (envelope.length < HEADER + NONCE + TAG || !VERSIONS.has(envelope[0])) {
      throw new EnvelopeError('malformed', 'not a sync message of this version');
    }
    const header = envelope.slice(0, HEADER);
    const keyId = toHex(header.subarray(1, 9));
    if (keyId !== this.key.id) throw new EnvelopeError('wrong-key', `sealed with key ${keyId}, not ${this.key.id}`);
    const deviceId = toHex(header.subarray(9, 25));
    const seq = readU64(header.subarray(25, 33));
    const nonce = envelope.slice(HEADER, HEADER + NONCE);
    let plaintext: Bytes;
    try {
      const ad = concat(this.room, header);
      const ct = envelope.slice(HEADER + NONCE);
      plaintext = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonce, additionalData: ad }, this.aes, ct));
    } catch {
      throw new EnvelopeError('tampered', 'the message was altered, or belongs to another room');
    }
    // Only an authentic message moves the guard: a forged one cannot block the real one.
    if (guard && !guard.accept(deviceId, seq)) {
      throw new EnvelopeError('replayed', `message ${seq} of device ${deviceId.slice(0, 8)} was seen before`);
    }
    return { deviceId, seq, plaintext, version: header[0] };
  }
}

/**
 * The highest sequence number applied per sending device. A device numbers its messages 1, 2, 3...
 * and the relay keeps its order, so anything at or below the mark was seen: a replay.
 * Persist `marks` with the state the messages were applied to (in the same write).
 */
export class ReplayGuard {
  constructor(readonly marks: Record<string, number> = {}) {}

  accept(deviceId: string, seq: number): boolean {
    if (seq <= (this.marks[deviceId] ?? 0)) return false;
    this.marks[deviceId] = seq;
    return true;
  }
}

function u64(n: number): Bytes {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
}

function readU64(b: Uint8Array): number {
  const n = new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new EnvelopeError('malformed', 'sequence number out of range');
  return Number(n);
}
