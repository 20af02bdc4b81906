// Shared e2e harness: serves the e2e build on 127.0.0.1, launches Debian's Chromium through
// playwright-core, and fails any test that makes a request anywhere but 127.0.0.1.
import { after, before } from 'node:test';
import { createServer } from 'node:http';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { SECURITY_HEADERS } from '../../src/csp.js';

const ROOT = resolve(import.meta.dirname, '../..');
export const DIST = process.env.E2E_DIST ? resolve(process.env.E2E_DIST) : join(ROOT, 'dist-e2e');
export const TEST_MODELS = join(ROOT, '.tmp/test-models');
export const SHOTS = join(ROOT, 'test-results/shots');
/** The safety net of every wait on a condition (Playwright's default here, pollDb's, the specs' own polls). */
export const PATIENCE_MS = 120_000;

/** Content types by file ending, for the files of the build (also used by trust-headers' bare server). */
export const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.onnx': 'application/octet-stream',
  '.txt': 'text/plain',
};

/**
 * Serves a file as a static host would: the build's assets carry a content hash in their names
 * (/assets/name-HASH.ext), so the browser keeps them; everything else is checked again each time
 * (Last-Modified, answered 304 when unchanged). Without this a reload fetched the whole app again,
 * ONNX Runtime's 14 MB wasm and the stand-in's 5 MB tokenizer included (no CPU saving measured on a
 * matrix row: a reload's cost is computing, docs/TESTING.md).
 */
function sendFile(req, res, file, rel, stat = statSync(file)) {
  const modified = stat.mtime.toUTCString();
  const hashed = /^\/assets\/.+-[\w-]{8,}\.\w+$/.test(rel);
  const headers = {
    ...SECURITY_HEADERS,
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
    'last-modified': modified,
  };
  if (!hashed && req.headers['if-modified-since'] === modified) {
    res.writeHead(304, headers).end();
    return;
  }
  res.writeHead(200, { ...headers, 'content-length': stat.size });
  createReadStream(file).pipe(res);
}

/**
 * Static server for dist-e2e. App routes fall back to index.html; /models/ (test embedding
 * models) and /mlc/ (a model mirror with nothing in it) answer real 404s, as docs/TESTING.md advises.
 */
export async function startServer({ dir = DIST } = {}) {
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`${dir} is missing: build the app first`);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = decodeURIComponent(url.pathname);
    const base = path.startsWith('/models/') ? TEST_MODELS : dir;
    const rel = path.startsWith('/models/') ? path.slice('/models'.length) : path;
    const file = normalize(join(base, rel));
    if (!file.startsWith(base)) {
      res.writeHead(403).end();
      return;
    }
    const stat = statSync(file, { throwIfNoEntry: false });
    if (stat?.isFile()) return sendFile(req, res, file, rel, stat);
    if (path.startsWith('/models/') || path.startsWith('/mlc/') || extname(path)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    sendFile(req, res, join(dir, 'index.html'), '/index.html');
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((ok) => server.close(ok)) };
}

/**
 * A spec file's server: starts it before the file's tests and closes it after them. Returns an
 * object whose `url` is set once the server is up (read it inside tests, not at load time).
 */
export function serveApp() {
  const served = { url: undefined };
  let server;
  before(async () => {
    server = await startServer();
    served.url = server.url;
  });
  after(async () => {
    await server?.close();
  });
  return served;
}

const BASE_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
  // Second guard below the request listener: nothing but loopback resolves.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

export function tempProfile() {
  const dir = join(tmpdir(), 'tealeaf-e2e');
  mkdirSync(dir, { recursive: true });
  return mkdtempSync(join(dir, 'profile-'));
}

/**
 * Launches Chromium with a persistent profile (pass the same dir again to test persistence).
 * Returns { context, page, offHost, close }: offHost lists every request not to 127.0.0.1.
 */
export async function launch({
  webgpu = false,
  profile = tempProfile(),
  viewport = { width: 1280, height: 800 },
  init,
  touch = false,
  serviceWorker = false,
  wasmTiers = false,
} = {}) {
  const args = [...BASE_ARGS];
  // Tests run WebAssembly in V8's baseline compiler only: optimising ONNX Runtime's 14 MB module
  // again at every page load was about a fifth of a trust-matrix row's CPU (its test models are
  // tiny, so the faster code never paid back). What the code does is the same in either tier;
  // benches measure what users get (`launchAsUsers`).
  if (!wasmTiers) args.push('--js-flags=--liftoff-only');
  if (webgpu) args.push('--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-angle=swiftshader');
  else args.push('--disable-gpu');
  // More Chromium flags for one run (a profiler's, say): E2E_EXTRA_ARGS='--remote-debugging-port=9339'.
  if (process.env.E2E_EXTRA_ARGS) args.push(...process.env.E2E_EXTRA_ARGS.split(' '));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args,
    viewport,
    timeout: 60_000,
    // The service worker precaches about 15 MB of scripts into every fresh profile and then serves
    // every fetch, the stand-in's 5 MB tokenizer included: about a tenth of a file's CPU. Only the
    // specs of offline use (which need it) turn it on; the app registers it and goes on without it.
    serviceWorkers: serviceWorker ? 'allow' : 'block',
    // A phone: touch events and taps (page.tap), a coarse pointer for CSS.
    ...(touch ? { hasTouch: true, isMobile: true, deviceScaleFactor: 2 } : {}),
  });
  const offHost = [];
  const guard = (req) => {
    const u = new URL(req.url());
    if (/^(https?|wss?):$/.test(u.protocol) && u.hostname !== '127.0.0.1') offHost.push(req.url());
  };
  context.on('request', guard);
  await context.route(/^(https?|wss?):\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort('blockedbyclient'));
  if (init) await context.addInitScript(init);
  // Every wait on the page (a locator's waitFor, click, waitForFunction) is for a condition, and its
  // limit only a safety net (docs/TESTING.md, "How tests wait"): long enough that a loaded machine
  // never reaches it on the way to a condition that does come.
  context.setDefaultTimeout(PATIENCE_MS);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return {
    context,
    page,
    offHost,
    errors,
    profile,
    close: async () => {
      await context.close();
    },
    dispose: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** `launch` as a user's browser runs: every V8 tier (benches). */
export function launchAsUsers(options = {}) {
  return launch({ ...options, wasmTiers: true });
}

export async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}
