// Issue 9, defect 6: another site must not be able to frame Tealeaf (a <meta> policy cannot say
// frame-ancestors). The servers the README names (`npm start` = vite preview, `npm run dev` =
// the dev server) and the e2e server send the page's policy plus frame-ancestors 'none' and
// X-Frame-Options: DENY; in Chromium, a page on another origin gets no app inside its iframe.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { DIST, launch, startServer } from './harness.mjs';
import { assertNoOffHost } from './flows.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const VITE = resolve(ROOT, 'node_modules/vite/bin/vite.js');
const children = [];

/** Starts a vite command on a free port; resolves with its URL once it answers. */
async function startVite(args) {
  const port = await new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => ok(p));
    });
  });
  const child = spawn(process.execPath, [VITE, ...args, '--host', '127.0.0.1', '--port', String(port), '--strictPort'], { cwd: ROOT, stdio: 'ignore' });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`${url}/`);
      if (r.ok) return url;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`vite ${args.join(' ')} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let e2eServer;
before(async () => { e2eServer = await startServer(); });
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await e2eServer?.close();
});

function assertHeaders(headers, where) {
  const csp = headers.get('content-security-policy') ?? '';
  assert.match(csp, /frame-ancestors 'none'/, `${where}: frame-ancestors`);
  assert.match(csp, /default-src 'self'/, `${where}: the page's policy`);
  assert.equal(headers.get('x-frame-options'), 'DENY', `${where}: X-Frame-Options`);
  assert.equal(headers.get('x-content-type-options'), 'nosniff', `${where}: nosniff`);
}

test('npm start (vite preview) and the dev server send the policy with frame-ancestors and X-Frame-Options', async () => {
  const preview = await startVite(['preview', '--outDir', DIST]);
  const dev = await startVite([]);
  const checked = [];
  for (const [name, url] of [['preview', preview], ['dev', dev], ['e2e', e2eServer.url]]) {
    const page = await fetch(`${url}/`);
    assertHeaders(page.headers, `${name} /`);
    const html = await page.text();
    const script = /src="([^"]+\.(?:js|ts))"/.exec(html)?.[1];
    assert.ok(script, `${name}: the page names a script`);
    const asset = await fetch(new URL(script, url));
    assert.equal(asset.ok, true, `${name}: ${script} loads`);
    assertHeaders(asset.headers, `${name} ${script}`);
    checked.push(name);
  }
  assert.deepEqual(checked, ['preview', 'dev', 'e2e']);
});

test('the dev server still runs the app under its policy', async () => {
  const dev = await startVite([]);
  const h = await launch();
  try {
    const violations = [];
    h.page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
    await h.page.goto(`${dev}/#/chat`);
    await h.page.getByTestId('composer').waitFor({ timeout: 60_000 });
    assert.deepEqual(violations, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a page on another origin cannot show Tealeaf in a frame', async () => {
  const framer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><iframe id="f" src="${e2eServer.url}/#/settings" width="800" height="600"></iframe>`);
  });
  await new Promise((ok) => framer.listen(0, '127.0.0.1', ok));
  const h = await launch();
  try {
    await h.page.goto(`http://127.0.0.1:${framer.address().port}/`);
    await h.page.waitForTimeout(1500);
    const frame = h.page.frames().find((f) => f !== h.page.mainFrame());
    // Blocked: the frame holds Chromium's error page, never the app (no "Delete all my data").
    const appInside = frame ? await frame.evaluate(() => !!document.querySelector('[data-testid="delete-all"], [data-testid="composer"], #app')).catch(() => false) : false;
    assert.equal(appInside, false, 'the app rendered inside a foreign frame');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
    await new Promise((ok) => framer.close(ok));
  }
});
