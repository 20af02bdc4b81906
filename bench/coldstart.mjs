// Cold start of the memory index from IndexedDB in headless Chromium (target: <= 500 ms with 10k
// memories and their vectors). Build the page first, then run the driver:
//   npx vite build --config bench/coldstart/vite.config.ts && node bench/coldstart.mjs [--n 10000] [--runs 9] [--json]
// One fresh browser profile: the page seeds IndexedDB through the app's store, then each run
// reloads the page (a new JavaScript realm, the database on disk) and times opening the database
// plus MemoryService.load(). A few runs restart the whole browser on the same profile first.
// Figures are medians.
import { createServer } from 'node:http';
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { flag, option } from './lib/cli.mjs';

const n = Number(option('--n', 10000));
const runs = Number(option('--runs', 9));
const restarts = Number(option('--restarts', 3));
const asJson = flag('--json');
const DIST = resolve(import.meta.dirname, '../.tmp/coldstart-dist');
if (!existsSync(join(DIST, 'index.html'))) {
  console.error(`${DIST} is missing: npx vite build --config bench/coldstart/vite.config.ts`);
  process.exit(2);
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };
const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
  const file = normalize(join(DIST, path === '/' ? 'index.html' : path));
  if (!file.startsWith(DIST) || !existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
  createReadStream(file).pipe(res);
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${server.address().port}/`;

const ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
const profile = mkdtempSync(join(tmpdir(), 'tealeaf-coldstart-'));
const launch = () => chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', args: ARGS });

async function run(page, query) {
  await page.goto(url + query, { waitUntil: 'load' });
  await page.waitForFunction(() => window.coldstart !== undefined, null, { timeout: 120_000 });
  const r = await page.evaluate(() => window.coldstart);
  if (r.error) throw new Error(`page: ${r.error}`);
  return r;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const r1 = (x) => Math.round(x * 10) / 10;
const collect = (results) => Object.fromEntries(Object.keys(results[0].ms).map((k) => [k, r1(median(results.map((r) => r.ms[k])))]));

let out;
try {
  let context = await launch();
  let page = context.pages()[0] ?? (await context.newPage());
  const seeded = await run(page, `?seed&n=${n}`);
  const measures = [];
  const breakdowns = [];
  const experiments = [];
  // One unmeasured load first: the first open after seeding also settles the database files.
  await run(page, '?measure');
  for (let i = 0; i < runs; i++) {
    measures.push(await run(page, '?measure'));
    breakdowns.push(await run(page, '?breakdown'));
    experiments.push(await run(page, '?experiment'));
  }
  const afterRestart = [];
  for (let i = 0; i < restarts; i++) {
    await context.close();
    context = await launch();
    page = context.pages()[0] ?? (await context.newPage());
    afterRestart.push(await run(page, '?measure'));
  }
  await context.close();
  const counts = measures[0].counts;
  if (counts.memories !== n || counts.vectors !== n || counts.edges !== seeded.counts.edges)
    throw new Error(`loaded ${JSON.stringify(counts)}, seeded ${JSON.stringify(seeded.counts)}`);
  out = {
    memories: n,
    edges: seeded.counts.edges,
    vectors: n,
    dim: 384,
    runs,
    seedMs: Math.round(seeded.ms.seed),
    coldStartMsMedian: collect(measures).total,
    coldStartMs: collect(measures),
    coldStartMsAll: measures.map((m) => r1(m.ms.total)),
    afterBrowserRestartMs: afterRestart.map((m) => r1(m.ms.total)),
    breakdownMsMedian: collect(breakdowns),
    // Not the app's path: other ways to read the same data (see bench/coldstart/main.ts).
    experimentMsMedian: collect(experiments),
  };
} finally {
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
if (asJson) console.log(JSON.stringify(out, null, 2));
else console.log(out);
