// The key ring is authenticated (docs/SYNC.md, "The key ring"). Every change of it is a
// statement signed by the device that makes it (ECDSA P-256, its key in the ring since it was
// paired), bound to the key in use, and checked by each receiver against the ring it holds:
//
// - `rotation`: a new key. Accepted only from a device of this ring, and only when every device it
//   names is one this ring holds with the same keys: a rotation can leave devices out, never add
//   one. (Before, the device list came as it was sent: a paired phone could add a hidden device,
//   which then got every later key.)
// - `added`: a device paired through one device, told to all, so none leaves it out of a later key;
//   each shows who added it.
// - `left`: a device turned sync off; only it can say so.
// - `key`: a device paired before signatures introduces its signing key, taken only where the ring
//   has none for it yet (trusted on first use: said in docs/SYNC.md).
// - `renamed`: a device's new name; only the device itself can say so.
//
// A statement is sent as `{ s, sig }`: the statement's JSON text and the signature over exactly
// those bytes, so nothing depends on how JSON is written elsewhere.
import { type Bytes, fromBase64Url, fromUtf8, toBase64Url, utf8 } from './bytes';
import { type Device, type DeviceInfo, ECDSA, type Rotation } from './keys';

export type Statement =
  | { type: 'rotation'; by: string; keyId: string; at: number; rotation: Rotation }
  | { type: 'added'; by: string; keyId: string; at: number; device: DeviceInfo }
  | { type: 'left'; by: string; keyId: string; at: number }
  | { type: 'key'; by: string; keyId: string; at: number; signingKey: string }
  | { type: 'renamed'; by: string; keyId: string; at: number; name: string };

/** The longest name a device may have (the field's limit; a longer one in a statement is refused). */
export const MAX_DEVICE_NAME = 60;

/** Why a statement was not taken, in words (said in Settings); `conflict`: another key change removed its maker. */
export class RingRefusal {
  constructor(
    readonly why: string,
    readonly conflict = false,
  ) {}
}

const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;

export async function signStatement(self: Device, s: Statement): Promise<Bytes> {
  if (!self.signingPrivate) throw new Error('This device has no signing key yet.');
  const text = JSON.stringify(s);
  const sig = new Uint8Array(await crypto.subtle.sign(SIGN, self.signingPrivate, utf8(text)));
  return utf8(JSON.stringify({ s: text, sig: toBase64Url(sig) }));
}

async function verify(signingKey: string, text: string, sig: string): Promise<boolean> {
  try {
    const key = await crypto.subtle.importKey('raw', fromBase64Url(signingKey), ECDSA, false, ['verify']);
    return await crypto.subtle.verify(SIGN, key, fromBase64Url(sig), utf8(text));
  } catch {
    return false;
  }
}

const HEX32 = /^[0-9a-f]{32}$/;
const B64 = /^[A-Za-z0-9_-]{1,200}$/;

function isDeviceInfo(d: unknown): d is DeviceInfo {
  const x = d as Partial<DeviceInfo> | null;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.id === 'string' &&
    HEX32.test(x.id) &&
    typeof x.name === 'string' &&
    x.name.length > 0 &&
    x.name.length <= 200 &&
    typeof x.publicKey === 'string' &&
    B64.test(x.publicKey) &&
    typeof x.pairedAt === 'number' &&
    Number.isFinite(x.pairedAt) &&
    (x.signingKey === undefined || (typeof x.signingKey === 'string' && B64.test(x.signingKey))) &&
    (x.addedBy === undefined || (typeof x.addedBy === 'string' && HEX32.test(x.addedBy)))
  );
}

function isStatement(v: unknown): v is Statement {
  const s = v as Partial<Record<string, unknown>> | null;
  if (typeof s !== 'object' || s === null || typeof s.by !== 'string' || !HEX32.test(s.by)) return false;
  if (typeof s.keyId !== 'string' || typeof s.at !== 'number') return false;
  switch (s.type) {
    case 'rotation': {
      const r = s.rotation as Partial<Rotation> | null;
      return (
        typeof r === 'object' &&
        r !== null &&
        typeof r.newKeyId === 'string' &&
        typeof r.createdAt === 'number' &&
        isDeviceInfo(r.from) &&
        Array.isArray(r.devices) &&
        r.devices.length <= 64 &&
        r.devices.every(isDeviceInfo) &&
        Array.isArray(r.wraps) &&
        r.wraps.length <= 64 &&
        (r.known === undefined || (Array.isArray(r.known) && r.known.length <= 256 && r.known.every((k) => typeof k === 'string')))
      );
    }
    case 'added':
      return isDeviceInfo(s.device);
    case 'left':
      return true;
    case 'key':
      return typeof s.signingKey === 'string' && B64.test(s.signingKey);
    case 'renamed':
      return typeof s.name === 'string' && s.name.trim().length > 0 && s.name.length <= MAX_DEVICE_NAME;
    default:
      return false;
  }
}

/**
 * The statement in `payload`, if a device of `ring` signed it for the key `keyId`; otherwise a
 * refusal saying why. Never trusts what the statement says about who signed it: the signing key
 * is the one this ring holds for that device.
 */
export async function readStatement(payload: Uint8Array, ring: readonly DeviceInfo[], keyId: string): Promise<Statement | RingRefusal> {
  let text: string;
  let sig: string;
  let s: unknown;
  try {
    const outer = JSON.parse(fromUtf8(payload)) as { s?: unknown; sig?: unknown };
    if (typeof outer.s !== 'string' || typeof outer.sig !== 'string')
      return new RingRefusal('a change of the device list that is not signed');
    text = outer.s;
    sig = outer.sig;
    s = JSON.parse(text);
  } catch {
    return new RingRefusal('a change of the device list that does not parse');
  }
  if (!isStatement(s)) return new RingRefusal('a change of the device list that does not parse');
  if (s.keyId !== keyId) return new RingRefusal('a change of the device list made for another key');
  const by = ring.find((d) => d.id === s.by);
  if (!by) return new RingRefusal('a change of the device list from a device not in this list');
  // A device from before signatures introduces its key once; every other statement needs the ring's key.
  const signingKey = s.type === 'key' && !by.signingKey ? s.signingKey : by.signingKey;
  if (!signingKey) return new RingRefusal(`a change of the device list from ${by.name}, which has no signing key yet`);
  if (s.type === 'key' && by.signingKey) return new RingRefusal(`a second signing key for ${by.name}`);
  if (!(await verify(signingKey, text, sig))) return new RingRefusal(`a change of the device list not signed by ${by.name}`);
  return s;
}

/**
 * The ring after a rotation this ring's device `by` signed, or a refusal: every device it keeps
 * must be one this ring holds, with the same keys (taken from this ring, not from the notice).
 */
export function ringAfter(rotation: Rotation, ring: readonly DeviceInfo[], by: string): DeviceInfo[] | RingRefusal {
  const rotator = ring.find((d) => d.id === by);
  if (rotation.from.id !== by || !rotator || rotator.publicKey !== rotation.from.publicKey) {
    return new RingRefusal('a new key whose notice names another device as its maker');
  }
  const kept: DeviceInfo[] = [];
  for (const d of rotation.devices) {
    const mine = ring.find((x) => x.id === d.id);
    if (!mine)
      return new RingRefusal(`a new key from ${rotator.name} that was also given to a device this one does not know (“${d.name}”)`);
    if (mine.publicKey !== d.publicKey) return new RingRefusal(`a new key from ${rotator.name} given to a stand-in for ${mine.name}`);
    kept.push(mine);
  }
  return kept;
}

/** Whether `id` was left out of the rotation on purpose (its maker knew it), not just unknown to its maker. */
export function leftOut(rotation: Rotation, id: string): boolean {
  return rotation.known === undefined || rotation.known.includes(id);
}
