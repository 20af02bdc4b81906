// Memory explorer at scale: 100,000 memories (with ~1.5 edges per memory and ~20,000
// user/assistant traits) imported into the built production app (dist/) through the Settings
// backup import, in headless Chromium (every request off 127.0.0.1 blocked). For the Graph tab and
// the Persona tab of the memory view, each opened from a freshly loaded memory view:
//   firstDrawMs:     click on the tab -> first animation frame after the tab drew something
//                    (graph: any fill/stroke on its canvas; persona: a trait row in the DOM);
//   openLongestMs:   the longest main-thread task (PerformanceObserver 'longtask', >= 50 ms) from
//                    the click until 1 s passes without a long task (at most 20 s);
//   interactLongestMs: the longest task during scripted use, until 1 s is quiet again:
//                    graph: wheel zoom in and out, drag pan, hover until a memory's tip shows,
//                    click it (opens the detail panel), Escape; persona: wheel scroll, focus a
//                    row, arrow keys, End, Home, click a row (opens the detail panel).
// Median of runs per figure (0 when no task reached 50 ms).
// Usage: npm run -s bench:explorer -- [--json] [--runs 3] [--sizes 100000] [--dist dist[,other-dist]] [--debug]
//   --dist a,b measures several builds (e.g. one of the code before a change) in the same run:
//   each gets its own server, browser and import, and their runs alternate, so a machine that
//   gets busier or quieter meanwhile affects them alike.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { syntheticBackup } from './render.mjs';
import { launchAsUsers as launch, startServer } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const asJson = args.includes('--json');
const debug = args.includes('--debug');
const runs = Number(opt('--runs')) || 3;
const sizes = (opt('--sizes') ?? '100000')
  .split(',')
  .map(Number)
  .filter((x) => x > 0);
const dists = (opt('--dist') ?? resolve(import.meta.dirname, '../dist')).split(',').map((d) => resolve(d));
const SHOTS = resolve(import.meta.dirname, '../test-results/explorer-scale');

const median = (xs) => {
  const s = xs.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? null : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x) => (x === null ? null : Math.round(x));
const log = (...a) => {
  if (debug) console.error(...a);
};

/** Installed before the app: records long tasks and the first draw on each canvas. */
const INIT = () => {
  const w = window;
  w.__longTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask' });
  } catch {
    /* no longtask support: figures stay 0 */
  }
  w.__drawn = new WeakMap();
  const proto = CanvasRenderingContext2D.prototype;
  for (const name of ['fill', 'stroke', 'fillRect']) {
    const original = proto[name];
    proto[name] = function (...a) {
      const c = this.canvas;
      if (!w.__drawn.has(c) || w.__drawn.get(c) < (w.__resetAt ?? 0)) w.__drawn.set(c, performance.now());
      return original.apply(this, a);
    };
  }
};

async function importBackup(page, url, backup) {
  const file = join(tmpdir(), `tealeaf-explorer-scale-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(backup));
  try {
    await page.goto(`${url}/#/settings`, { waitUntil: 'load' });
    await page.waitForSelector('[data-testid="import-file"]', { state: 'attached', timeout: 30_000 });
    await page.setInputFiles('[data-testid="import-file"]', file);
    await page.selectOption('[data-testid="import-mode"]', 'replace');
    await page.click('[data-testid="import-run"]');
    // A replace asks first (an in-page dialog): yes.
    await page.locator('[data-testid="confirm-ok"]').click({ timeout: 10_000 });
    const done = await page.waitForSelector('[data-testid="import-done"], [data-testid="import-error"]', { timeout: 600_000 });
    if ((await done.getAttribute('data-testid')) === 'import-error')
      throw new Error(`bench:explorer: import refused: ${await done.innerText()}`);
  } finally {
    rmSync(file, { force: true });
  }
}

/** Resolves once `quietMs` pass with no long task starting, or after `capMs`; returns when. */
async function waitQuiet(page, from, quietMs = 1000, capMs = 20_000) {
  return page.evaluate(
    ({ from, quietMs, capMs }) =>
      new Promise((ok) => {
        const check = () => {
          const now = performance.now();
          const tasks = window.__longTasks.filter((t) => t.start + t.duration >= from);
          const lastEnd = tasks.reduce((a, t) => Math.max(a, t.start + t.duration), from);
          if (now - lastEnd >= quietMs || now - from >= capMs) ok(now);
          else setTimeout(check, 100);
        };
        check();
      }),
    { from, quietMs, capMs },
  );
}

const longest = (page, from, to) =>
  page.evaluate(
    ({ from, to }) => window.__longTasks.filter((t) => t.start >= from && t.start <= to).reduce((a, t) => Math.max(a, t.duration), 0),
    { from, to },
  );

/** A freshly loaded memory view on its default tab, settled. */
async function openMemoryView(page, url, size) {
  await page.goto(`${url}/#/chat`, { waitUntil: 'load' });
  await page.waitForSelector('[data-testid="nav-memory"]', { timeout: 30_000 });
  await page.click('[data-testid="nav-memory"]');
  await page
    .waitForFunction((n) => (document.querySelector('[data-testid="memory-count"]')?.textContent ?? '').startsWith(`${n} memories`), size, {
      timeout: 120_000,
      polling: 250,
    })
    .catch(async (e) => {
      const shown = await page
        .locator('[data-testid="memory-count"]')
        .first()
        .textContent({ timeout: 1000 })
        .catch(() => 'nothing');
      if (debug) {
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: join(SHOTS, 'memory-view-timeout.png') });
      }
      throw new Error(`bench:explorer: the memory view shows "${shown}", expected ${size} memories (${e.message.split('\n')[0]})`);
    });
  const t = await page.evaluate(() => performance.now());
  await waitQuiet(page, t, 1000, 60_000);
}

/** Clicks a tab and measures until the first draw and the end of the work it started. */
async function openTab(page, tab) {
  const r = await page.evaluate(
    (tab) =>
      new Promise((ok) => {
        const button = [...document.querySelectorAll('[role="tab"]')].find((b) => b.textContent.trim().toLowerCase() === tab);
        const t0 = performance.now();
        window.__resetAt = t0;
        const drawn = () => {
          if (tab === 'persona') return document.querySelector('#explorer-panel .trait') !== null;
          const c = document.querySelector('#explorer-panel canvas');
          return !!c && (window.__drawn.get(c) ?? 0) >= t0;
        };
        const frame = () => {
          const now = performance.now();
          if (drawn()) ok({ t0, firstDrawMs: now - t0 });
          else if (now - t0 > 20_000) ok({ t0, firstDrawMs: null });
          else requestAnimationFrame(frame);
        };
        button.click();
        requestAnimationFrame(frame);
      }),
    tab,
  );
  const end = await waitQuiet(page, r.t0 + (r.firstDrawMs ?? 0), 1000, 20_000 - (r.firstDrawMs ?? 0));
  return { firstDrawMs: r.firstDrawMs, openLongestMs: await longest(page, r.t0, end), end };
}

async function box(page, selector) {
  const b = await page.locator(selector).first().boundingBox();
  if (!b) throw new Error(`bench:explorer: ${selector} not found`);
  return b;
}

async function interactGraph(page) {
  const b = await box(page, '#explorer-panel canvas');
  const cx = b.x + b.width / 2;
  const cy = b.y + b.height / 2;
  await page.mouse.move(cx, cy);
  for (const dy of [-120, 120]) {
    for (let i = 0; i < 8; i++) {
      await page.mouse.wheel(0, dy);
      await page.waitForTimeout(30);
    }
  }
  await page.mouse.down();
  await page.mouse.move(cx - b.width / 4, cy + 30, { steps: 20 });
  await page.mouse.move(cx + b.width / 4, cy - 30, { steps: 20 });
  await page.mouse.up();
  // Hover over a grid until a memory's tip shows, then click it.
  let hit = null;
  for (let gy = 1; gy < 8 && !hit; gy++) {
    for (let gx = 1; gx < 12 && !hit; gx++) {
      const x = b.x + (b.width * gx) / 12;
      const y = b.y + (b.height * gy) / 8;
      await page.mouse.move(x, y);
      await page.waitForTimeout(20);
      if (await page.locator('#explorer-panel .tip').count()) hit = [x, y];
    }
  }
  if (hit) {
    await page.mouse.click(hit[0], hit[1]);
    await page
      .locator('aside[aria-label="Memory details"]')
      .waitFor({ timeout: 20_000 })
      .catch(() => {});
    await page.waitForTimeout(300);
    await page.keyboard.press('Escape');
  }
  return !!hit;
}

async function interactPersona(page) {
  const b = await box(page, '#explorer-panel');
  await page.mouse.move(b.x + b.width / 3, b.y + b.height / 2);
  for (let i = 0; i < 20; i++) {
    await page.mouse.wheel(0, 400);
    await page.waitForTimeout(30);
  }
  const row = page.locator('#explorer-panel .trait button').first();
  await row.focus();
  for (let i = 0; i < 15; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('PageDown');
  await page.keyboard.press('End');
  await page.waitForTimeout(100);
  await page.keyboard.press('Home');
  await page.waitForTimeout(100);
  await page.locator('#explorer-panel .trait button').nth(2).click();
  await page
    .locator('aside[aria-label="Memory details"]')
    .waitFor({ timeout: 20_000 })
    .catch(() => {});
  await page.waitForTimeout(300);
  return true;
}

async function measureTab(page, url, size, tab, run, label) {
  await openMemoryView(page, url, size);
  const open = await openTab(page, tab);
  if (debug) {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${label}-${size}-${tab}-${run}-open.png`) });
  }
  const t1 = await page.evaluate(() => performance.now());
  const ok = tab === 'graph' ? await interactGraph(page) : await interactPersona(page);
  const end = await waitQuiet(page, await page.evaluate(() => performance.now()), 1000, 20_000);
  const interactLongestMs = await longest(page, t1, end);
  if (debug) await page.screenshot({ path: join(SHOTS, `${label}-${size}-${tab}-${run}-after.png`) });
  log(
    `  ${tab} run ${run + 1}: first draw ${round(open.firstDrawMs)} ms, longest task opening ${round(open.openLongestMs)} ms, interacting ${round(interactLongestMs)} ms${ok ? '' : ' (no memory found to click)'}`,
  );
  return { ...open, interactLongestMs };
}

async function setUp(dist, backup) {
  const server = await startServer({ dir: dist });
  const h = await launch({ viewport: { width: 1280, height: 800 }, init: INIT });
  h.page.on('dialog', (d) => void d.accept());
  const t = Date.now();
  await importBackup(h.page, server.url, backup);
  log(`${dist}: imported in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return { dist, server, h, runs: { graph: [], persona: [] } };
}

async function measure(size) {
  const backup = syntheticBackup({ memories: size, edges: Math.round(size * 1.5) });
  const traits = backup.data.memories.filter((m) => m.kind === 'user-trait' || m.kind === 'assistant-trait').length;
  log(`${size} memories, ${traits} traits, ${backup.data.edges.length} edges`);
  const setups = [];
  try {
    for (const dist of dists) setups.push(await setUp(dist, backup));
    for (let r = 0; r < runs; r++) {
      for (const tab of ['graph', 'persona']) {
        for (const s of setups) {
          log(`${s.dist}:`);
          s.runs[tab].push(await measureTab(s.h.page, s.server.url, size, tab, r, basename(s.dist)));
        }
      }
    }
    return setups.map((s) => {
      if (s.h.offHost.length) throw new Error(`bench:explorer: requests off 127.0.0.1: ${s.h.offHost.slice(0, 3).join(', ')}`);
      if (s.h.errors.length) throw new Error(`bench:explorer: page errors (${s.dist}): ${s.h.errors.slice(0, 3).join(' | ')}`);
      const out = { dist: s.dist, memories: size, edges: backup.data.edges.length, traits };
      for (const tab of ['graph', 'persona']) {
        const rs = s.runs[tab];
        out[tab] = {
          firstDrawMs: round(median(rs.map((x) => x.firstDrawMs))),
          openLongestMs: round(median(rs.map((x) => x.openLongestMs))),
          interactLongestMs: round(median(rs.map((x) => x.interactLongestMs))),
          runs: rs.map((x) => ({
            firstDrawMs: round(x.firstDrawMs),
            openLongestMs: round(x.openLongestMs),
            interactLongestMs: round(x.interactLongestMs),
          })),
        };
      }
      return out;
    });
  } finally {
    for (const s of setups) {
      await s.h.dispose();
      await s.server.close();
    }
  }
}

const results = [];
try {
  for (const size of sizes) results.push(...(await measure(size)));
} catch (e) {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
}
if (asJson) console.log(JSON.stringify({ runs, results }));
else {
  for (const r of results) {
    console.log(
      `${r.memories.toLocaleString('en-US')} memories, ${r.edges.toLocaleString('en-US')} edges, ${r.traits.toLocaleString('en-US')} traits (${r.dist}, median of ${runs}):`,
    );
    for (const tab of ['graph', 'persona']) {
      const x = r[tab];
      console.log(
        `  ${tab.padEnd(8)} first draw ${x.firstDrawMs ?? 'none'} ms, longest task opening ${x.openLongestMs} ms, interacting ${x.interactLongestMs} ms`,
      );
    }
  }
}
