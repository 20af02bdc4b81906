// Every sync state's words (src/services/sync/sync-status.ts), and the relay policy check.
import { describe, expect, it } from 'vitest';
import {
  OFF,
  heldWords,
  historyOf,
  historyWords,
  notSeenSince,
  notSeenWords,
  syncWords,
  type SyncPhase,
  type SyncStatus,
} from '../../../src/services/sync/sync-status';
import { connectSources, relayRefusal, sourceAllows } from '../../../src/services/sync/relay-policy';
import { CSP } from '../../../src/csp.js';

const NOW = 1_800_000_000_000;
const me = { id: 'a', name: 'Laptop', publicKey: 'x', pairedAt: NOW };
const phone = { id: 'b', name: 'Phone', publicKey: 'y', pairedAt: NOW };
const base: SyncStatus = { ...OFF, selfId: 'a', devices: [me, phone], relayUrl: 'http://127.0.0.1:8787', lastSyncAt: NOW - 5 * 60_000 };

describe('syncWords: one state, words for every phase', () => {
  const table: Array<[SyncPhase, Partial<SyncStatus>, string, RegExp]> = [
    ['off', {}, 'Sync is off', /Nothing leaves this device/],
    ['starting', {}, 'Sync is starting', /127\.0\.0\.1:8787/],
    ['syncing', { progress: { done: 25, total: 100 } }, 'Receiving your memory (25 %)', /With 1 other device\.$/],
    ['syncing', { progress: { done: 3, total: 4, sending: true } }, 'Sending this device’s memory (75 %)', /With 1 other device\.$/],
    ['syncing', {}, 'Syncing', /With 1 other device\.$/],
    ['synced', {}, 'Synced', /With 1 other device\. Last sync: 5 minutes ago\./],
    ['synced', { pending: true }, 'Synced, sending changes', /Last sync/],
    ['offline', { pending: true }, 'Offline: the relay cannot be reached', /sent when it answers again.*wait to be sent/],
    ['error', { error: 'The relay answered 500.' }, 'Sync stopped on an error', /^The relay answered 500\. It tries again/],
    ['unpaired', {}, 'This device was unpaired', /no longer syncs/],
    [
      'deleted-elsewhere',
      { deletedBy: { name: 'Phone', at: NOW } },
      'Phone deleted all its data',
      /delete it here too, or keep it.*waits for your choice/,
    ],
    ['deleted-elsewhere', {}, 'Another device deleted all its data', /^It was deleted there\. /],
  ];
  for (const [phase, patch, headline, detail] of table) {
    it(`${phase} ${JSON.stringify(patch)}`, () => {
      const w = syncWords({ ...base, phase, ...patch }, NOW);
      expect(w.headline).toBe(headline);
      expect(w.detail).toMatch(detail);
    });
  }
  it('counts the other devices, not this one', () => {
    expect(syncWords({ ...base, phase: 'synced', devices: [me] }, NOW).detail).toMatch(/no other device paired yet/);
    expect(syncWords({ ...base, phase: 'synced', devices: [me, phone, { ...phone, id: 'c' }] }, NOW).detail).toMatch(/2 other devices/);
  });
  it('says "not yet" before any sync and "just now" right after', () => {
    expect(syncWords({ ...base, phase: 'offline', lastSyncAt: undefined }, NOW).detail).toMatch(/Last sync: not yet/);
    expect(syncWords({ ...base, phase: 'synced', lastSyncAt: NOW - 2000 }, NOW).detail).toMatch(/just now/);
  });
});

describe('relay policy: what the CSP lets the app reach', () => {
  it('the built policy allows a relay on loopback, any port, and not an https host it does not name', () => {
    expect(connectSources(CSP)).toContain('http://127.0.0.1:*');
    expect(relayRefusal('http://127.0.0.1:8787', CSP)).toBeUndefined();
    expect(relayRefusal('http://localhost:9999/', CSP)).toBeUndefined();
    expect(relayRefusal('https://relay.example.org', CSP)).toMatch(/may not connect to https:\/\/relay\.example\.org/);
  });
  it('refuses plain http off this computer, and what is not an address', () => {
    expect(relayRefusal('http://relay.example.org', CSP)).toMatch(/needs https/);
    expect(relayRefusal('relay', CSP)).toMatch(/not a web address/);
  });
  it('a host named in the policy is allowed, its wildcard only for subdomains, its port exactly', () => {
    const policy = "default-src 'self'; connect-src 'self' https://relay.example.org https://*.sync.example.net:8443";
    expect(relayRefusal('https://relay.example.org/', policy)).toBeUndefined();
    expect(sourceAllows('https://*.sync.example.net:8443', new URL('https://a.sync.example.net:8443'))).toBe(true);
    expect(sourceAllows('https://*.sync.example.net:8443', new URL('https://sync.example.net:8443'))).toBe(false);
    expect(sourceAllows('https://*.sync.example.net:8443', new URL('https://a.sync.example.net'))).toBe(false);
    expect(relayRefusal('https://relay.example.org.evil.com', policy)).toMatch(/may not connect/);
  });
});

describe('the words of what the relay did, and of records left out', () => {
  it('missing messages turn the headline and say what was done; the relay gone back, reordered and refused ones are said', () => {
    const history = historyOf(
      {
        behind: { had: 40, now: 12, at: NOW - 60_000 },
        reordered: 2,
        refused: { replayed: 1, forged: 1 },
        lastRefused: { why: 'a new key from Phone that was also given to a device this one does not know (“Hidden”)' },
      },
      [{ device: 'b', count: 2 }],
      [me, phone],
    );
    const w = syncWords({ ...base, phase: 'synced', history }, NOW);
    expect(w.headline).toBe('Synced, but messages are missing');
    expect(w.detail).toContain('2 messages from Phone are missing: the relay dropped or is holding them back.');
    expect(w.detail).toContain('the relay had lost messages (it had 12, this device had read 40)');
    expect(w.detail).toContain('2 messages came out of order (the relay reordered them); applied all the same.');
    expect(w.detail).toContain(
      '2 messages were refused: 1 replayed (sent again by the relay), 1 signed by no paired device (a change of the device list). The last: a new key from Phone',
    );
    // A week later the relay's going back is no longer said.
    expect(historyWords(history!, NOW + 8 * 24 * 3600_000).join(' ')).not.toContain('lost messages');
    expect(historyOf({}, [], [me])).toBeUndefined();
  });

  it('a removed device names its removal as the reason a message was refused, and says what to do', () => {
    // Both devices run the same version: "not readable by this version" would send the user to update.
    const history = historyOf({ refused: { malformed: 1 } }, [], [me, phone]);
    const removed = syncWords({ ...base, phase: 'unpaired', history }, NOW).detail;
    expect(removed).not.toMatch(/this version/);
    expect(removed).toContain('1 message could not be read here: this device was removed from sync');
    expect(removed).toMatch(/turn sync off here, then pair it again with a code from one of your devices/);
    // A message under a key this device was not given, on a device still paired: the key changed.
    const rekeyed = syncWords({ ...base, phase: 'synced', history: historyOf({ refused: { 'wrong-key': 2 } }, [], [me, phone]) }, NOW);
    expect(rekeyed.detail).toContain('2 messages were refused: sealed with a newer key this device was not given (the key changed).');
    expect(rekeyed.detail).toMatch(/If this stays, this device was removed from sync: turn sync off here, then pair it again/);
  });

  it('records left out name their sender by its name, or say it is not in the list', () => {
    const held = heldWords(
      [
        { kind: 'memories', id: 'm1', from: 'b', problem: 'text: expected a string, got number 5' },
        { kind: 'edges', id: 'e1', from: 'z', problem: 'relation: …' },
        { kind: 'turns', id: 't1', problem: 'usedMemory: …' },
      ],
      [me, phone],
    );
    expect(held.map((h) => `${h.kind} ${h.id} from ${h.from}`)).toEqual([
      'memory m1 from Phone',
      'link e1 from a device not in your list',
      'message t1 from another device',
    ]);
    expect(syncWords({ ...base, phase: 'synced', quarantined: held }, NOW).detail).toMatch(
      /3 records from another device were left out \(listed below\)/,
    );
    expect(syncWords({ ...base, phase: 'synced', quarantined: held.slice(0, 1) }, NOW).detail).toMatch(
      /1 record from another device was left out/,
    );
  });
});

describe('after a key change', () => {
  it('a device stopped in a closed room says it was unpaired and why; a ring member not seen since the change is flagged', () => {
    const leftBehind = historyOf({ leftBehind: { why: 'a new key from Phone, which Laptop removed from sync' } }, [], [me, phone]);
    const w = syncWords({ ...base, phase: 'unpaired', history: leftBehind }, NOW);
    expect(w.headline).toBe('This device was unpaired');
    expect(w.detail).toMatch(/could not follow \(a new key from Phone, which Laptop removed from sync\).*pair it again/);
    // Flagged: the phone, paired before the move and not seen since; not this device, not one paired after.
    const tablet = { id: 'c', name: 'Tablet', publicKey: 'z', pairedAt: NOW + 10 };
    const notSeen = notSeenSince({ movedAt: NOW, seenHere: new Set(['a']) }, [
      { ...me, pairedAt: NOW - 1 },
      { ...phone, pairedAt: NOW - 1 },
      tablet,
    ]);
    expect(notSeen).toEqual({ ids: ['b'], since: NOW });
    const status = { ...base, phase: 'synced' as const, notSeen };
    expect(notSeenWords(status, 'b')).toMatch(/^not seen since the key changed on .*unpair it if you no longer hold it$/);
    expect(notSeenWords(status, 'c')).toBeUndefined();
    expect(notSeenSince({ movedAt: undefined, seenHere: new Set() }, [me, phone])).toBeUndefined();
  });
});
