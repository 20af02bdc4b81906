// bench:relay (results in BENCHMARKS.md, "A relay for everyone"): 2,000 simulated devices
// in 1,000 rooms on 127.0.0.1, against 1 and then 3 relay processes (relay/relay.mjs --postgres) on
// one private PostgreSQL (tests/support/pg-cluster.mjs). Per process count:
//   rate phase:   posts at a fixed rate (--rate, 200/s) for --seconds (or --minutes): post-to-delivery
//                 latency (sent, then read by the room's other device through its long poll), p50/p99,
//                 and each relay process's resident memory, sampled through the phase;
//   burst phase:  48 posters as fast as the relays take them for --burst-seconds: posts per second;
//   bytes:        the database's bytes per room, then after each room's snapshot (4 bodies' size)
//                 compacts it.
// Devices post to one process and listen on the next, so with 3 processes delivery crosses processes.
//   npm run bench:relay -- [--processes 1,3] [--rooms 1000] [--rate 200] [--seconds 60] [--minutes 0]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { sql, startPostgres } from '../tests/support/pg-cluster.mjs';
import { agent, listen, median, newRoomKey, post, quantile } from './relay/devices.mjs';

const opt = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const PROCESSES = opt('processes', '1,3').split(',').map(Number);
const ROOMS = Number(opt('rooms', '1000'));
const RATE = Number(opt('rate', '200'));
const MINUTES = Number(opt('minutes', '0'));
const SECONDS = MINUTES > 0 ? MINUTES * 60 : Number(opt('seconds', '60'));
const BURST_SECONDS = Number(opt('burst-seconds', '20'));
const BODY = Number(opt('body', '700')); // a small sealed update: one edit
const POSTERS = 48;

const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const mb = (b) => Math.round(b / 1e5) / 10;

function spawnRelay(url) {
  const child = spawn(
    process.execPath,
    [
      // RELAY_NODE_ARGS: e.g. --cpu-prof, to see where a relay process spends its time.
      ...(process.env.RELAY_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      'relay/relay.mjs',
      '--postgres',
      url,
      '--port',
      '0',
      // Every simulated device comes from 127.0.0.1: the per-address limits would see one person.
      '--address-posts',
      '1000000000',
      '--address-rooms',
      '1000000000',
      '--address-polls',
      '1000000000',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const e = JSON.parse(line);
      if (e.msg === 'listening') resolve({ url: `http://127.0.0.1:${e.port}`, child });
    });
    child.once('exit', (code) => reject(new Error(`relay exited ${code}`)));
  });
}

// Sealed bytes do not compress: bodies are random, or the database's compression would flatter them.
const NOISE = randomBytes(BODY * 4);

/** A body: [u32 device][f64 time sent][random bytes]. */
function body(device) {
  const b = Buffer.from(NOISE.subarray(0, BODY));
  b.writeUInt32BE(device, 0);
  b.writeDoubleBE(performance.now(), 4);
  return b;
}

/** The relays' own post times (their /metrics histograms summed): upper bounds of the buckets holding p50 and p99, in ms. */
async function serverPostTimes(relays) {
  const buckets = new Map();
  for (const r of relays) {
    const text = await (await fetch(`${r.url}/metrics`)).text();
    for (const m of text.matchAll(/^tealeaf_relay_request_seconds_bucket\{route="post",le="([^"]+)"\} (\d+)$/gm))
      buckets.set(m[1], (buckets.get(m[1]) ?? 0) + Number(m[2]));
  }
  const total = buckets.get('+Inf') ?? 0;
  const at = (q) => [...buckets].find(([, n]) => n >= q * total)?.[0];
  const ms = (le) => (le === '+Inf' || le === undefined ? Infinity : Number(le) * 1000);
  return { p50: ms(at(0.5)), p99: ms(at(0.99)) };
}

async function dbBytes(url) {
  const [r] = await sql(
    url,
    `SELECT (SELECT count(*) FROM relay_rooms) AS rooms, (SELECT coalesce(sum(bytes), 0) FROM relay_rooms) AS payload,
            (SELECT count(*) FROM relay_messages) AS messages,
            pg_total_relation_size('relay_messages') + pg_total_relation_size('relay_rooms') AS disk`,
  );
  return { rooms: Number(r.rooms), payload: Number(r.payload), messages: Number(r.messages), disk: Number(r.disk) };
}

async function run(cluster, processes) {
  await sql(cluster.url, 'DROP TABLE IF EXISTS relay_messages, relay_rooms, relay_nonces, relay_births CASCADE');
  const relays = [];
  for (let i = 0; i < processes; i++) relays.push(await spawnRelay(cluster.url));
  const keys = Array.from({ length: ROOMS }, newRoomKey);
  const devices = ROOMS * 2;
  const postTo = (d) => relays[d % processes].url;
  const listenOn = (d) => relays[(d + 1) % processes].url;
  // Claim every room (its first signed post), then open 2,000 long polls.
  for (let i = 0; i < ROOMS; i += 50)
    await Promise.all(keys.slice(i, i + 50).map((k, j) => post(postTo(2 * (i + j)), k, body(2 * (i + j)))));
  const stop = new AbortController();
  const delivered = [];
  let measuring = false;
  const listening = Array.from({ length: devices }, (_, d) =>
    listen(listenOn(d), keys[d >> 1].room, stop.signal, (bytes, at) => {
      const from = bytes.readUInt32BE(0);
      if (measuring && from !== d && from >> 1 === d >> 1) delivered.push(at - bytes.readDoubleBE(4));
    }),
  );
  await new Promise((r) => setTimeout(r, 2000));
  const rss = relays.map(() => []);
  const sample = () => relays.forEach((r, i) => rss[i].push(rssOf(r.child.pid)));
  sample();
  const sampler = setInterval(sample, 5000);

  // Rate phase: RATE posts a second, from random devices, for SECONDS.
  measuring = true;
  const acks = [];
  let refused = 0;
  let behind = 0;
  let inFlight = 0;
  const phaseEnd = performance.now() + SECONDS * 1000;
  const started = performance.now();
  let sent = 0;
  while (performance.now() < phaseEnd) {
    const due = Math.floor(((performance.now() - started) / 1000) * RATE);
    for (; sent < due; sent++) {
      if (inFlight > 1000) {
        behind++;
        continue;
      }
      const d = Math.floor(Math.random() * devices);
      const t0 = performance.now();
      inFlight++;
      post(postTo(d), keys[d >> 1], body(d))
        .then((r) => (r.status === 201 ? acks.push(performance.now() - t0) : refused++))
        .catch(() => refused++)
        .finally(() => inFlight--);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 1000)); // the last deliveries
  measuring = false;
  const server = await serverPostTimes(relays);
  const rate = {
    serverP50: server.p50,
    serverP99: server.p99,
    posted: acks.length,
    refused,
    behind,
    ackP50: median(acks),
    ackP99: quantile(acks, 0.99),
    p50: median(delivered),
    p99: quantile(delivered, 0.99),
    delivered: delivered.length,
  };

  // Burst phase: POSTERS posting back to back.
  let burst = 0;
  const burstEnd = performance.now() + BURST_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: POSTERS }, async () => {
      while (performance.now() < burstEnd) {
        const d = Math.floor(Math.random() * devices);
        const r = await post(postTo(d), keys[d >> 1], body(d)).catch(() => ({ status: 0 }));
        if (r.status === 201) burst++;
      }
    }),
  );
  clearInterval(sampler);
  sample();
  stop.abort();
  await Promise.all(listening);

  // Bytes per room, then a snapshot in each room that replaces what came before it.
  await sql(cluster.url, 'VACUUM FULL relay_messages');
  const before = await dbBytes(cluster.url);
  for (let i = 0; i < ROOMS; i += 50)
    await Promise.all(
      keys.slice(i, i + 50).map(async (k, j) => {
        const [{ last }] = await sql(cluster.url, 'SELECT last FROM relay_rooms WHERE id = $1', [k.room]);
        return post(postTo(2 * (i + j)), k, NOISE, Number(last));
      }),
    );
  await sql(cluster.url, 'VACUUM FULL relay_messages');
  const after = await dbBytes(cluster.url);
  for (const r of relays) r.child.kill('SIGTERM');
  const perMinute = rss.map((xs) => xs.filter((_, i) => i % 12 === 0).map(mb));
  return {
    processes,
    rate,
    burstPerSecond: Math.round(burst / BURST_SECONDS),
    rssMB: rss.map((xs) => ({ first: mb(xs[0]), max: mb(Math.max(...xs)), last: mb(xs.at(-1)), perMinute: perMinute[0] })),
    before,
    after,
  };
}

const cluster = await startPostgres({ private: true });
const results = [];
try {
  for (const p of PROCESSES) {
    const r = await run(cluster, p);
    results.push(r);
    console.error(JSON.stringify(r));
  }
} finally {
  agent.destroy();
  await cluster.stop();
}

const f = (x) => (Number.isFinite(x) ? Math.round(x) : '—');
console.log(
  `\n${ROOMS * 2} devices in ${ROOMS} rooms, ${RATE} posts/s for ${SECONDS} s, bodies of ${BODY} bytes, burst ${POSTERS} posters for ${BURST_SECONDS} s\n`,
);
console.log(
  '| relay processes | posted at the rate (refused, behind) | post acknowledged p50 / p99 ms (in the relay: bucket bounds) | delivered p50 / p99 ms | burst posts/s | relay RSS MB first → max → last | DB bytes per room (payload) | after compaction |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  const rss = r.rssMB.map((m) => `${m.first} → ${m.max} → ${m.last}`).join('; ');
  console.log(
    `| ${r.processes} | ${r.rate.posted} (${r.rate.refused}, ${r.rate.behind}) | ${f(r.rate.ackP50)} / ${f(r.rate.ackP99)} (${r.rate.serverP50} / ${r.rate.serverP99}) | ${f(r.rate.p50)} / ${f(r.rate.p99)} | ${r.burstPerSecond} | ${rss} | ${f(r.before.disk / r.before.rooms)} (${f(r.before.payload / r.before.rooms)}) | ${f(r.after.disk / r.after.rooms)} (${f(r.after.payload / r.after.rooms)}) |`,
  );
}
if (results.length > 1)
  console.log(
    `\nburst throughput, ${results.at(-1).processes} processes over ${results[0].processes}: ${(results.at(-1).burstPerSecond / results[0].burstPerSecond).toFixed(2)}x`,
  );
for (const r of results)
  if (MINUTES > 0) console.log(`RSS per minute, ${r.processes} process(es), the first: ${r.rssMB[0].perMinute.join(', ')} MB`);
