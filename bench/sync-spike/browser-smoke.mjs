// The sync foundations in Debian's Chromium: the relay on 127.0.0.1 (another origin than the
// page, so CORS is exercised), pairing, a first sync of N memories, single changes, long tasks.
//   node bench/sync-spike/browser-smoke.mjs [10000]
import { createServer } from 'node:http';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { startRelay } from '../../relay/relay.mjs';

const N = Number(process.argv[2] ?? 10000);
const ROOT = resolve(import.meta.dirname, '../..');
const out = join(ROOT, '.tmp/sync-smoke');
mkdirSync(out, { recursive: true });
// records.mjs also sizes a gzipped backup with node:zlib, which the page does not use.
const noZlib = {
  name: 'no-zlib',
  setup: (b) => {
    b.onResolve({ filter: /^node:zlib$/ }, () => ({ path: 'zlib', namespace: 'stub' }));
    b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
      contents: 'export const gzipSync = () => { throw new Error("not in the page"); };',
    }));
  },
};
await build({
  entryPoints: [join(import.meta.dirname, 'browser-entry.ts')],
  bundle: true,
  format: 'esm',
  outfile: join(out, 'app.js'),
  logLevel: 'error',
  plugins: [noZlib],
});
writeFileSync(
  join(out, 'index.html'),
  '<!doctype html><meta charset="utf-8"><title>sync smoke</title><script type="module" src="/app.js"></script>',
);
const page = createServer((req, res) => {
  const file = req.url === '/app.js' ? 'app.js' : 'index.html';
  res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'text/html' });
  res.end(readFileSync(join(out, file)));
});
await new Promise((r) => page.listen(0, '127.0.0.1', r));
const relay = await startRelay({ port: 0, dir: mkdtempSync(join(tmpdir(), 'tealeaf-relay-smoke-')) });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
});
const offHost = [];
const tab = await browser.newPage();
tab.on('request', (r) => {
  if (new URL(r.url()).hostname !== '127.0.0.1') offHost.push(r.url());
});
tab.on('console', (m) => m.type() === 'error' && console.error('page:', m.text()));
await tab.goto(`http://127.0.0.1:${page.address().port}/`);
await tab.waitForFunction(() => 'runSmoke' in globalThis);
const result = await tab.evaluate(([url, n]) => globalThis.runSmoke(url, n), [relay.url, N]);
console.log(JSON.stringify({ ...result, requestsOffHost: offHost.length }));
await browser.close();
await relay.close();
page.close();
process.exit(0);
