// Two devices append to the same open chat while one is offline: both write a turn at the same
// (session, index), which the IndexedDB store's unique index refuses. Sync must not stall on it,
// and both devices must end with the same turns in the same order (docs/SYNC.md, "Turn positions").
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Session, Turn } from '../../../src/memory/types';
import { IdbRepository } from '../../../src/store/repository';
import { readSyncRows } from '../../../src/store/sync-store';
import type { SyncState } from '../../../src/services/sync/engine';
import { RelayClient, RelayError } from '../../../src/services/sync/relay-client';
import { positions } from '../../../src/services/sync/turn-positions';
import { T, memory } from './records';
import { laptopAndPhone, until } from './devices';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (closers.length) await closers.pop()!();
});

const chat: Session = { id: 's1', title: 'the open chat', startedAt: T, lastActivityAt: T + 1, status: 'open' };
const turn = (id: string, index: number, at: number, role: Turn['role'] = index % 2 ? 'assistant' : 'user'): Turn => ({
  id,
  sessionId: 's1',
  index,
  role,
  text: `${id} says something`,
  time: T + at,
  status: 'complete',
});

/** Two devices over a relay; the phone's relay traffic can be cut (it is "offline"). */
async function twoDevices() {
  const { relay, laptop, phone, a, b } = await laptopAndPhone(closers);
  const offline = new Set<unknown>();
  for (const name of ['read', 'wait', 'post'] as const) {
    const real = RelayClient.prototype[name] as (...args: unknown[]) => Promise<unknown>;
    vi.spyOn(RelayClient.prototype, name).mockImplementation(async function (this: RelayClient, ...args: unknown[]) {
      if (offline.has(this)) throw new RelayError('offline (test)');
      return real.apply(this, args);
    } as never);
  }
  const phoneRelay = () => (b as unknown as { relay: RelayClient }).relay;
  return { relay, laptop, phone, a, b, offline, phoneRelay };
}

const order = async (repo: IdbRepository) => (await repo.listTurns('s1')).map((t) => `${t.index}:${t.id}`);

describe('turn positions across devices', () => {
  it('both devices append to one chat, one offline: sync goes on and both end with the same turns in the same order', async () => {
    const { laptop, phone, a, b, offline, phoneRelay, relay } = await twoDevices();
    await laptop.apply({ sessions: [chat], turns: [turn('t0', 0, 0), turn('t1', 1, 1)] });
    await a.turnOn(relay.url, 'laptop');
    await until('the upload', async () => a.status.phase === 'synced' && !a.status.pending);
    await b.join(relay.url, await a.offerCode(), 'phone');
    await until('the chat on the phone', async () => (await phone.listTurns('s1')).length === 2);

    // The phone goes offline and the user goes on there first (earlier times)...
    offline.add(phoneRelay());
    await phone.apply({ sessions: [{ ...chat, lastActivityAt: T + 100 }], turns: [turn('p2', 2, 100)] });
    await phone.apply({ turns: [turn('p3', 3, 101)] });
    // ...then on the laptop, which is online: its turns take the same positions 2 and 3. On the
    // laptop its own turn is there first but sorts after the phone's (the shortcut "keep what is
    // stored, move what arrives" would order the two devices differently).
    await laptop.apply({ sessions: [{ ...chat, lastActivityAt: T + 200 }], turns: [turn('l2', 2, 200)] });
    await laptop.apply({ turns: [turn('l3', 3, 201)] });
    await until('the laptop’s turns on the relay', async () => a.status.phase === 'synced' && !a.status.pending);

    // Back online.
    offline.clear();
    b.kick();
    const expected = ['0:t0', '1:t1', '2:p2', '3:p3', '4:l2', '5:l3'];
    await until(
      'both devices to hold the same six turns',
      async () =>
        JSON.stringify(await order(laptop)) === JSON.stringify(expected) && JSON.stringify(await order(phone)) === JSON.stringify(expected),
    ).catch(async (e: Error) => {
      throw new Error(
        `${e.message}: laptop ${(await order(laptop)).join(' ')}; phone ${(await order(phone)).join(' ')}; laptop ${a.status.phase} ${a.status.error ?? ''}; phone ${b.status.phase} ${b.status.error ?? ''}`,
      );
    });
    // Nothing lost: each turn's text is as written.
    expect((await laptop.listTurns('s1')).map((t) => t.text)).toEqual((await phone.listTurns('s1')).map((t) => t.text));

    // Not stalled: nothing waits to be written, and a later change goes through both ways.
    await phone.apply({ memories: [memory('m1', 'after the merge')] });
    await until('the phone’s memory on the laptop', async () => (await laptop.getMemory('m1')) !== undefined);
    await laptop.apply({ turns: [turn('l6', 6, 300)] });
    await until('the laptop’s next turn on the phone', async () => (await order(phone)).at(-1) === '6:l6');
    for (const repo of [laptop, phone]) {
      const state = (await readSyncRows(repo.db)).get('state') as SyncState;
      expect(state.unapplied ?? []).toEqual([]);
    }
  });
});

describe('positions (pure)', () => {
  const at = (id: string, index: number, time: number): Turn => ({ ...turn(id, index, time) });
  const moved = (turns: Turn[]) => Object.fromEntries(positions(turns));
  it.each([
    ['no position shared: nothing moves', [at('a', 0, 0), at('b', 1, 1), at('c', 2, 2)], {}],
    ['a gap but nothing shared: nothing moves', [at('a', 0, 0), at('c', 5, 2)], {}],
    // The turn stored first (x, on its device) was said later: the one said first takes the place.
    ['two at one place: the one said first keeps it', [at('x', 2, 20), at('y', 2, 10)], { x: 3 }],
    [
      'two runs of two: each device’s turns stay together, in the order said',
      [at('t0', 0, 0), at('a2', 2, 200), at('a3', 3, 201), at('b2', 2, 100), at('b3', 3, 101), at('t1', 1, 1)],
      { a2: 4, a3: 5 },
    ],
    ['one time for a question and its reply: the index keeps them in order', [at('q', 2, 7), at('r', 3, 7), at('z', 2, 9)], { z: 4 }],
    ['same time and index: the id decides', [at('m', 1, 5), at('k', 1, 5)], { m: 2 }],
    [
      'later turns are numbered on after the shared place (dense, none lost)',
      [at('a', 0, 0), at('b', 1, 1), at('c', 1, 2), at('d', 4, 3)],
      { c: 2, d: 3 },
    ],
  ])('%s', (_name, turns, expected) => {
    expect(moved(turns)).toEqual(expected);
    // The same on every device, whatever order it holds them in.
    expect(moved([...turns].reverse())).toEqual(expected);
  });
});
