// Pairing over the relay (docs/SYNC.md, "Pairing"): the two sides of pairing.ts, talking through
// the mailbox the code names. The first device answers one request only: a request made without
// the code ends the pairing (a new code is needed), so no one gets a second guess.
import { fromUtf8, utf8 } from './bytes';
import type { Device, DeviceInfo, SyncKey } from './keys';
import {
  PAIRING_TTL_MS,
  PairingError,
  type JoinReply,
  type JoinRequest,
  type PairingPayload,
  answerJoin,
  finishJoin,
  pairingSecrets,
  requestToJoin,
} from './pairing';
import type { RelayClient } from './relay-client';

type MailboxMessage = ({ type: 'join' } & JoinRequest) | ({ type: 'reply' } & JoinReply);

interface Wait {
  signal?: AbortSignal;
  /** How long to wait for the other side; default the code's lifetime. */
  timeoutMs?: number;
  now?: () => number;
}

/** Reads the mailbox until `pick` returns something, waiting on the relay between reads. */
async function watch<T>(relay: RelayClient, mailbox: string, pick: (m: MailboxMessage) => Promise<T | undefined>, w: Wait): Promise<T> {
  const now = w.now ?? Date.now;
  const until = now() + (w.timeoutMs ?? PAIRING_TTL_MS);
  let cursor = 0;
  while (now() < until) {
    w.signal?.throwIfAborted();
    const { messages } = await relay.read(mailbox, cursor, 100, w.signal);
    for (const m of messages) {
      cursor = m.seq;
      let parsed: MailboxMessage;
      try {
        parsed = JSON.parse(fromUtf8(m.bytes)) as MailboxMessage;
      } catch {
        continue; // not ours: the mailbox is public to whoever knows its name
      }
      const found = await pick(parsed);
      if (found !== undefined) return found;
    }
    if (messages.length === 0) {
      const left = AbortSignal.timeout(Math.max(1, until - now()));
      try {
        await relay.wait(mailbox, cursor, w.signal ? AbortSignal.any([w.signal, left]) : left);
      } catch (e) {
        if (w.signal?.aborted || !left.aborted) throw e;
      }
    }
  }
  throw new PairingError('The other device did not answer in time. Make a new code and try again.');
}

/** First device: waits for the device typing `code`, hands it the key ring; returns the new device. */
export async function offerPairing(relay: RelayClient, code: string, payload: PairingPayload, w: Wait = {}): Promise<DeviceInfo> {
  const secrets = await pairingSecrets(code);
  return watch(
    relay,
    secrets.mailbox,
    async (m) => {
      if (m.type !== 'join') return undefined;
      // Throws on a request made without the code: the pairing ends there.
      const { reply, joined } = await answerJoin(secrets, m, payload);
      await relay.post(secrets.mailbox, utf8(JSON.stringify({ type: 'reply', ...reply })), w.signal);
      return joined;
    },
    w,
  );
}

/** New device: asks through the mailbox `code` names, and gets the key ring. */
export async function joinWithCode(
  relay: RelayClient,
  code: string,
  name: string,
  w: Wait = {},
): Promise<{ device: Device; key: SyncKey; devices: DeviceInfo[]; relayUrl?: string }> {
  const { device, request, secrets } = await requestToJoin(code, name);
  await relay.post(secrets.mailbox, utf8(JSON.stringify({ type: 'join', ...request })), w.signal);
  const got = await watch(relay, secrets.mailbox, async (m) => (m.type === 'reply' ? finishJoin(secrets, device, m) : undefined), w);
  return { device, ...got };
}
