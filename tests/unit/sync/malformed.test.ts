// Records that arrive through sync enter through the same gate as a backup
// import (one schema, the limits of src/memory/limits.ts). A bad record is quarantined and named,
// the rest of its message is written, and sync goes on; what the store holds can always be
// exported and imported again (the rescue screen's backup).
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { exportBackup, serializeBackup, validateBackup } from '../../../src/store/backup';
import { syncWords } from '../../../src/services/sync/sync-status';
import { T, memory, session } from './records';
import { laptopAndPhone, until } from './devices';
import { keyHolder } from './hostile';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const good = memory('m1', 'a good memory');
const edge = { id: 'edge:m1->m2', from: 'm1', to: 'm2', relation: 'Cause', origin: 'model', createdAt: T };
const turn = { id: 's1/t0', sessionId: 's1', index: 0, role: 'user', text: 'hello', time: T, status: 'complete' };

async function paired() {
  const d = await laptopAndPhone(closers);
  await d.laptop.apply({ sessions: [session], turns: [turn as never], memories: [good, memory('m2', 'two')], edges: [edge as never] });
  await d.a.turnOn(d.relay.url, 'Laptop');
  await until('the upload', () => d.a.status.phase === 'synced' && !d.a.status.pending);
  await d.b.join(d.relay.url, await d.a.offerCode(), 'Phone');
  await until('the first sync', async () => (await d.phone.listMemories()).length === 2);
  return d;
}

describe('malformed records from another device', () => {
  it('are quarantined and named; the rest arrives, later changes arrive, and the store still exports and imports', async () => {
    const { relay, laptop, phone, a, b } = await paired();
    const stolen = await keyHolder(phone.db, relay.url);
    await stolen.read();
    await stolen.write({
      'e0/memories': {
        'bad-text': { ...memory('bad-text', 'x'), text: 5 },
        'no-id': { ...memory('x', 'no id'), id: undefined },
        fine: memory('fine', 'a fine memory in the same message'),
        m2: { ...memory('m2', 'two'), kind: 'a kind from the future' },
      },
      'e0/sessions': { 's-null': { ...session, id: 's-null', title: null } },
      'e0/turns': { 's1/t0': { ...turn, usedMemory: 'a string' } },
      'e0/edges': { 'edge:m1->m2': { ...edge, relation: 'Inspires' } },
    });
    // A later good change from the laptop still arrives (sync did not stop).
    await laptop.apply({ memories: [memory('after', 'written after the bad message')] });
    for (const [repo, service] of [
      [phone, b],
      [laptop, a],
    ] as const) {
      await until('the later change', async () => (await repo.getMemory('after')) !== undefined);
      expect(await repo.getMemory('fine')).toBeDefined();
      expect(await repo.getMemory('bad-text')).toBeUndefined();
      expect(await repo.getMemory('no-id')).toBeUndefined();
      expect(await repo.getSession('s-null')).toBeUndefined();
      // What was there before is kept as it was.
      expect((await repo.getMemory('m2'))?.kind).toBe('event');
      expect((await repo.listTurns('s1'))[0]?.usedMemory).toBeUndefined();
      expect((await repo.listEdges()).map((e) => e.relation)).toEqual(['Cause']);
      await until('the quarantine in the status', () => (service.status.quarantined?.length ?? 0) === 6);
      const named = service.status.quarantined!.map((q) => `${q.kind} ${q.id}: ${q.problem}`).sort();
      expect(named).toEqual([
        'chat s-null: title: expected a string, got null',
        'link edge:m1->m2: relation: expected one of "Changed", "Cause", "Reason", "HinderedBy", "React", "Want", "SameTopic", got the string "Inspires"',
        'memory bad-text: text: expected a string, got number 5',
        'memory m2: kind: expected one of "event", "user-trait", "assistant-trait", "note", "instruction", got the string "a kind from the future"',
        'memory no-id: id: missing (undefined is not a JSON value)',
        'message s1/t0: usedMemory: expected an object, got the string "a string"',
      ]);
      expect(service.status.quarantined!.every((q) => q.from === 'a device not in your list')).toBe(true);
      expect(syncWords(service.status).detail).toMatch(/6 records from another device were left out/);
      // The rescue screen's backup of this device is one the app's own import takes.
      const file = serializeBackup(await exportBackup(repo.db));
      expect(() => validateBackup(file)).not.toThrow();
    }
  });

  it('a quarantined record that a later message puts right is written, and leaves the list', async () => {
    const { relay, phone, b } = await paired();
    const stolen = await keyHolder(phone.db, relay.url);
    await stolen.read();
    await stolen.write({ 'e0/memories': { m3: { ...memory('m3', 'x'), text: 5 } } });
    await until('the quarantine', () => (b.status.quarantined?.length ?? 0) === 1);
    await stolen.write({ 'e0/memories': { m3: memory('m3', 'put right') } });
    await until('the record written', async () => (await phone.getMemory('m3'))?.text === 'put right');
    await until('the list empty', () => (b.status.quarantined?.length ?? 0) === 0);
  });

  it('a value that is not a record, a text past the limit and a hostile key is quarantined too', async () => {
    const { relay, phone, b } = await paired();
    const stolen = await keyHolder(phone.db, relay.url);
    await stolen.write({
      'e0/memories': {
        huge: memory('huge', 'x'.repeat(1_000_001)),
        proto: JSON.parse(`{"__proto__": {"polluted": true}, "id": "proto"}`) as unknown,
        num: 42,
      },
      // Not an epoch: nothing is wiped and nothing is asked.
      meta: { epoch: { id: 7, at: 'yesterday' } },
    });
    await until('the quarantine', () => (b.status.quarantined?.length ?? 0) === 3);
    expect((await phone.listMemories()).length).toBe(2);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(b.status.phase).toBe('synced');
  });
});
