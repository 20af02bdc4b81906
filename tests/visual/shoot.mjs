// Builds the explorer harness and screenshots it in Debian's Chromium; then measures first
// render and zoom/pan frame times on a 5,000-memory / 10,000-edge graph.
// Usage: node tests/visual/shoot.mjs [--no-build] [--perf-only]
import { build } from 'vite';
import { chromium } from 'playwright-core';
import { createServer } from 'node:http';
import { readFile, mkdir, rm } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { mkdtempSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
const dist = resolve(here, '../../.tmp/visual-dist');
const shots = resolve(here, '../../.tmp/shots');
const args = new Set(process.argv.slice(2));

if (!args.has('--no-build')) await build({ configFile: join(here, 'vite.config.ts') });
await mkdir(shots, { recursive: true });

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };
const server = createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  try {
    const body = await readFile(join(dist, path === '/' ? 'explorer.html' : path));
    res.writeHead(200, { 'content-type': types[extname(path)] ?? 'application/octet-stream' });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/explorer.html`;

const userDir = mkdtempSync(join(tmpdir(), 'tealeaf-shots-'));
const context = await chromium.launchPersistentContext(userDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
  ],
});
const page = context.pages()[0] ?? (await context.newPage());
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => {
  if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`);
});

async function shot(name, query, { width = 1280, height = 800, act } = {}) {
  await page.setViewportSize({ width, height });
  await page.goto(`${base}${query}`);
  await page.waitForTimeout(350);
  if (act) await act();
  await page.waitForTimeout(150);
  const file = join(shots, `${name}.png`);
  await page.screenshot({ path: file });
  console.log('shot', file);
}

const hoverNode = async (_id) => {
  // The chart has no per-node elements in canvas mode; hover by layout position from the DOM labels instead.
  const box = await page.locator('.chart').boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + 60);
};

if (!args.has('--perf-only')) {
  await shot('desktop-timeline', '?');
  await shot('desktop-selected', '?select=w7');
  await shot('desktop-search', '?', {
    act: async () => {
      await page.fill('input[type=search]', 'miso');
    },
  });
  await shot('desktop-highlight', '?highlight');
  await shot('desktop-focus', '?select=t7', {
    act: async () => {
      await page.check('.switch input');
    },
  });
  await shot('desktop-graph', '?tab=graph', { act: async () => page.waitForTimeout(600) });
  await shot('desktop-persona', '?tab=persona');
  await shot('desktop-list', '?tab=list&select=w9');
  await shot('desktop-hover', '?', { act: hoverNode });
  await shot('desktop-zoomed', '?', {
    act: async () => {
      const box = await page.locator('.chart').boundingBox();
      await page.mouse.move(box.x + box.width * 0.55, box.y + 120);
      for (let i = 0; i < 5; i++) {
        await page.mouse.wheel(0, -120);
        await page.waitForTimeout(30);
      }
    },
  });
  await shot('mobile-timeline', '?', { width: 375, height: 800 });
  await shot('mobile-detail', '?select=f3', {
    width: 375,
    height: 800,
    act: async () => {
      await page.locator('.chart').focus();
      await page.keyboard.press('Enter');
    },
  });
  await shot('mobile-persona', '?tab=persona', { width: 375, height: 800 });
  await shot('desktop-big', '?big=5000x10000', { act: async () => page.waitForTimeout(500) });
}

// ---- performance: 5,000 memories, 10,000 edges ------------------------------------------
await page.setViewportSize({ width: 1280, height: 800 });
const perf = {};
for (const [n, e] of [
  [1000, 2000],
  [5000, 10000],
]) {
  const t0 = Date.now();
  await page.goto(`${base}?big=${n}x${e}`);
  await page.waitForFunction(() => window.__renders.length > 0, null, { timeout: 10000 });
  const first = await page.evaluate(() => ({
    fromMount: window.__renders[0].at - window.__mountStart,
    fromNavigation: window.__renders[0].at,
    drawMs: window.__renders[0].ms,
    renderer: window.__renders[0].renderer,
    stats: window.__renders[0].stats,
  }));
  const box = await page.locator('.chart').boundingBox();
  await page.evaluate(() => {
    window.__frames = [];
    let last = performance.now();
    const loop = (t) => {
      window.__frames.push(t - last);
      last = t;
      if (window.__frames.length < 100000) window.__raf = requestAnimationFrame(loop);
    };
    window.__raf = requestAnimationFrame(loop);
    window.__renders.length = 0;
  });
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  await page.mouse.move(cx, cy);
  for (let i = 0; i < 12; i++) {
    await page.mouse.wheel(0, -100);
    await page.waitForTimeout(16);
  }
  await page.mouse.down();
  for (let i = 0; i < 30; i++) {
    await page.mouse.move(cx - i * 12, cy + Math.sin(i / 3) * 30);
    await page.waitForTimeout(16);
  }
  await page.mouse.up();
  for (let i = 0; i < 12; i++) {
    await page.mouse.wheel(0, 100);
    await page.waitForTimeout(16);
  }
  await page.waitForTimeout(400);
  const frames = await page.evaluate(() => {
    cancelAnimationFrame(window.__raf);
    return {
      frames: window.__frames.slice(1),
      draws: window.__renders.map((r) => r.ms),
      full: window.__renders.filter((r) => r.stats).map((r) => r.ms),
    };
  });
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.floor(s.length / 2)] : NaN;
  };
  const p95 = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.floor(s.length * 0.95)] : NaN;
  };
  perf[n] = {
    edges: e,
    renderer: first.renderer,
    firstRenderMs: Math.round(first.fromMount),
    firstRenderFromNavigationMs: Math.round(first.fromNavigation),
    firstDrawMs: +first.drawMs.toFixed(1),
    medianFrameMs: +median(frames.frames).toFixed(1),
    p95FrameMs: +p95(frames.frames).toFixed(1),
    frames: frames.frames.length,
    fullRedrawsAfterPause: frames.full.map((m) => +m.toFixed(1)),
    medianDrawMs: +median(frames.draws).toFixed(2),
    p95DrawMs: +p95(frames.draws).toFixed(2),
    draws: frames.draws.length,
    wallMs: Date.now() - t0,
  };
}
console.log(JSON.stringify(perf, null, 1));
if (errors.length) console.log('page errors:\n' + errors.join('\n'));
await context.close();
server.close();
await rm(userDir, { recursive: true, force: true });
