// "Delete all my data" says what it will do in every sync state: "nothing is stored anywhere else"
// only while sync is off; with sync on, the paired devices, and the relay told to drop its encrypted copies.
import { describe, expect, it } from 'vitest';
import { deleteAllWords } from '../../../src/app/settings/delete-all-words';
import { OFF, type SyncPhase, type SyncStatus } from '../../../src/services/sync/sync-status';

const device = (id: string) => ({ id, name: id, publicKey: '' }) as unknown as SyncStatus['devices'][number];
const state = (phase: SyncPhase, others: number): SyncStatus => ({
  ...OFF,
  phase,
  selfId: 'me',
  devices: [device('me'), ...Array.from({ length: others }, (_, i) => device(`d${i}`))],
});

describe('delete-all words', () => {
  it('sync off: this device only, nothing elsewhere', () => {
    const w = deleteAllWords(OFF);
    expect(w.zone).toContain('Nothing is stored anywhere else');
    expect(w.dialog).toContain('from this device.');
  });

  const on: SyncPhase[] = ['starting', 'syncing', 'synced', 'offline', 'error', 'deleted-elsewhere'];
  it.each(on)('sync %s with two other devices: they are asked to empty too, the relay is told to drop its encrypted copies', (phase) => {
    const w = deleteAllWords(state(phase, 2));
    for (const text of [w.zone, w.dialog]) {
      expect(text).not.toContain('anywhere else');
      expect(text).toContain('your 2 other paired devices are asked to delete theirs too');
      expect(text).toContain('one that keeps its data sends it back here');
      expect(text).toContain('The relay is told to drop its encrypted copies');
      expect(text).toContain(phase === 'offline' || phase === 'error' ? 'once this device reaches the relay again' : 'when they next sync');
    }
  });

  it('sync on with one other device, and with none', () => {
    expect(deleteAllWords(state('synced', 1)).zone).toContain('your other paired device is asked');
    const alone = deleteAllWords(state('synced', 0));
    expect(alone.zone).toContain('no other device paired yet');
    expect(alone.zone).not.toContain('anywhere else');
  });

  it('unpaired: the other devices keep what they received', () => {
    const w = deleteAllWords(state('unpaired', 1));
    expect(w.zone).toContain('stays on them');
    expect(w.zone).not.toContain('anywhere else');
    expect(w.dialog).toContain('keep what they received');
  });

  it('every phase has its words (cases run: one per phase)', () => {
    const phases: SyncPhase[] = ['off', 'unpaired', ...on];
    const zones = new Set(phases.map((p) => deleteAllWords(state(p, 1)).zone));
    // off, unpaired, on-while-reachable and on-while-not each read differently.
    expect(zones.size).toBe(4);
  });
});
