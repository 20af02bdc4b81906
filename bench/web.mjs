// Browser benchmark of the production build: JavaScript loaded before first paint (gzip) and the
// first paint of the app shell, served from 127.0.0.1 in headless Chromium. Median of runs.
// Usage: npm run -s bench:web -- [--runs 15] [--json]
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchAsUsers as launch, startServer } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1]) || 15;
const asJson = args.includes('--json');
const DIST = resolve(import.meta.dirname, '../dist');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const server = await startServer({ dir: DIST });
const paints = [];
let jsBeforePaint = [];
try {
  for (let i = 0; i < runs; i++) {
    const h = await launch();
    try {
      await h.page.goto(`${server.url}/`, { waitUntil: 'load' });
      await h.page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0);
      const r = await h.page.evaluate(() => {
        const fcp = performance.getEntriesByName('first-contentful-paint')[0].startTime;
        const js = performance
          .getEntriesByType('resource')
          .filter((e) => /\.m?js$/.test(new URL(e.name).pathname) && e.responseEnd <= fcp)
          .map((e) => new URL(e.name).pathname);
        return { fcp, js };
      });
      paints.push(r.fcp);
      jsBeforePaint = r.js;
    } finally {
      await h.dispose();
    }
  }
} finally {
  await server.close();
}
// The entry module is loaded before paint by definition even if the resource timing is late.
const html = readFileSync(join(DIST, 'index.html'), 'utf8');
const entries = [...html.matchAll(/<script[^>]+src="([^"]+)"|<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)].map((m) => m[1] ?? m[2]);
const files = [...new Set([...entries, ...jsBeforePaint])];
const gz = files.map((f) => ({ file: f, gzipBytes: gzipSync(readFileSync(join(DIST, f))).length }));
const result = {
  runs,
  firstPaintMsMedian: Math.round(median(paints) * 10) / 10,
  firstPaintMsMin: Math.round(Math.min(...paints) * 10) / 10,
  firstPaintMsMax: Math.round(Math.max(...paints) * 10) / 10,
  jsBeforeFirstPaintKBGzip: Math.round(gz.reduce((a, b) => a + b.gzipBytes, 0) / 102.4) / 10,
  files: gz,
};
if (asJson) console.log(JSON.stringify(result));
else console.log(result);
