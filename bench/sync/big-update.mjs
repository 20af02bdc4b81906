// bench:sync:big: the longest main-thread task on a page that receives one
// large sync update. Two Chromium profiles paired through Settings (A and B, the build in --dist
// served on 127.0.0.1, relay/relay.mjs on a free port); then a device holding the key
// (tests/e2e/sync-devices.mjs) posts ONE update of --n memory-sized records (a chat and its
// memories). B shows the Chat view; from the post until all N are in B's IndexedDB, B's long
// tasks (PerformanceObserver 'longtask') are read: the longest, how many over 200 ms, and the time
// taken. With several builds (--dist a,b) the builds alternate per run, so a busy machine weighs on
// both alike.
// Usage: npm run -s bench:sync:big -- [--n 20000] [--runs 3] [--dist dist-e2e[,other]] [--profile] [--json]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../relay/relay.mjs';
import { launchAsUsers as launch, startServer } from '../../tests/e2e/harness.mjs';
import { keyHolder, pair, syncKeyOf } from '../../tests/e2e/sync-devices.mjs';
import { makeMemories } from '../sync-spike/records.mjs';
import { MEASURE_INIT, median, pageNow, readMeasure, traceMainThread } from '../lib/long-tasks.mjs';
import { startProfile, tasksNamed } from '../lib/cpu-profile.mjs';
import { distList, flag, option } from '../lib/cli.mjs';

const N = Number(option('--n', 20_000));
const runs = Number(option('--runs', 3));
const dists = distList('dist-e2e');
const asJson = flag('--json');
// --profile: B is traced and sampled, and each task over 200 ms is named by its functions (an
// unminified build names them: vite build --mode e2e --minify false --outDir .tmp/dist-plain).
const profiling = flag('--profile');
const log = (...a) => !asJson && console.error(...a);

const countIn = (page) =>
  page.evaluate(
    () =>
      new Promise((ok, fail) => {
        const open = indexedDB.open('tealeaf');
        open.onerror = () => fail(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const req = db.transaction('memories').objectStore('memories').count();
          req.onsuccess = () => (db.close(), ok(req.result));
          req.onerror = () => (db.close(), fail(req.error));
        };
      }),
  );

async function once(dist) {
  const server = await startServer({ dir: dist });
  const dir = mkdtempSync(join(tmpdir(), 'tealeaf-big-'));
  const relay = await startRelay({ host: '127.0.0.1', port: 0, dir });
  const A = await launch();
  const B = await launch({ init: MEASURE_INIT });
  try {
    await pair(A, B, server.url, relay.url);
    await B.page.goto(`${server.url}/#/chat`);
    await B.page.getByTestId('composer').waitFor();
    const stolen = await keyHolder(await syncKeyOf(B.page), relay.url);
    await stolen.read();
    const T = Date.UTC(2024, 0, 1);
    const memories = Object.fromEntries(makeMemories(N).map((m) => [m.id, { ...m, sessionId: 'big' }]));
    const session = {
      id: 'big',
      title: 'A large update',
      startedAt: T,
      lastActivityAt: T,
      endedAt: T,
      status: 'memorised',
      endReason: 'import',
    };
    // Chromium's own record of B's tasks: on a busy machine a task is long on the wall clock while it
    // waits for a core; its processor time tells the page's own work from that wait.
    const trace = await traceMainThread(B.page);
    const profile = profiling ? await startProfile(B.page) : undefined;
    const from = await pageNow(B.page);
    const t0 = Date.now();
    await stolen.write({ 'e0/sessions': { big: session }, 'e0/memories': memories });
    for (const end = Date.now() + 600_000; (await countIn(B.page)) < N;) {
      if (Date.now() > end) throw new Error('B did not get the update in 10 minutes');
      await new Promise((r) => setTimeout(r, 200));
    }
    const seconds = (Date.now() - t0) / 1000;
    const to = await pageNow(B.page);
    const m = await readMeasure(B.page);
    const tasks = m.within(from, to);
    const traced = await trace();
    const cpu = Math.round(Math.max(0, ...traced.map((t) => t.cpuMs)));
    if (profile) for (const t of tasksNamed(await profile(), traced, { minMs: 200 })) log(JSON.stringify(t));
    return { longest: Math.round(m.longestTask(from, to)), cpu, over200: tasks.filter((t) => t.duration > 200).length, seconds };
  } finally {
    await A.dispose();
    await B.dispose();
    await relay.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = Object.fromEntries(dists.map((d) => [d, []]));
for (let r = 0; r < runs; r++) {
  for (const d of dists) {
    const got = await once(d);
    results[d].push(got);
    log(
      `${d} run ${r + 1}: longest task ${got.longest} ms (the most processor time one task took: ${got.cpu} ms), ${got.over200} over 200 ms, ${got.seconds.toFixed(1)} s until all ${N} were stored`,
    );
  }
}
const summary = Object.fromEntries(
  Object.entries(results).map(([d, xs]) => [
    d,
    {
      longestMedian: median(xs.map((x) => x.longest)),
      longest: xs.map((x) => x.longest),
      cpuMedian: median(xs.map((x) => x.cpu)),
      cpu: xs.map((x) => x.cpu),
      over200: xs.map((x) => x.over200),
      seconds: xs.map((x) => Number(x.seconds.toFixed(1))),
    },
  ]),
);
if (asJson) console.log(JSON.stringify({ n: N, runs, summary }, null, 2));
else
  for (const [d, s] of Object.entries(summary))
    log(
      `${d}: longest task, median ${s.longestMedian} ms (${s.longest.join(', ')}); most processor time in one task, median ${s.cpuMedian} ms (${s.cpu.join(', ')}); over 200 ms: ${s.over200.join(', ')}; seconds: ${s.seconds.join(', ')}`,
    );
