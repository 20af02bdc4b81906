// Another site must not be able to frame Tealeaf (a <meta> policy cannot say
// frame-ancestors). The servers the README names (`npm start` = vite preview, `npm run dev` = the
// dev server) and the e2e server send the page's policy plus frame-ancestors 'none',
// X-Frame-Options: DENY, nosniff and no-referrer, all from src/csp.js. In Chromium, a page on
// another origin gets no app inside its iframe, while the same build served without the headers
// does get framed (the control that shows the check can fail).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve } from 'node:path';
import { CSP, CSP_HEADER, SECURITY_HEADERS } from '../../src/csp.js';
import { DIST, launch, PATIENCE_MS, startServer, TYPES } from './harness.mjs';
import { assertNoOffHost } from './flows.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const VITE = resolve(ROOT, 'node_modules/vite/bin/vite.js');

// Vite children are killed after the tests and on any exit of this process (a failed assertion,
// a signal), so no server outlives a run. They stay in this process's group (not detached), so
// killing the whole test run takes them along too.
const children = new Set();
function killChildren() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  children.clear();
}
process.on('exit', killChildren);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    killChildren();
    process.exit(1);
  });
}

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer()
      .once('error', fail)
      .listen(0, '127.0.0.1', () => {
        const { port } = s.address();
        s.close(() => ok(port));
      });
  });
}

/** Starts `vite <args>` on a free 127.0.0.1 port; resolves with its URL once it answers. */
async function startVite(args) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [VITE, ...args, '--host', '127.0.0.1', '--port', String(port), '--strictPort', '--logLevel', 'warn'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  let log = '';
  const keep = (d) => {
    log = (log + d).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + PATIENCE_MS;
  for (;;) {
    if (exited) throw new Error(`vite ${args.join(' ')} exited:\n${log}`);
    try {
      const r = await fetch(`${url}/`);
      await r.arrayBuffer();
      if (r.ok) return url;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`vite ${args.join(' ')} did not answer within ${PATIENCE_MS / 1000} s:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The control: the same build from a server that sends no security headers (a careless host). */
async function startBareServer() {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let file = normalize(join(DIST, path));
    if (!file.startsWith(DIST) || !existsSync(file) || !statSync(file).isFile()) file = join(DIST, 'index.html');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((ok) => server.close(ok)) };
}

let e2e;
let bare;
let preview;
let dev;
before(async () => {
  e2e = await startServer();
  bare = await startBareServer();
  // vite preview of the e2e build (`npm start` previews dist/ with the same config and headers).
  [preview, dev] = await Promise.all([startVite(['preview', '--outDir', DIST]), startVite([])]);
});
after(async () => {
  killChildren();
  await e2e?.close();
  await bare?.close();
});

test('the header policy is the page policy plus frame-ancestors, from one source', () => {
  assert.equal(CSP_HEADER, `${CSP}; frame-ancestors 'none'`);
  assert.doesNotMatch(CSP, /frame-ancestors/, 'the <meta> policy cannot carry frame-ancestors (browsers ignore it there)');
  assert.deepEqual(SECURITY_HEADERS, {
    'Content-Security-Policy': CSP_HEADER,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  });
});

function assertSecurityHeaders(headers, where) {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) assert.equal(headers.get(name), value, `${where}: ${name}`);
}

test('preview, dev and e2e servers send every security header on the page and on scripts', async () => {
  const worker = readdirSync(join(DIST, 'assets')).find((f) => /\.worker-.*\.js$/.test(f));
  assert.ok(worker, 'the build has a worker script (workers get their policy only from the header)');
  const checked = new Set();
  for (const [name, url] of [
    ['preview', preview],
    ['dev', dev],
    ['e2e', e2e.url],
  ]) {
    const page = await fetch(`${url}/`);
    assert.equal(page.status, 200, `${name} /`);
    assertSecurityHeaders(page.headers, `${name} /`);
    const html = await page.text();
    checked.add(`${name} /`);
    // Built pages carry the same policy as a <meta> (without frame-ancestors).
    if (name !== 'dev') assert.ok(html.includes(`content="${CSP}"`), `${name}: the page's <meta> policy is CSP`);
    const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1]);
    if (name !== 'dev') scripts.push(`/assets/${worker}`);
    assert.ok(scripts.length >= 2, `${name}: scripts found: ${scripts.join(', ')}`);
    for (const s of scripts) {
      const r = await fetch(new URL(s, url));
      assert.equal(r.status, 200, `${name} ${s}`);
      assert.match(r.headers.get('content-type') ?? '', /javascript/, `${name} ${s}: a script type (nosniff needs one)`);
      assertSecurityHeaders(r.headers, `${name} ${s}`);
      await r.arrayBuffer();
      checked.add(`${name} ${s}`);
    }
  }
  // dev: /, /@vite/client, /src/main.ts; preview and e2e: /, the entry, a worker.
  assert.equal(checked.size, 9, [...checked].join('\n'));
});

test('the dev server still runs the app under the full policy', async () => {
  const h = await launch({
    init: () => {
      document.addEventListener('securitypolicyviolation', (e) => {
        const w = /** @type {any} */ (window);
        (w.__cspViolations ??= []).push({ directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile });
      });
    },
  });
  try {
    const { page } = h;
    const messages = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) messages.push(m.text());
    });
    const res = await page.goto(`${dev}/#/chat`);
    assert.equal(res?.headers()['content-security-policy'], CSP_HEADER);
    await page.getByTestId('composer').waitFor();
    // The lazily loaded views come through the dev server's module graph too.
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('load-demo').waitFor();
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('delete-all').waitFor();
    // zod probes once whether eval works (`new Function("")` in a try) and goes without it when it
    // does not; the built app gets the same refusal. A refused eval the app needed would throw
    // (h.errors); anything else refused (a script, a connection, a worker) fails here.
    const violations = await page.evaluate(() => /** @type {any} */ (window).__cspViolations ?? []);
    const unexpected = violations.filter((v) => !(v.blocked === 'eval' && /zod/.test(v.source)));
    assert.deepEqual(unexpected, [], 'the dev server needs something the policy refuses');
    assert.deepEqual(
      messages.filter((m) => !/'unsafe-eval'/.test(m)),
      [],
    );
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

/**
 * Opens a page on another 127.0.0.1 origin that frames `appUrl`; returns what the frame became:
 * its URL, the status the app's server answered, and whether the app (its "Delete all my data"
 * button) is inside. `wait` is how long to give the app to appear.
 */
async function frameFrom(h, framer, appUrl, wait) {
  const target = `${appUrl}/#/settings`;
  const answered = h.page.waitForResponse((r) => r.url() === target || r.url() === `${appUrl}/`);
  await h.page.goto(`${framer}/?src=${encodeURIComponent(target)}`);
  const response = await answered;
  await h.page.waitForLoadState('load');
  const frame = h.page.frames().find((f) => f.parentFrame() === h.page.mainFrame());
  assert.ok(frame, 'the framing page has its iframe');
  let appInside = false;
  try {
    await frame.getByTestId('delete-all').waitFor({ timeout: wait });
    appInside = true;
  } catch {
    // not there: blocked (or, for the control, the check below fails)
  }
  return { url: frame.url(), status: response.status(), appInside };
}

test('a page on another origin cannot show Tealeaf in a frame (preview, dev, e2e), a bare host can', async () => {
  const framer = createServer((req, res) => {
    const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>evil</title><iframe src="${src.replace(/"/g, '&quot;')}" width="900" height="700"></iframe>`);
  });
  await new Promise((ok) => framer.listen(0, '127.0.0.1', ok));
  const framerUrl = `http://127.0.0.1:${framer.address().port}`;
  const h = await launch();
  try {
    // Control first: without the headers the same build does show up inside the frame.
    const control = await frameFrom(h, framerUrl, bare.url, PATIENCE_MS);
    assert.equal(control.status, 200);
    assert.equal(control.appInside, true, 'control: a build served without the headers is framed (so the check can fail)');

    const blocked = new Set();
    for (const [name, url] of [
      ['preview', preview],
      ['dev', dev],
      ['e2e', e2e.url],
    ]) {
      // A check that something does not happen (the app drawn inside): a pause, which a slow
      // machine can make weaker but not fail; the frame's document is checked besides.
      const r = await frameFrom(h, framerUrl, url, 2_000);
      // The server did answer; Chromium refused to render the answer in a foreign frame.
      assert.equal(r.status, 200, `${name}: the framed page was served`);
      assert.equal(r.appInside, false, `${name}: the app rendered inside a foreign frame`);
      assert.ok(!r.url.startsWith(url), `${name}: the frame kept the app's document (${r.url})`);
      blocked.add(name);
    }
    assert.equal(blocked.size, 3);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
    await new Promise((ok) => framer.close(ok));
  }
});
