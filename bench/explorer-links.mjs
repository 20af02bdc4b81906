// One memory with very many links in the Memory view (before the fix, 20,000 links froze the
// page 18.7 s on selection; 100,000 links froze it 27.6 s on opening the view and 209 s on
// selecting the memory). The production build (dist/), served from 127.0.0.1 in headless
// Chromium; the backup (tests/e2e/links-backup.mjs: a hub memory with N links, every other memory
// linked to it) is imported once through Settings. Then, per run, from a freshly loaded page
// (once its start-up load is over: 1.5 s without a long task):
//   openMs:   the longest main-thread task (PerformanceObserver 'longtask', >= 50 ms) from the
//             click on Memory until the count shows and 1 s passes without a long task;
//   listMs:   the same for the click on the List tab (its threads and timelines);
//   selectMs: the same for the click on the hub's row until its detail panel lists its links.
// 0 means no task reached 50 ms. Median of runs per figure; each run's figures are printed too.
// Usage: npm run -s bench:links -- [--runs 3] [--links 20000,100000] [--dist dist[,other]] [--json]
//   --dist a,b measures several builds (e.g. one of the code before a change) in the same run.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launchAsUsers as launch, startServer } from '../tests/e2e/harness.mjs';
import { hubBackup } from '../tests/e2e/links-backup.mjs';

const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const asJson = args.includes('--json');
const runs = Number(opt('--runs')) || 3;
const sizes = (opt('--links') ?? '20000,100000').split(',').map(Number);
const dists = (opt('--dist') ?? resolve(import.meta.dirname, '../dist')).split(',').map((d) => resolve(d));
// A build that freezes for minutes is cut off here; the figure then reads ">= cap".
const CAP_MS = Number(opt('--cap')) || 300_000;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const INIT = () => {
  window.__longTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask' });
  } catch {
    /* no longtask support: figures stay 0 */
  }
};

/** Clicks `selector` in the page, waits for `done` to hold, then for 1 s without a long task; returns the longest task. */
async function measure(page, selector, done, arg = null) {
  const t0 = await page.evaluate((sel) => {
    const t = performance.now();
    document.querySelector(sel).click();
    return t;
  }, selector);
  await page.waitForFunction(done, arg, { timeout: CAP_MS, polling: 100 });
  return page.evaluate(
    ({ t0, cap }) =>
      new Promise((ok) => {
        const check = () => {
          const now = performance.now();
          const tasks = window.__longTasks.filter((t) => t.start + t.duration >= t0);
          const lastEnd = tasks.reduce((a, t) => Math.max(a, t.start + t.duration), t0);
          if (now - lastEnd >= 1000 || now - t0 >= cap) ok(tasks.reduce((a, t) => Math.max(a, t.duration), 0));
          else setTimeout(check, 100);
        };
        check();
      }),
    { t0, cap: CAP_MS },
  );
}

async function importBackup(page, url, backup) {
  const file = join(tmpdir(), `tealeaf-links-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(backup));
  try {
    await page.goto(`${url}/#/settings`, { waitUntil: 'load' });
    await page.setInputFiles('[data-testid="import-file"]', file);
    await page.click('[data-testid="import-run"]');
    const done = await page.waitForSelector('[data-testid="import-done"], [data-testid="import-error"]', { timeout: 600_000 });
    if ((await done.getAttribute('data-testid')) === 'import-error')
      throw new Error(`bench:links: import refused: ${await done.innerText()}`);
  } finally {
    rmSync(file, { force: true });
  }
}

async function oneRun(page, url, links) {
  await page.goto(`${url}/#/chat`, { waitUntil: 'load' });
  await page.waitForSelector('[data-testid="nav-memory"]');
  // The start-up load of the memory (bench:coldstart's figure) is over before the click.
  await page.evaluate(
    () =>
      new Promise((ok) => {
        const t0 = performance.now();
        const check = () => {
          const lastEnd = window.__longTasks.reduce((a, t) => Math.max(a, t.start + t.duration), 0);
          if (performance.now() - Math.max(lastEnd, t0) >= 1500) ok();
          else setTimeout(check, 100);
        };
        check();
      }),
  );
  const openMs = await measure(
    page,
    '[data-testid="nav-memory"]',
    (n) => (document.querySelector('[data-testid="memory-count"]')?.textContent ?? '').includes(`${n} links`),
    links,
  );
  const listMs = await measure(page, '#explorer-tab-list', () => !!document.querySelector('.tl button.item'));
  // The hub's row in the List tab (its thread is the first; the row is among its first items).
  await page.evaluate(() => {
    const row = [...document.querySelectorAll('.tl button.item')].find((b) => b.textContent.includes('The hub memory'));
    row.setAttribute('data-bench-hub', '');
  });
  // Done when the panel shows the hub's count of links (the old build had no test id: its heading) and a link row.
  const selectMs = await measure(
    page,
    '[data-bench-hub]',
    (n) => {
      const panel = document.querySelector('aside[aria-label="Memory details"]');
      const heading = [...(panel?.querySelectorAll('h4') ?? [])].find((h) => h.textContent.trim().startsWith('Links'));
      return (heading?.textContent ?? '').replace(/\D/g, '') === String(n) && !!panel.querySelector('.link-text');
    },
    links,
  );
  return { openMs, listMs, selectMs };
}

const results = [];
for (const links of sizes) {
  const backup = hubBackup(links);
  for (const dist of dists) {
    const server = await startServer({ dir: dist });
    const h = await launch({ viewport: { width: 1280, height: 800 }, init: INIT });
    try {
      await importBackup(h.page, server.url, backup);
      const all = [];
      for (let r = 0; r < runs; r++) {
        const x = await oneRun(h.page, server.url, links);
        if (!asJson) console.error(`  ${links} links, ${dist}, run ${r + 1}: ${JSON.stringify(x)}`);
        all.push(x);
      }
      if (h.errors.length) throw new Error(`bench:links: page errors: ${h.errors.slice(0, 3).join(' | ')}`);
      const row = { links, dist, runs: all };
      for (const k of ['openMs', 'listMs', 'selectMs']) row[k] = Math.round(median(all.map((x) => x[k])));
      results.push(row);
    } finally {
      await h.dispose();
      await server.close();
    }
  }
}
if (asJson) console.log(JSON.stringify({ runs, results }));
else
  for (const r of results)
    console.log(
      `${r.links.toLocaleString('en-US')} links (${r.dist}), longest task, median of ${runs}: opening the view ${r.openMs} ms, the List tab ${r.listMs} ms, selecting the memory ${r.selectMs} ms`,
    );
