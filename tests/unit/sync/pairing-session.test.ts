import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PAIR_TTL_MS, startRelay } from '../../../relay/relay.mjs';
import { utf8 } from '../../../src/services/sync/bytes';
import { generateDevice, generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { newPairingCode, pairingSecrets, payloadOf } from '../../../src/services/sync/pairing';
import { joinWithCode, offerPairing } from '../../../src/services/sync/pairing-session';
import { RelayClient } from '../../../src/services/sync/relay-client';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function relayAt(now: () => number = Date.now) {
  const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-pair-')), now });
  closers.push(relay.close);
  return new RelayClient(relay.url);
}

describe('pairing over the relay', () => {
  it('the code typed on the new device brings it the key and the devices', async () => {
    const relay = await relayAt();
    const laptop = await generateDevice('Laptop');
    const key = await generateSyncKey();
    const code = newPairingCode();
    const offered = offerPairing(relay, code, payloadOf(key, [laptop.info], 'http://127.0.0.1:8787'));
    // Typed by hand: lower case, spaces for dashes, an O for a zero.
    const typed = code.toLowerCase().replace(/-/g, ' ').replace(/0/g, 'o');
    const joined = await joinWithCode(relay, typed, 'Phone');
    const phone = await offered;
    expect(phone.id).toBe(joined.device.info.id);
    expect(joined.key.id).toBe(key.id);
    expect(joined.devices.map((d) => d.name)).toEqual(['Laptop', 'Phone']);
    expect(joined.relayUrl).toBe('http://127.0.0.1:8787');
  });

  it('a request without the code ends the pairing: no second guess', async () => {
    const relay = await relayAt();
    const code = newPairingCode();
    const secrets = await pairingSecrets(code);
    const offered = offerPairing(relay, code, payloadOf(await generateSyncKey(), []), { timeoutMs: 5000 });
    // Someone who learnt the mailbox but not the code posts a request.
    const stranger = await generateDevice('Stranger');
    await relay.post(secrets.mailbox, utf8(JSON.stringify({ type: 'join', nonce: 'AAAAAAAAAAAAAAAA', sealed: stranger.info.publicKey })));
    await expect(offered).rejects.toThrow(/without the right code/);
  });

  it('says so when the other device does not come', async () => {
    const relay = await relayAt();
    // Nobody answers: only the 300 ms limit can end the wait, so the refusal in these words is the check.
    await expect(joinWithCode(relay, newPairingCode(), 'Phone', { timeoutMs: 300 })).rejects.toThrow(/did not answer in time/);
  });

  it('the relay forgets a mailbox after its time and takes at most 16 messages in one', async () => {
    let clock = Date.now();
    const relay = await relayAt(() => clock);
    const { mailbox } = await pairingSecrets(newPairingCode());
    for (let i = 0; i < 16; i++) await relay.post(mailbox, utf8(`m${i}`));
    await expect(relay.post(mailbox, utf8('m16'))).rejects.toMatchObject({ status: 429 });
    // An ordinary room has no such limit.
    const room = await roomOf(await generateSyncKey());
    for (let i = 0; i < 20; i++) await relay.post(room, utf8(`r${i}`));
    clock += PAIR_TTL_MS + 1000;
    expect((await relay.read(mailbox, 0)).last).toBe(0);
    expect((await relay.read(room, 0)).last).toBe(20);
  });
});
