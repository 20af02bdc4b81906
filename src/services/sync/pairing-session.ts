// Pairing over the relay (docs/SYNC.md, "Pairing"): the two sides of pairing.ts, talking through
// the mailbox the code names. The first device answers one request only: a request made without
// the code ends the pairing (a new code is needed), so no one gets a second guess.
//
// Besides the request and its answer, the mailbox carries three words only a holder of the code
// can say (each with a MAC under the code): `offer` (posted by the device showing the code before
// it shows it), `closed` (it stopped: used, cancelled or expired) and `cancel` (the joining device
// gave up). So a device typing a wrong or spent code is told at once, not after ten minutes; and a
// cancel is decided by the relay's order of the mailbox, the same for both sides: an answer posted
// before the joining device's cancel pairs both devices, one posted after it pairs neither.
import { fromUtf8, utf8 } from './bytes';
import type { Device, DeviceInfo, SyncKey } from './keys';
import {
  PAIRING_TTL_MS,
  PairingError,
  type JoinReply,
  type JoinRequest,
  type PairingPayload,
  type PairingSecrets,
  answerJoin,
  codeMac,
  codeMacOk,
  finishJoin,
  pairingSecrets,
  replyIsFor,
  requestToJoin,
} from './pairing';
import type { RelayClient, RelayMessage } from './relay-client';

type MailboxMessage =
  | ({ type: 'join' } & JoinRequest)
  | ({ type: 'reply' } & JoinReply)
  | { type: 'offer'; mac: string }
  | { type: 'closed'; mac: string }
  | { type: 'cancel'; of: string; mac: string };

/** Said to the joining device, in the user's words. */
export const NOT_SHOWN =
  'No device is showing this code on this relay. Check the code (and that both devices use the same relay address), or make a new code on the other device.';
export const SPENT =
  'This code is no longer shown on the other device: it expired, was cancelled there or was used already. Make a new code there and type it here.';
export const CANCELLED = 'Pairing cancelled: nothing changed on either device.';

interface Wait {
  signal?: AbortSignal;
  /** How long to wait for the other side; default the code's lifetime. */
  timeoutMs?: number;
  now?: () => number;
}

function parse(m: RelayMessage): MailboxMessage | undefined {
  try {
    return JSON.parse(fromUtf8(m.bytes)) as MailboxMessage;
  } catch {
    return undefined; // not ours: the mailbox is public to whoever knows its name
  }
}

const said = (m: MailboxMessage | undefined, type: 'offer' | 'closed', s: PairingSecrets) =>
  m?.type === type ? codeMacOk(s, [type], m.mac) : Promise.resolve(false);

/** Reads the mailbox after `from` until `pick` returns something, waiting on the relay between reads. */
async function watch<T>(
  relay: RelayClient,
  mailbox: string,
  pick: (m: MailboxMessage, seq: number) => Promise<T | undefined>,
  w: Wait,
  from = 0,
): Promise<T> {
  const now = w.now ?? Date.now;
  const until = now() + (w.timeoutMs ?? PAIRING_TTL_MS);
  let cursor = from;
  while (now() < until) {
    w.signal?.throwIfAborted();
    const { messages } = await relay.read(mailbox, cursor, 100, w.signal);
    for (const m of messages) {
      cursor = m.seq;
      const parsed = parse(m);
      const found = parsed && (await pick(parsed, m.seq));
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

/** Whether the joining device cancelled its request (`of`, the request's nonce) between `after` and `before`. */
async function cancelledBetween(relay: RelayClient, s: PairingSecrets, of: string, after: number, before: number): Promise<boolean> {
  const { messages } = await relay.read(s.mailbox, after, 100);
  for (const m of messages) {
    const c = m.seq < before ? parse(m) : undefined;
    if (c?.type === 'cancel' && c.of === of && (await codeMacOk(s, ['cancel', of], c.mac))) return true;
  }
  return false;
}

/**
 * First device: puts its offer in the mailbox, then waits for the device typing `code` and hands
 * it the key ring. Resolves once the offer is posted (show the code then), with `joined`: the new
 * device. However the wait ends, `closed` is posted after it: the code is spent.
 */
export async function offerPairing(
  relay: RelayClient,
  code: string,
  payload: PairingPayload,
  w: Wait = {},
): Promise<{ joined: Promise<DeviceInfo> }> {
  const secrets = await pairingSecrets(code);
  const post = (m: MailboxMessage, signal?: AbortSignal) => relay.post(secrets.mailbox, utf8(JSON.stringify(m)), signal);
  await post({ type: 'offer', mac: await codeMac(secrets, ['offer']) }, w.signal);
  const answer = async (m: MailboxMessage, seq: number) => {
    if (m.type !== 'join') return undefined;
    // Throws on a request made without the code: the pairing ends there.
    const { reply, joined } = await answerJoin(secrets, m, payload);
    w.signal?.throwIfAborted();
    // Not cut short from here: an answer the relay took stands unless the joining device cancelled first.
    const at = await post({ type: 'reply', ...reply });
    if (await cancelledBetween(relay, secrets, m.nonce, seq, at)) throw new PairingError('The other device cancelled the pairing.');
    return joined;
  };
  const joined = watch(relay, secrets.mailbox, answer, w).finally(async () =>
    post({ type: 'closed', mac: await codeMac(secrets, ['closed']) }).catch(() => undefined),
  );
  return { joined };
}

/** New device: asks through the mailbox `code` names, and gets the key ring; told at once when no device shows the code. */
export async function joinWithCode(
  relay: RelayClient,
  code: string,
  name: string,
  w: Wait = {},
): Promise<{ device: Device; key: SyncKey; devices: DeviceInfo[]; relayUrl?: string }> {
  const { device, request, secrets } = await requestToJoin(code, name);
  // Before anything is posted: a device showing this code put its offer here before showing it.
  const cancelled = (e: unknown) => (w.signal?.aborted ? new PairingError(CANCELLED) : e);
  const { messages } = await relay.read(secrets.mailbox, 0, 100, w.signal).catch((e: unknown) => Promise.reject(cancelled(e)));
  const here = messages.map(parse);
  for (const m of here) if (await said(m, 'closed', secrets)) throw new PairingError(SPENT);
  if (!(await Promise.all(here.map((m) => said(m, 'offer', secrets)))).some(Boolean)) throw new PairingError(NOT_SHOWN);
  if (w.signal?.aborted) throw new PairingError(CANCELLED);
  // Not cut short: once posted, only a cancel in the mailbox withdraws the request.
  const at = await relay.post(secrets.mailbox, utf8(JSON.stringify({ type: 'join', ...request })));
  const take = async (m: MailboxMessage) => {
    if (await said(m, 'closed', secrets)) throw new PairingError(SPENT);
    return m.type === 'reply' && (await replyIsFor(secrets, device.info.id, m)) ? finishJoin(secrets, device, m) : undefined;
  };
  const named = (got: Awaited<ReturnType<typeof finishJoin>>) => {
    // The name the device showing the code gave it (numbered when the list had it already).
    const given = got.devices.find((d) => d.id === device.info.id)?.name ?? device.info.name;
    return { device: { ...device, info: { ...device.info, name: given } }, ...got };
  };
  try {
    return named(await watch(relay, secrets.mailbox, take, w, at));
  } catch (e) {
    if (e instanceof PairingError && e.message === SPENT) throw e;
    // Cancelled, or no answer in time: withdrawn in the mailbox. An answer that came before the
    // withdrawal pairs this device after all (the other one has added it).
    const gone = await relay.post(
      secrets.mailbox,
      utf8(JSON.stringify({ type: 'cancel', of: request.nonce, mac: await codeMac(secrets, ['cancel', request.nonce]) })),
    );
    const { messages: since } = await relay.read(secrets.mailbox, at, 100);
    for (const m of since) {
      const r = m.seq < gone ? parse(m) : undefined;
      if (r?.type === 'reply' && (await replyIsFor(secrets, device.info.id, r))) return named(await finishJoin(secrets, device, r));
    }
    throw cancelled(e);
  }
}
