import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PAIR_TTL_MS, startRelay } from '../../../relay/relay.mjs';
import { utf8 } from '../../../src/services/sync/bytes';
import { generateDevice, generateSyncKey, roomOf } from '../../../src/services/sync/keys';
import { codeMac, newPairingCode, pairingSecrets, payloadOf } from '../../../src/services/sync/pairing';
import { CANCELLED, NOT_SHOWN, SPENT, joinWithCode, offerPairing } from '../../../src/services/sync/pairing-session';
import { RelayClient } from '../../../src/services/sync/relay-client';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** A relay client that must not wait: a wait on the relay fails the call (the joining device was to be told at once). */
class NoWait extends RelayClient {
  override wait(): Promise<number> {
    return Promise.reject(new Error('waited on the relay'));
  }
}

/** A joining device held in its wait on the relay until its user cancels (it reads nothing meanwhile). */
class HeldWait extends RelayClient {
  private waited!: () => void;
  readonly waiting = new Promise<void>((ok) => (this.waited = ok));
  override wait(_room: string, _after: number, signal?: AbortSignal): Promise<number> {
    this.waited();
    return new Promise((_, no) => signal?.addEventListener('abort', () => no(signal.reason as Error)));
  }
}

/** The device showing the code, its reads of the mailbox held until released. */
class HeldRead extends RelayClient {
  release!: () => void;
  private readonly gate = new Promise<void>((ok) => (this.release = ok));
  override async read(room: string, after: number, limit?: number, signal?: AbortSignal) {
    await this.gate;
    return super.read(room, after, limit, signal);
  }
}

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
    const { joined: offered } = await offerPairing(relay, code, payloadOf(key, [laptop.info], 'http://127.0.0.1:8787'));
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
    const { joined: offered } = await offerPairing(relay, code, payloadOf(await generateSyncKey(), []), { timeoutMs: 5000 });
    // Someone who learnt the mailbox but not the code posts a request.
    const stranger = await generateDevice('Stranger');
    await relay.post(secrets.mailbox, utf8(JSON.stringify({ type: 'join', nonce: 'AAAAAAAAAAAAAAAA', sealed: stranger.info.publicKey })));
    await expect(offered).rejects.toThrow(/without the right code/);
  });

  it('says so when the other device does not come', async () => {
    const relay = await relayAt();
    const code = newPairingCode();
    const secrets = await pairingSecrets(code);
    // Its offer is there, but nobody answers: only the 300 ms limit can end the wait, so the refusal in these words is the check.
    await relay.post(secrets.mailbox, utf8(JSON.stringify({ type: 'offer', mac: await codeMac(secrets, ['offer']) })));
    await expect(joinWithCode(relay, code, 'Phone', { timeoutMs: 300 })).rejects.toThrow(/did not answer in time/);
  });

  it('a code no device shows is said at once, before anything is posted or waited for', async () => {
    const relay = await relayAt();
    const shown = newPairingCode();
    const ctl = new AbortController();
    const { joined } = await offerPairing(relay, shown, payloadOf(await generateSyncKey(), []), { signal: ctl.signal });
    // One letter mistyped: another mailbox, with no offer in it. The stand-in fails any wait on the relay.
    const typo = shown.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'));
    const noWait = new NoWait(relay.baseUrl);
    await expect(joinWithCode(noWait, typo, 'Phone')).rejects.toThrow(NOT_SHOWN);
    expect((await relay.read((await pairingSecrets(typo)).mailbox, 0)).last).toBe(0);
    // A stranger's "offer" without the code's MAC is no offer.
    const stranger = newPairingCode();
    await relay.post((await pairingSecrets(stranger)).mailbox, utf8(JSON.stringify({ type: 'offer', mac: 'AAAA' })));
    await expect(joinWithCode(noWait, stranger, 'Phone')).rejects.toThrow(NOT_SHOWN);
    ctl.abort();
    await expect(joined).rejects.toThrow();
  });

  it('a code the other device stopped showing (cancelled, expired, used) is said at once', async () => {
    const relay = await relayAt();
    const code = newPairingCode();
    const ctl = new AbortController();
    const { joined } = await offerPairing(relay, code, payloadOf(await generateSyncKey(), []), { signal: ctl.signal });
    ctl.abort();
    await expect(joined).rejects.toThrow();
    await expect(joinWithCode(new NoWait(relay.baseUrl), code, 'Phone')).rejects.toThrow(SPENT);
  });

  it('cancelled while waiting: the request is withdrawn, and the device showing the code adds nothing', async () => {
    const relay = await relayAt();
    const code = newPairingCode();
    const laptop = new HeldRead(relay.baseUrl);
    const { joined } = await offerPairing(laptop, code, payloadOf(await generateSyncKey(), []));
    const phone = new HeldWait(relay.baseUrl);
    const ctl = new AbortController();
    const joining = joinWithCode(phone, code, 'Phone', { signal: ctl.signal });
    await phone.waiting;
    ctl.abort();
    await expect(joining).rejects.toThrow(CANCELLED);
    // The laptop reads the request only now, with the cancel after it: it answers, sees the cancel first, adds no one.
    laptop.release();
    await expect(joined).rejects.toThrow(/cancelled the pairing/);
    // And the code is spent.
    await expect(joinWithCode(new NoWait(relay.baseUrl), code, 'Tablet')).rejects.toThrow(SPENT);
  });

  it('cancelled after the answer was posted: both devices are paired, neither half', async () => {
    const relay = await relayAt();
    const code = newPairingCode();
    const key = await generateSyncKey();
    const laptop = new HeldRead(relay.baseUrl);
    const { joined } = await offerPairing(laptop, code, payloadOf(key, []));
    const phone = new HeldWait(relay.baseUrl);
    const ctl = new AbortController();
    const joining = joinWithCode(phone, code, 'Phone', { signal: ctl.signal });
    await phone.waiting;
    laptop.release();
    const added = await joined;
    // The phone has not read the answer (its wait is held) when its user cancels: the answer came first.
    ctl.abort();
    const got = await joining;
    expect(got.device.info.id).toBe(added.id);
    expect(got.key.id).toBe(key.id);
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
