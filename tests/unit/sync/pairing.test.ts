import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay } from '../../../relay/relay.mjs';
import { fromUtf8, toBase64Url, utf8 } from '../../../src/services/sync/bytes';
import { Sealer } from '../../../src/services/sync/envelope';
import { acceptRotation, generateDevice, generateSyncKey, roomOf, rotate, type DeviceInfo } from '../../../src/services/sync/keys';
import {
  PairingError,
  answerJoin,
  finishJoin,
  newPairingCode,
  pairingSecrets,
  payloadOf,
  requestToJoin,
  type JoinReply,
  type JoinRequest,
} from '../../../src/services/sync/pairing';
import { RelayClient } from '../../../src/services/sync/relay-client';

let relay: { url: string; close: () => Promise<void> };
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-'));
  relay = await startRelay({ port: 0, dir });
});
afterAll(() => relay.close());

const json = (v: unknown) => utf8(JSON.stringify(v));
const parse = <T>(b: Uint8Array) => JSON.parse(fromUtf8(b)) as T;

/** Every byte the relay keeps, all rooms. */
function relayBytes(): Buffer {
  return Buffer.concat(readdirSync(dir).map((f) => readFileSync(join(dir, f))));
}

describe('pairing through the relay', () => {
  it('hands the key to the new device; the relay never sees the key or the code', async () => {
    const client = new RelayClient(relay.url);
    const first = await generateDevice('Laptop');
    const key = await generateSyncKey();
    const code = newPairingCode();
    expect(code).toMatch(/^([0-9A-HJKMNP-TV-Z]{4}-){5}[0-9A-HJKMNP-TV-Z]{4}$/);

    // The new device: types the code, posts its request.
    const joining = await requestToJoin(code.toLowerCase(), 'Phone');
    await client.post(joining.secrets.mailbox, json(joining.request));
    // The first device: reads it from the mailbox it derived from the same code, answers.
    const mine = await pairingSecrets(code);
    expect(mine.mailbox).toBe(joining.secrets.mailbox);
    const [req] = (await client.read(mine.mailbox, 0)).messages;
    const { reply, joined } = await answerJoin(mine, parse<JoinRequest>(req.bytes), payloadOf(key, [first.info], 'http://127.0.0.1:8787'));
    expect(joined.name).toBe('Phone');
    await client.post(mine.mailbox, json(reply));
    // The new device reads the answer and has the key.
    const answer = (await client.read(mine.mailbox, 1)).messages[0];
    const got = await finishJoin(joining.secrets, joining.device, parse<JoinReply>(answer.bytes));
    expect(Buffer.from(got.key.raw)).toEqual(Buffer.from(key.raw));
    expect(got.key.id).toBe(key.id);
    expect(got.devices.map((d) => d.name)).toEqual(['Laptop', 'Phone']);
    expect(got.relayUrl).toBe('http://127.0.0.1:8787');

    const stored = relayBytes();
    expect(stored.length).toBeGreaterThan(0);
    for (const secret of [toBase64Url(key.raw), Buffer.from(key.raw).toString('hex'), code, code.replace(/-/g, '')]) {
      expect(stored.includes(secret)).toBe(false);
    }
    expect(stored.includes(Buffer.from(key.raw))).toBe(false);
    // The joining device's name and id are sealed too.
    for (const meta of ['Phone', joining.device.info.id, joining.device.info.publicKey]) expect(stored.includes(meta)).toBe(false);
  });

  it('refuses a request made with another code', async () => {
    const code = newPairingCode();
    const wrong = await requestToJoin(newPairingCode(), 'Stranger');
    const payload = payloadOf(await generateSyncKey(), []);
    await expect(answerJoin(await pairingSecrets(code), wrong.request, payload)).rejects.toThrow(PairingError);
    // Same code, but the sealed identity altered on the way (a relay in the middle).
    const real = await requestToJoin(code, 'Phone');
    const bytes = Buffer.from(real.request.sealed, 'base64url');
    bytes[5] ^= 1;
    const swapped = { ...real.request, sealed: bytes.toString('base64url') };
    await expect(answerJoin(await pairingSecrets(code), swapped, payload)).rejects.toThrow(/without the right code/);
  });

  it('refuses an answer not made with the code, or altered', async () => {
    const code = newPairingCode();
    const joining = await requestToJoin(code, 'Phone');
    const payload = payloadOf(await generateSyncKey(), []);
    const { reply } = await answerJoin(await pairingSecrets(code), joining.request, payload);
    // Someone in the middle answers with their own key pair but cannot make the MAC.
    const forgedMac: JoinReply = { ...reply, publicKey: (await generateDevice('x')).info.publicKey };
    await expect(finishJoin(joining.secrets, joining.device, forgedMac)).rejects.toThrow(/did not come from/);
    const bytes = Buffer.from(reply.sealed, 'base64url');
    bytes[3] ^= 1;
    await expect(finishJoin(joining.secrets, joining.device, { ...reply, sealed: bytes.toString('base64url') })).rejects.toThrow(/altered/);
    await expect(pairingSecrets('not a code')).rejects.toThrow(PairingError);
  });
});

describe('rotating the key', () => {
  it('gives the new key to the devices kept and not to the one unpaired', async () => {
    const laptop = await generateDevice('Laptop');
    const phone = await generateDevice('Phone');
    const lost = await generateDevice('Lost tablet');
    const old = await generateSyncKey();
    const ring: DeviceInfo[] = [laptop.info, phone.info, lost.info];
    const { key, rotation } = await rotate(
      laptop,
      ring.filter((d) => d.id !== lost.info.id),
    );
    expect(key.id).not.toBe(old.id);
    expect(await roomOf(key)).not.toBe(await roomOf(old));
    expect(rotation.devices.map((d) => d.name)).toEqual(['Laptop', 'Phone']);

    // Sent sealed under the old key: every old holder can read it...
    const oldRoom = await roomOf(old);
    const sealer = await Sealer.of(old, oldRoom);
    const sealed = await sealer.seal(laptop.info.id, 1, json(rotation));
    const seen = parse<typeof rotation>((await sealer.open(sealed)).plaintext);
    // ...the phone gets the key, the lost tablet does not.
    const phoneKey = await acceptRotation(phone, seen);
    expect(phoneKey !== 'unpaired' && Buffer.from(phoneKey.raw).equals(Buffer.from(key.raw))).toBe(true);
    expect(await acceptRotation(lost, seen)).toBe('unpaired');
    // The tablet cannot take the phone's copy either: it is wrapped for the phone's key pair.
    const stolen = { ...seen, wraps: seen.wraps.map((w) => ({ ...w, deviceId: lost.info.id })) };
    await expect(acceptRotation(lost, stolen)).rejects.toThrow();
  });
});
