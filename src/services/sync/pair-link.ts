// A pairing link (docs/SYNC.md, "Pairing"): the QR code beside a shown code holds a link to this app
// that carries the code and the relay, so a phone's camera opens the pairing form filled in. Building,
// reading and checking the link, and the words about it, are here; the page's address is read by
// the app (src/app/settings/pair-link-intake.ts). Nothing here sends anything: the user still presses
// Pair.
import { normalPairingCode } from './pairing';
import { relayRefusal } from './relay-policy';
import type { SyncPhase } from './sync-status';

/** What a pairing link carried, checked against this page's relay policy and the code format. */
export type PairLink =
  | { kind: 'ok'; code: string; relayUrl: string }
  /** Something in it cannot be used: the parts that can are kept, each problem in words. */
  | { kind: 'bad'; code?: string; relayUrl?: string; problems: string[] };

/** The link a QR code shows: `<app>#/settings?pair=<code>&relay=<relay>`, the relay URL-encoded. */
export function pairLink(appUrl: string, code: string, relayUrl: string): string {
  // URLSearchParams encodes the relay's own ?, & and = (and + as %2B), so reading it back gives it whole.
  const query = new URLSearchParams({ pair: code, relay: relayUrl });
  return `${appUrl.split('#')[0]}#/settings?${query.toString()}`;
}

const shorten = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);

/**
 * The pairing link a location hash holds, checked; null when it holds none (no `pair` or `relay`
 * in a `#/settings?...` hash). `policy` is the page's CSP (relay-policy.ts).
 */
export function readPairLink(hash: string, policy: string | undefined): PairLink | null {
  const m = /^#?\/?settings\?(.*)$/s.exec(hash);
  if (!m) return null;
  const query = new URLSearchParams(m[1]);
  const rawCode = query.get('pair');
  const rawRelay = query.get('relay');
  if (rawCode === null && rawRelay === null) return null;
  const problems: string[] = [];
  let code: string | undefined;
  if (!rawCode?.trim()) problems.push('This pairing link carries no code.');
  else {
    try {
      code = normalPairingCode(rawCode);
    } catch {
      problems.push(`This pairing link's code (${shorten(rawCode)}) is not a pairing code: it was cut or changed.`);
    }
  }
  let relayUrl: string | undefined;
  if (!rawRelay?.trim()) problems.push('This pairing link names no relay.');
  else {
    const refusal = relayRefusal(rawRelay.trim(), policy);
    if (refusal) problems.push(`This pairing link's relay (${shorten(rawRelay)}) cannot be used here. ${refusal}`);
    else relayUrl = rawRelay.trim();
  }
  if (code && relayUrl && problems.length === 0) return { kind: 'ok', code, relayUrl };
  return { kind: 'bad', code, relayUrl, problems };
}

export type PairLinkState = 'filled' | 'bad' | 'already-syncing';

export function pairLinkState(link: PairLink, phase: SyncPhase): PairLinkState {
  if (phase !== 'off') return 'already-syncing';
  return link.kind === 'ok' ? 'filled' : 'bad';
}

/** The words shown on the device that opened a pairing link, for every state. */
export function pairLinkWords(link: PairLink, phase: SyncPhase): string {
  switch (pairLinkState(link, phase)) {
    case 'filled':
      return 'Filled in from a code shown on another device: check the relay address, name this device, then Pair.';
    case 'bad': {
      const kept = link.code ? ' Its code is filled in.' : link.relayUrl ? ' Its relay is filled in.' : '';
      return `${link.kind === 'bad' ? link.problems.join(' ') : ''}${kept} Type what the other device shows, or scan its code again.`;
    }
    case 'already-syncing':
      return 'This link pairs a device that does not sync yet, and this one already syncs. To pair it with the device that shows the code, turn sync off here first.';
  }
}

/** Whether a host name is this computer only (loopback). */
export function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '[::1]' || /^127(\.\d{1,3}){3}$/.test(h);
}

export type QrReach = 'reachable' | 'relay-local' | 'app-local' | 'both-local';

/** Whether a phone scanning the QR code could pair: the app and the relay must be reachable from it. */
export function qrReach(appUrl: string, relayUrl: string): QrReach {
  const local = (u: string) => {
    try {
      return isLoopback(new URL(u).hostname);
    } catch {
      return false;
    }
  };
  const app = local(appUrl);
  const relay = local(relayUrl);
  return app && relay ? 'both-local' : relay ? 'relay-local' : app ? 'app-local' : 'reachable';
}

/** The line under the QR code: what scanning it does, honestly, for every reach. */
export function qrReachWords(reach: QrReach): string {
  switch (reach) {
    case 'reachable':
      return "Scan it with the other device's camera: Tealeaf opens there with the code and relay filled in.";
    case 'relay-local':
      return 'A phone scanning this reaches its own 127.0.0.1, not this computer: use a relay address both devices can reach, or type the code.';
    case 'app-local':
      return 'A phone scanning this opens its own 127.0.0.1, not this computer: open Tealeaf at an address both devices can reach, or type the code.';
    case 'both-local':
      return "A phone scanning this reaches its own 127.0.0.1, not this computer: use a relay address both devices can reach, or type the code. Tealeaf's own address here is this computer's only, too.";
  }
}
