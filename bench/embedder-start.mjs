// bench:embedder: how long the memory search model takes to be ready when a page loads, the cost
// every visit pays for ONNX Runtime's start in the embedding worker. A fresh Chromium profile opens
// the Models view of the e2e build (--dist, served on 127.0.0.1 with the tiny test embedder), loads
// the search model once, then reloads --reloads times; each time from the navigation to "Ready".
// Also the processor time of the whole browser (every process it started, read from /proc: Linux
// only) over the run. With several builds (--dist a,b) the builds alternate per run, so a busy
// machine weighs on both alike.
// Usage: npm run -s bench:embedder -- [--runs 3] [--reloads 5] [--dist dist-e2e[,other]] [--json]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { launchAsUsers as launch, startServer } from '../tests/e2e/harness.mjs';
import { loadTestEmbedder } from '../tests/e2e/flows.mjs';
import { median } from './lib/long-tasks.mjs';
import { distList, flag, option } from './lib/cli.mjs';

const runs = Number(option('--runs', 3));
const reloads = Number(option('--reloads', 5));
const dists = distList('dist-e2e');
const asJson = flag('--json');
const log = (...a) => !asJson && console.error(...a);

/** Processor seconds used so far by every descendant of this process (the browser and its children). */
function browserCpuSeconds() {
  const tick = 100; // USER_HZ on Linux
  let total = 0;
  const walk = (pid) => {
    let kids;
    try {
      kids = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean);
    } catch {
      return; // pgrep exits 1 when there are none
    }
    for (const kid of kids) {
      try {
        const stat = readFileSync(`/proc/${kid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        total += (Number(f[11]) + Number(f[12])) / tick;
      } catch {
        // gone meanwhile
      }
      walk(kid);
    }
  };
  walk(process.pid);
  return total;
}

async function once(server) {
  const b = await launch();
  try {
    const cpu0 = browserCpuSeconds();
    let t0 = performance.now();
    await b.page.goto(`${server.url}/#/models`);
    await loadTestEmbedder(b.page);
    const first = performance.now() - t0;
    const again = [];
    for (let i = 0; i < reloads; i++) {
      t0 = performance.now();
      await b.page.reload();
      await loadTestEmbedder(b.page);
      again.push(performance.now() - t0);
    }
    const cpu = browserCpuSeconds() - cpu0;
    if (b.errors.length > 0) throw new Error(`page errors: ${b.errors.join('; ')}`);
    return { first, reload: median(again), cpu };
  } finally {
    await b.dispose();
  }
}

const servers = await Promise.all(dists.map((dir) => startServer({ dir })));
const results = dists.map(() => []);
try {
  for (let r = 0; r < runs; r++) {
    for (const [i, server] of servers.entries()) {
      const m = await once(server);
      results[i].push(m);
      log(`${dists[i]} run ${r + 1}: first ${m.first.toFixed(0)} ms, reload median ${m.reload.toFixed(0)} ms, ${m.cpu.toFixed(1)} CPU-s`);
    }
  }
} finally {
  await Promise.all(servers.map((s) => s.close()));
}

const summary = dists.map((dist, i) => ({
  dist,
  runs,
  reloads,
  firstMsMedian: Math.round(median(results[i].map((m) => m.first))),
  reloadMsMedian: Math.round(median(results[i].map((m) => m.reload))),
  cpuSecondsMedian: Number(median(results[i].map((m) => m.cpu)).toFixed(1)),
}));
if (asJson) console.log(JSON.stringify(summary));
else for (const s of summary) console.log(s);
