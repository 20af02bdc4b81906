// Three relay processes on one PostgreSQL (docs/SYNC.md, "Running a relay for many people"), run as
// relay/README.md runs them: devices on different processes converge; a process killed mid-post
// loses and duplicates nothing; a database killed and restarted loses no acknowledged message; a
// long poll on one process wakes when another stores; SIGTERM lets long polls answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/services/sync/bytes';
import { RelayClient } from '../../src/services/sync/relay-client';
import { sql, startPostgres } from '../support/pg-cluster.mjs';
import { until } from '../support/until';
import { type RelayProcess, holdsPolls, newRoom, spawnRelay } from './relay-helpers';

let cluster: Awaited<ReturnType<typeof startPostgres>>;
let relays: RelayProcess[] = [];
const rooms: string[] = [];

beforeAll(async () => {
  cluster = await startPostgres();
  // Started together: one applies the schema, the others wait for its lock.
  relays = await Promise.all([0, 1, 2].map(() => spawnRelay(cluster.url)));
}, 60_000);
afterAll(async () => {
  for (const r of relays) r.child.kill('SIGKILL');
  await cluster?.stop();
}, 30_000);

const text = (b: Uint8Array) => Buffer.from(b).toString();
const clients = () => relays.map((r) => new RelayClient(r.url));

/** Waits until a relay holds `n` long polls (its /metrics says so). */
const polling = (r: RelayProcess, n: number) => holdsPolls(r.url, n);

/** Waits until no post is running in the database (those of a killed process end by themselves). */
async function settled(): Promise<void> {
  const running = async () =>
    Number(
      (await sql(cluster.url, `SELECT count(*) AS n FROM pg_stat_activity WHERE state <> 'idle' AND query LIKE 'SELECT relay_post%'`))[0].n,
    );
  await until('no post running in the database', async () => (await running()) === 0, 25);
}

/** Posts, retrying while the store is away (503), as a device does: for as long as the restart takes. */
async function postRetrying(client: RelayClient, room: string, body: string): Promise<number> {
  for (;;) {
    try {
      return await client.post(room, utf8(body));
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('three relay processes on one PostgreSQL', () => {
  it('devices on different processes converge: one order, no gaps, and a long poll on one wakes when another stores', async () => {
    const [a, b, c] = clients();
    const { room } = await newRoom();
    rooms.push(room);
    const wakeB = b.wait(room, 0);
    const wakeC = c.wait(room, 0);
    await Promise.all([polling(relays[1], 1), polling(relays[2], 1)]);
    expect(await a.post(room, utf8('first'))).toBe(1);
    expect(await Promise.all([wakeB, wakeC])).toEqual([1, 1]);
    await Promise.all([a, b, c].map((cl, i) => Promise.all(Array.from({ length: 15 }, (_, n) => cl.post(room, utf8(`d${i}-${n}`))))));
    const seen = await Promise.all([a, b, c].map((cl) => cl.read(room, 0)));
    for (const s of seen)
      expect(s.messages.map((m) => [m.seq, text(m.bytes)])).toEqual(seen[0].messages.map((m) => [m.seq, text(m.bytes)]));
    expect(seen[0].messages.map((m) => m.seq)).toEqual(Array.from({ length: 46 }, (_, i) => i + 1));
    expect(new Set(seen[0].messages.map((m) => text(m.bytes))).size).toBe(46);
  });

  it('a process killed (SIGKILL) mid-post loses no acknowledged message and duplicates none', async () => {
    const victim = await spawnRelay(cluster.url);
    const client = new RelayClient(victim.url);
    const { room } = await newRoom();
    const acked = new Set<string>();
    const big = 'x'.repeat(200_000);
    let killed = false;
    const posts = Array.from({ length: 40 }, (_, i) =>
      client.post(room, utf8(`m${i} ${big}`)).then(
        () => {
          acked.add(`m${i}`);
          if (acked.size >= 5 && !killed) {
            killed = true;
            victim.child.kill('SIGKILL');
          }
        },
        () => undefined,
      ),
    );
    await Promise.all(posts);
    expect(await victim.exited).toBe(null);
    expect(acked.size).toBeGreaterThanOrEqual(5);
    expect(acked.size).toBeLessThan(40);
    // The database finishes (commits or rolls back) what the dead process had begun; then we look.
    await settled();
    const { messages, last } = await new RelayClient(relays[0].url).read(room, 0);
    const names = messages.map((m) => text(m.bytes).split(' ')[0]);
    expect(new Set(names).size).toBe(names.length);
    for (const name of acked) expect(names).toContain(name);
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    // The room goes on from the next position.
    expect(await clients()[1].post(room, utf8('after'))).toBe(last + 1);
  });

  it.skipIf(!!process.env.TEALEAF_PG_URL)(
    'a database killed and restarted loses no acknowledged message; long polls wake after it',
    async () => {
      const [a, b, c] = clients();
      const { room } = await newRoom();
      for (let i = 1; i <= 10; i++) expect(await a.post(room, utf8(`before ${i}`))).toBe(i);
      const waiting = b.wait(room, 10);
      await cluster.restart!();
      expect(await postRetrying(c, room, 'after restart')).toBe(11);
      expect(await waiting).toBe(11);
      const got = await postRetrying(a, room, 'and on');
      expect(got).toBe(12);
      expect((await b.read(room, 0)).messages.map((m) => text(m.bytes))).toEqual([
        ...Array.from({ length: 10 }, (_, i) => `before ${i + 1}`),
        'after restart',
        'and on',
      ]);
    },
  );

  it('serves /health and /metrics, logs no room id, and on SIGTERM answers its long polls before it exits', async () => {
    const health = await fetch(`${relays[0].url}/health`);
    expect(await health.json()).toMatchObject({ relay: 'tealeaf', store: 'postgres', draining: false });
    const metrics = await (await fetch(`${relays[0].url}/metrics`)).text();
    for (const name of [
      'tealeaf_relay_rooms',
      'tealeaf_relay_stored_bytes',
      'tealeaf_relay_poll_waiters',
      'tealeaf_relay_posts_total',
      'tealeaf_relay_request_seconds_bucket',
    ])
      expect(metrics).toContain(name);
    const leaving = await spawnRelay(cluster.url);
    const { room } = await newRoom();
    const poll = new RelayClient(leaving.url).wait(room, 3);
    await polling(leaving, 1);
    leaving.child.kill('SIGTERM');
    expect(await poll).toBe(3);
    expect(await leaving.exited).toBe(0);
    expect(leaving.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['listening', 'stopping', 'closed']));
    const logged = JSON.stringify(relays.flatMap((r) => r.logs).concat(leaving.logs));
    for (const r of [...rooms, room]) expect(logged).not.toContain(r);
  });
});
