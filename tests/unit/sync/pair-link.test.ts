// The pairing link a QR code carries (src/services/sync/pair-link.ts): built and read back whole,
// a malformed code and a refused relay said in words and not filled in, and the words for every state.
import { describe, expect, it } from 'vitest';
import { CSP } from '../../../src/csp.js';
import { newPairingCode } from '../../../src/services/sync/pairing';
import {
  isLoopback,
  pairLink,
  pairLinkState,
  pairLinkWords,
  qrReach,
  qrReachWords,
  readPairLink,
  type PairLink,
  type QrReach,
} from '../../../src/services/sync/pair-link';
import type { SyncPhase } from '../../../src/services/sync/sync-status';

const APP = 'http://127.0.0.1:5173/';
const CODE = 'K3QF-7ZC2-M9PA-X4TB-0HJR-6VWE';
const RELAY = 'http://127.0.0.1:8787';
// A build that names one https relay (TEALEAF_SYNC_RELAYS).
const NAMED = CSP.replace('connect-src ', 'connect-src https://relay.example.org ');
// A relay whose own address has a query with & and =: splitting the link on them naively cuts it.
const TRICKY = 'https://relay.example.org/r?room=a+b&key=c=d&x=%26';

const hashOf = (link: string) => link.slice(link.indexOf('#'));

describe('pairLink and readPairLink', () => {
  it('round trip: the code and relay come back as they went in, the hash opens Settings', () => {
    const code = newPairingCode();
    const link = pairLink(APP, code, RELAY);
    expect(link.startsWith(`${APP}#/settings?pair=${code}&relay=`)).toBe(true);
    expect(readPairLink(hashOf(link), CSP)).toEqual({ kind: 'ok', code, relayUrl: RELAY });
  });

  it("a relay with its own query (& and =, a +, an encoded &) is carried whole, and the link has one '&'", () => {
    const link = pairLink(APP, CODE, TRICKY);
    expect(hashOf(link).split('&')).toHaveLength(2);
    expect(hashOf(link).split('=')).toHaveLength(3);
    expect(readPairLink(hashOf(link), NAMED)).toEqual({ kind: 'ok', code: CODE, relayUrl: TRICKY });
  });

  it("drops what followed '#' in the app address (a link never carries two fragments)", () => {
    expect(pairLink('http://127.0.0.1:5173/#/chat', CODE, RELAY)).toBe(pairLink('http://127.0.0.1:5173/', CODE, RELAY));
  });

  it('reads a code typed loosely (lower case, no dashes, O for 0) as the code shown', () => {
    const loose = CODE.toLowerCase().replace(/-/g, '').replace('0', 'o');
    expect(readPairLink(`#/settings?pair=${loose}&relay=${encodeURIComponent(RELAY)}`, CSP)).toEqual({
      kind: 'ok',
      code: CODE,
      relayUrl: RELAY,
    });
  });

  it('a hash without a pairing link is none', () => {
    for (const h of ['', '#/settings', '#/chat', '#/settings?x=1', '#/chat?pair=ABCD']) expect(readPairLink(h, CSP)).toBeNull();
  });

  it('a malformed code is said in words and not filled in; the relay, good, still is', () => {
    for (const bad of [CODE.slice(0, -5), `${CODE}-AAAA`, CODE.replace('K', 'U'), '<b>hi</b>']) {
      const link = readPairLink(`#/settings?pair=${encodeURIComponent(bad)}&relay=${encodeURIComponent(RELAY)}`, CSP);
      expect(link?.kind).toBe('bad');
      expect(link?.code).toBeUndefined();
      expect(link?.relayUrl).toBe(RELAY);
      expect(link?.kind === 'bad' && link.problems.join(' ')).toMatch(/code .* is not a pairing code/);
    }
  });

  it('a relay this page may not use is refused in words and not filled in; the code, good, still is', () => {
    const cases: Array<[string, RegExp]> = [
      [TRICKY, /may not connect to https:\/\/relay\.example\.org/],
      ['http://relay.example.org', /needs https/],
      ['javascript:alert(1)', /starts with http/],
      ['relay', /not a web address/],
    ];
    for (const [relay, why] of cases) {
      const link = readPairLink(hashOf(pairLink(APP, CODE, relay)), CSP);
      expect(link).toMatchObject({ kind: 'bad', code: CODE, relayUrl: undefined });
      expect(link?.kind === 'bad' && link.problems.join(' ')).toMatch(why);
    }
  });

  it('a link missing a part says which', () => {
    expect(readPairLink(`#/settings?pair=${CODE}`, CSP)).toEqual({
      kind: 'bad',
      code: CODE,
      relayUrl: undefined,
      problems: ['This pairing link names no relay.'],
    });
    expect(readPairLink(`#/settings?relay=${encodeURIComponent(RELAY)}`, CSP)).toEqual({
      kind: 'bad',
      code: undefined,
      relayUrl: RELAY,
      problems: ['This pairing link carries no code.'],
    });
  });
});

describe('pairLinkWords: one state, words for every state', () => {
  const ok: PairLink = { kind: 'ok', code: CODE, relayUrl: RELAY };
  const badCode: PairLink = { kind: 'bad', relayUrl: RELAY, problems: ['This pairing link carries no code.'] };
  const badRelay: PairLink = { kind: 'bad', code: CODE, problems: ["This pairing link's relay (x) cannot be used here."] };
  const table: Array<[PairLink, SyncPhase, string, RegExp]> = [
    [ok, 'off', 'filled', /^Filled in from a code shown on another device: check the relay address, name this device, then Pair\.$/],
    [badCode, 'off', 'bad', /^This pairing link carries no code\. Its relay is filled in\. Type what the other device shows/],
    [badRelay, 'off', 'bad', /^This pairing link's relay \(x\) cannot be used here\. Its code is filled in\. Type/],
    [ok, 'synced', 'already-syncing', /this one already syncs\. To pair it .* turn sync off here first\.$/],
    [badRelay, 'offline', 'already-syncing', /already syncs/],
    [ok, 'unpaired', 'already-syncing', /already syncs/],
  ];
  for (const [link, phase, state, words] of table) {
    it(`${link.kind} link, sync ${phase}: ${state}`, () => {
      expect(pairLinkState(link, phase)).toBe(state);
      expect(pairLinkWords(link, phase)).toMatch(words);
    });
  }
});

describe('qrReach: whether a phone scanning the QR code can pair, in words', () => {
  const table: Array<[string, string, QrReach, RegExp]> = [
    ['https://tealeaf.example.org/', 'https://relay.example.org', 'reachable', /^Scan it with the other device's camera/],
    [
      'https://tealeaf.example.org/',
      'http://127.0.0.1:8787',
      'relay-local',
      /^A phone scanning this reaches its own 127\.0\.0\.1, not this computer: use a relay address both devices can reach, or type the code\.$/,
    ],
    ['https://tealeaf.example.org/', 'http://localhost:8787', 'relay-local', /relay address both devices can reach/],
    ['https://tealeaf.example.org/', 'http://[::1]:8787', 'relay-local', /relay address/],
    ['https://tealeaf.example.org/', 'http://127.8.0.3:8787', 'relay-local', /relay address/],
    [
      'http://localhost:5173/',
      'https://relay.example.org',
      'app-local',
      /open Tealeaf at an address both devices can reach, or type the code\.$/,
    ],
    [
      'http://127.0.0.1:5173/',
      'http://127.0.0.1:8787',
      'both-local',
      /^A phone scanning this reaches its own 127\.0\.0\.1.*relay address.*Tealeaf's own address here is this computer's only, too\.$/,
    ],
    // Names that only look local are not: a phone may well reach them.
    ['https://localhost.example.org/', 'https://127.0.0.1.example.org', 'reachable', /Scan it/],
  ];
  for (const [app, relay, reach, words] of table) {
    it(`${app} + ${relay}: ${reach}`, () => {
      expect(qrReach(app, relay)).toBe(reach);
      expect(qrReachWords(qrReach(app, relay))).toMatch(words);
    });
  }
  it('loopback names', () => {
    expect(['localhost', 'LOCALHOST', 'a.localhost', '127.0.0.1', '127.255.0.9', '[::1]'].every(isLoopback)).toBe(true);
    expect(['localhost.example.org', '127.0.0.1.nip.io', '10.0.0.2', '192.168.1.5', '[::2]'].some(isLoopback)).toBe(false);
  });
});
