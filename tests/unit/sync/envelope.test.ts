import { describe, expect, it } from 'vitest';
import { fromBase32, fromUtf8, toBase32, utf8, randomBytes } from '../../../src/services/sync/bytes';
import { EnvelopeError, ReplayGuard, Sealer } from '../../../src/services/sync/envelope';
import { generateSyncKey, keyFromRaw, roomOf } from '../../../src/services/sync/keys';

const DEVICE_A = 'a'.repeat(32);
const DEVICE_B = 'b'.repeat(32);

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof EnvelopeError) return e.reason;
    throw e;
  }
  return 'opened';
}

async function setup() {
  const key = await generateSyncKey();
  const room = await roomOf(key);
  return { key, room, sealer: await Sealer.of(key, room) };
}

describe('sync envelope', () => {
  it('round trips, naming the sender and its sequence number', async () => {
    const { sealer } = await setup();
    const sealed = await sealer.seal(DEVICE_A, 7, utf8('a memory about Lisbon'));
    const opened = await sealer.open(sealed, new ReplayGuard());
    expect(fromUtf8(opened.plaintext)).toBe('a memory about Lisbon');
    expect(opened).toMatchObject({ deviceId: DEVICE_A, seq: 7 });
    // Fresh nonce per message: the same plaintext never seals to the same bytes.
    expect(Buffer.from(await sealer.seal(DEVICE_A, 7, utf8('x')))).not.toEqual(Buffer.from(await sealer.seal(DEVICE_A, 7, utf8('x'))));
  });

  it('does not carry the plaintext in the clear', async () => {
    const { sealer } = await setup();
    const sealed = await sealer.seal(DEVICE_A, 1, utf8('CANARY-plaintext-4711'));
    expect(Buffer.from(sealed).includes('CANARY')).toBe(false);
  });

  it('refuses a message sealed with another key, and says so', async () => {
    const a = await setup();
    const other = await generateSyncKey();
    const sealed = await (await Sealer.of(other, a.room)).seal(DEVICE_A, 1, utf8('hello'));
    expect(await reason(a.sealer.open(sealed))).toBe('wrong-key');
  });

  it('refuses a key that claims the right id but is not the key', async () => {
    const a = await setup();
    const forged = await keyFromRaw(randomBytes(32), 0);
    const sealed = await (await Sealer.of({ ...forged, id: a.key.id }, a.room)).seal(DEVICE_A, 1, utf8('hello'));
    expect(await reason(a.sealer.open(sealed))).toBe('tampered');
  });

  it('refuses any altered byte: ciphertext, tag, nonce, sender, sequence number', async () => {
    const { sealer } = await setup();
    const sealed = await sealer.seal(DEVICE_A, 5, utf8('edit: she moved to Porto'));
    // 9..24 the device, 25..32 the seq, 33..44 the nonce, then ciphertext and tag.
    for (const at of [9, 24, 32, 33, 44, 45, sealed.length - 1]) {
      const bad = sealed.slice();
      bad[at] ^= 1;
      expect(await reason(sealer.open(bad)), `byte ${at}`).toBe('tampered');
    }
    expect(await reason(sealer.open(sealed.slice(0, 40)))).toBe('malformed');
  });

  it('refuses a message moved to another room', async () => {
    const { key, sealer } = await setup();
    const sealed = await sealer.seal(DEVICE_A, 1, utf8('hello'));
    const elsewhere = await Sealer.of(key, 'another-room-0123456789abcdef');
    expect(await reason(elsewhere.open(sealed))).toBe('tampered');
  });

  it('refuses a replay, per device, and a forged message does not block the real one', async () => {
    const { sealer } = await setup();
    const guard = new ReplayGuard();
    const m1 = await sealer.seal(DEVICE_A, 1, utf8('one'));
    const m2 = await sealer.seal(DEVICE_A, 2, utf8('two'));
    const b1 = await sealer.seal(DEVICE_B, 1, utf8('b one'));
    expect(await reason(sealer.open(m1, guard))).toBe('opened');
    expect(await reason(sealer.open(m1, guard))).toBe('replayed');
    // A forged seq 2 (altered bytes) is refused as tampered and leaves the mark where it was.
    const forged = m2.slice();
    forged[forged.length - 1] ^= 1;
    expect(await reason(sealer.open(forged, guard))).toBe('tampered');
    expect(await reason(sealer.open(m2, guard))).toBe('opened');
    expect(await reason(sealer.open(m1, guard))).toBe('replayed');
    expect(await reason(sealer.open(b1, guard))).toBe('opened');
    // The marks survive a restart through the caller's store.
    const again = new ReplayGuard({ ...guard.marks });
    expect(await reason(sealer.open(m2, again))).toBe('replayed');
  });
});

describe('pairing-code letters', () => {
  it('round trip and read what a person typed', () => {
    const bytes = randomBytes(15);
    const code = toBase32(bytes);
    expect(code).toHaveLength(24);
    expect(Buffer.from(fromBase32(code.toLowerCase().replace(/(.{4})/g, '$1 - '), 15))).toEqual(Buffer.from(bytes));
    expect(Buffer.from(fromBase32('OIL' + '0'.repeat(21), 15))).toEqual(Buffer.from(fromBase32('011' + '0'.repeat(21), 15)));
    expect(() => fromBase32('U'.repeat(24), 15)).toThrow(/not a code letter/);
    expect(() => fromBase32('0'.repeat(23), 15)).toThrow(/wrong length/);
  });
});
