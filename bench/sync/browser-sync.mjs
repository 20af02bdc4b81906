// bench:sync:browser (BENCHMARKS.md, "Sync in Chromium"): the app's sync in its own page, two
// Chromium profiles (as tests/e2e/sync.spec.mjs), the production build served on 127.0.0.1 and
// relay/relay.mjs on a free 127.0.0.1 port with a temp folder. Per size N:
//   seed:   A imports a backup of N memory-sized records (bench/sync-spike/records.mjs, the records
//           of bench:sync) through Settings, so the app's own import code writes them;
//   upload: A turns sync on in Settings; until A says synced and the relay's files stop growing;
//   first sync: B types A's code in Settings and opens the Memory view; until all N memories are
//           in B's IndexedDB, and until B's Memory view counts them;
//   edits:  one memory edited on A (Memory view, Edit, Save) `--edits` times, each timed from the
//           click on Save until B's IndexedDB holds the text; for the first `--view-edits`, also
//           until B's open detail panel shows it (wall clocks of the two pages: one machine).
// In each window the long tasks (PerformanceObserver 'longtask', >= 50 ms) of both pages: count,
// median, max and how many over 200 ms. Bytes: the sync room's files on the relay against the
// gzipped backup file. With --profile, both pages are traced and sampled in every phase, and each
// main-thread task over --profile-min ms is named by the functions sampled inside it
// (bench/lib/cpu-profile.mjs; names need an unminified build: vite build --minify false --outDir
// .tmp/dist-plain, then --dist .tmp/dist-plain). Anything over --cap ms (10 minutes) is stopped
// and the run says where it was.
// Usage: npm run -s bench:sync:browser -- [--sizes 10000,100000] [--runs 1] [--edits 20]
//   [--view-edits 5] [--dist dist] [--profile [--profile-min 200]] [--marks-raw] [--json]
// --marks-raw: with the app built with `sync:*` performance measures added (a diagnosis), every one.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startRelay } from '../../relay/relay.mjs';
import { launchAsUsers as launch, startServer } from '../../tests/e2e/harness.mjs';
import { makeMemories } from '../sync-spike/records.mjs';
import { MEASURE_INIT, median, pageNow, readMeasure, traceMainThread } from '../lib/long-tasks.mjs';
import { startProfile, tasksNamed } from '../lib/cpu-profile.mjs';
import { flag, option } from '../lib/cli.mjs';

const sizes = option('--sizes', '10000,100000').split(',').map(Number);
const runs = Number(option('--runs', 1));
const EDITS = Number(option('--edits', 20));
const VIEW_EDITS = Number(option('--view-edits', 5));
const dist = resolve(option('--dist', resolve(import.meta.dirname, '../../dist')));
const profiling = flag('--profile');
const marksRaw = flag('--marks-raw');
const PROFILE_MIN_MS = Number(option('--profile-min', 200));
const asJson = flag('--json');
// Anything that takes longer is stopped and reported with where it was.
const CAP_MS = Number(option('--cap', 600_000));
const log = (...a) => !asJson && console.error(...a);
const r0 = (x) => Math.round(x);
const DETAIL = 'aside[aria-label="Memory details"]';

const sizeOf = (p) => (statSync(p).isDirectory() ? readdirSync(p).reduce((n, f) => n + sizeOf(join(p, f)), 0) : statSync(p).size);
/** The sync room's bytes on the relay (the pairing mailbox, about 1 KB, left out). */
const roomBytes = (dir) =>
  readdirSync(dir)
    .filter((f) => !f.startsWith('pair-'))
    .reduce((n, f) => n + sizeOf(join(dir, f)), 0);

async function until(ok, what, ms = CAP_MS, every = 100) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await ok();
    if (v) return v;
    if (Date.now() > end) throw new Error(`cut off after ${ms / 1000} s: ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Rows in one of the app's IndexedDB stores (a count: no records cross into Node). */
const countIn = (page, store = 'memories') =>
  page.evaluate(
    (store) =>
      new Promise((ok, fail) => {
        const open = indexedDB.open('tealeaf');
        open.onerror = () => fail(open.error);
        open.onsuccess = () => {
          const db = open.result;
          if (!db.objectStoreNames.contains(store)) return (db.close(), ok(0));
          const req = db.transaction(store).objectStore(store).count();
          req.onsuccess = () => (db.close(), ok(req.result));
          req.onerror = () => (db.close(), fail(req.error));
        };
      }),
    store,
  );

/** In B's page: polls its IndexedDB every 5 ms until the memory has `text`; the wall clock then. */
const arrivedAt = (page, id, text, timeout) =>
  page.evaluate(
    ([id, text, timeout]) =>
      new Promise((ok, fail) => {
        const end = Date.now() + timeout;
        const open = indexedDB.open('tealeaf');
        open.onerror = () => fail(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const look = () => {
            const req = db.transaction('memories').objectStore('memories').get(id);
            req.onsuccess = () => {
              if (req.result?.text === text) return (db.close(), ok(Date.now()));
              if (Date.now() > end) return (db.close(), fail(new Error(`edit not in B's IndexedDB after ${timeout} ms`)));
              setTimeout(look, 5);
            };
          };
          look();
        };
      }),
    [id, text, timeout],
  );

/** In B's page: the wall clock when the open detail panel's heading shows `text`. */
const shownAt = (page, text, timeout) =>
  page
    .waitForFunction(([sel, text]) => (document.querySelector(`${sel} h3`)?.textContent === text ? Date.now() : false), [DETAIL, text], {
      timeout,
      polling: 'raf',
    })
    .then((h) => h.jsonValue());

/**
 * The page's user-timing measures named `sync:*` in [from, to] (none unless the app is built with
 * spans added for a diagnosis): per name, how many, median, max and total ms of wall time.
 */
async function spans(page, from, to) {
  const all = await page.evaluate(
    ([from, to]) =>
      performance
        .getEntriesByType('measure')
        .filter((e) => e.name.startsWith('sync:') && e.startTime + e.duration >= from && e.startTime <= to)
        .map((e) => ({ name: e.name.slice(5), at: Math.round(performance.timeOrigin + e.startTime), ms: Math.round(e.duration) })),
    [from, to],
  );
  if (all.length === 0) return undefined;
  const by = new Map();
  for (const e of all) by.set(e.name, [...(by.get(e.name) ?? []), e]);
  const summary = Object.fromEntries(
    [...by].map(([name, es]) => {
      const ms = es.map((e) => e.ms);
      return [name, { n: ms.length, medianMs: r0(median(ms)), maxMs: Math.max(...ms), totalMs: ms.reduce((a, b) => a + b, 0) }];
    }),
  );
  return marksRaw ? { summary, raw: all } : { summary };
}

/** The bytes of the `sync` store's rows (the document's snapshot and log, the state), in MB. */
const syncRowsMB = (page) =>
  page.evaluate(
    () =>
      new Promise((ok, fail) => {
        const open = indexedDB.open('tealeaf');
        open.onerror = () => fail(open.error);
        open.onsuccess = () => {
          const req = open.result.transaction('sync').objectStore('sync').getAll();
          req.onsuccess = () => {
            open.result.close();
            const bytes = req.result.reduce((n, r) => n + (r.value instanceof Uint8Array ? r.value.byteLength : 0), 0);
            ok({ rows: req.result.length, docMB: Math.round(bytes / 1e5) / 10 });
          };
        };
      }),
  );

function tasks(measure, from, to) {
  const d = measure.within(from, to).map((t) => t.duration);
  return {
    count: d.length,
    medianMs: d.length ? r0(median(d)) : 0,
    maxMs: r0(Math.max(0, ...d)),
    over200: d.filter((x) => x > 200).length,
  };
}

async function importBackup(page, url, file) {
  await page.goto(`${url}/#/settings`);
  await page.setInputFiles('[data-testid="import-file"]', file);
  await page.click('[data-testid="import-run"]');
  const done = await page.waitForSelector('[data-testid="import-done"], [data-testid="import-error"]', { timeout: CAP_MS });
  if ((await done.getAttribute('data-testid')) === 'import-error') throw new Error(`import refused: ${await done.innerText()}`);
}

/** The Memory view's List tab with its first memory open; returns that memory's id and text. */
async function openFirstMemory(page) {
  await page.getByTestId('nav-memory').click();
  await page.locator('#explorer-tab-list').click({ timeout: CAP_MS });
  await page.locator('.tl button.item').first().click({ timeout: CAP_MS });
  const h3 = page.locator(`${DETAIL} h3`).first();
  await h3.waitFor({ timeout: CAP_MS });
  return { id: (await h3.getAttribute('id')).replace(/^detail-title-/, ''), text: await h3.textContent() };
}

/**
 * Runs `work` with, on both pages (with --profile), the trace of their main-thread tasks and the
 * sampling profiler: each task of PROFILE_MIN_MS or more, named by the functions sampled in it.
 */
async function profiled(pages, work) {
  const names = Object.keys(pages);
  const started = profiling
    ? await Promise.all(names.map(async (k) => ({ trace: await traceMainThread(pages[k]), profile: await startProfile(pages[k]) })))
    : [];
  const value = await work();
  if (!profiling) return { value };
  const named = {};
  for (let i = 0; i < names.length; i++) {
    const profile = await started[i].profile();
    const traced = await started[i].trace();
    named[names[i]] = tasksNamed(profile, traced, { minMs: PROFILE_MIN_MS });
  }
  return { value, stretches: named };
}

async function once(n, url, file, backupGz) {
  const dir = mkdtempSync(join(tmpdir(), 'tealeaf-bench-relay-'));
  const relay = await startRelay({ host: '127.0.0.1', port: 0, dir });
  const A = await launch({ init: MEASURE_INIT });
  const B = await launch({ init: MEASURE_INIT });
  const out = { n };
  let where = 'seeding A';
  try {
    let t = Date.now();
    await importBackup(A.page, url, file);
    if ((await countIn(A.page)) !== n) throw new Error(`A holds ${await countIn(A.page)} memories, not ${n}`);
    out.seedMs = Date.now() - t;
    log(`  ${n}: seeded A in ${out.seedMs} ms`);

    // Upload: A turns sync on (Settings, as a person would).
    where = 'upload from A';
    await A.page.getByTestId('sync-relay-url').fill(relay.url);
    await A.page.getByTestId('sync-device-name').fill('Laptop');
    const up = await profiled({ A: A.page, B: B.page }, async () => {
      const a0 = await pageNow(A.page);
      t = Date.now();
      await A.page.getByTestId('sync-turn-on').click();
      let size = -1;
      let grewAt = Date.now();
      await until(async () => {
        const now = roomBytes(dir);
        if (now !== size) [size, grewAt] = [now, Date.now()];
        const synced = (await A.page.locator('[data-testid="sync-status"]').getAttribute('data-phase')) === 'synced';
        return synced && size > 0 && Date.now() - grewAt > 1500;
      }, 'A uploading');
      return { a0, a1: await pageNow(A.page), ms: grewAt - t };
    });
    out.upload = { ms: up.value.ms, bytes: roomBytes(dir), tasksA: tasks(await readMeasure(A.page), up.value.a0, up.value.a1) };
    out.upload.spansA = await spans(A.page, up.value.a0, up.value.a1);
    if (up.stretches) out.upload.profile = up.stretches;
    log(`  ${n}: upload ${JSON.stringify(out.upload)}`);

    // First sync: B joins by A's code and shows its Memory view meanwhile.
    where = 'first sync to B';
    await A.page.getByTestId('sync-show-code').click();
    const code = (await A.page.getByTestId('sync-code').textContent()).trim();
    await B.page.goto(`${url}/#/settings`);
    await B.page.getByTestId('settings-sync').waitFor();
    await B.page.getByTestId('sync-relay-url').fill(relay.url);
    await B.page.getByTestId('sync-device-name').fill('Phone');
    await B.page.getByTestId('sync-code-input').fill(code);
    const down = await profiled({ A: A.page, B: B.page }, async () => {
      const [a0, b0] = [await pageNow(A.page), await pageNow(B.page)];
      t = Date.now();
      await B.page.getByTestId('sync-join').click();
      await B.page.getByTestId('nav-memory').click();
      const view = B.page
        .waitForFunction((n) => document.querySelector('[data-testid="memory-count"]')?.textContent?.startsWith(`${n} memories`), n, {
          timeout: CAP_MS,
          polling: 100,
        })
        .then(() => Date.now() - t);
      const idbMs = await until(async () => (await countIn(B.page)) === n && Date.now() - t, 'memories into B');
      const viewMs = await view;
      // What follows the last write (the view's reload, B's own first push) belongs to the sync.
      await B.page.waitForTimeout(2000);
      return { a0, b0, a1: await pageNow(A.page), b1: await pageNow(B.page), idbMs, viewMs };
    });
    const { a0, b0, a1, b1, idbMs, viewMs } = down.value;
    const bytes = roomBytes(dir);
    out.firstSync = {
      idbMs,
      viewMs,
      relayBytes: bytes,
      backupGzBytes: backupGz,
      ratio: Math.round((bytes / backupGz) * 100) / 100,
      tasksB: tasks(await readMeasure(B.page), b0, b1),
      tasksA: tasks(await readMeasure(A.page), a0, a1),
      heapBMB: await B.page.evaluate(() => Math.round((performance.memory?.usedJSHeapSize ?? 0) / 1e6)),
    };
    out.firstSync.spansA = await spans(A.page, a0, a1);
    out.firstSync.spansB = await spans(B.page, b0, b1);
    if (down.stretches) out.firstSync.profile = down.stretches;
    log(`  ${n}: first sync ${JSON.stringify(out.firstSync)}`);

    // Single edits: the same memory, open on both devices.
    where = 'edits';
    const onA = await openFirstMemory(A.page);
    const onB = await openFirstMemory(B.page);
    if (onA.id !== onB.id) throw new Error(`A and B opened different memories: ${onA.id}, ${onB.id}`);
    const idb = [];
    const shown = [];
    const savedAt = [];
    const ed = await profiled({ A: A.page, B: B.page }, async () => {
      const [a0, b0] = [await pageNow(A.page), await pageNow(B.page)];
      for (let i = 0; i < EDITS; i++) {
        const text = `Edited on A, number ${i}, at ${Date.now()}`;
        await A.page.locator(DETAIL).getByRole('button', { name: 'Edit', exact: true }).click();
        await A.page.locator(`${DETAIL} textarea`).fill(text);
        const saved = await A.page.evaluate((sel) => {
          const save = [...document.querySelectorAll(`${sel} button`)].find((b) => b.textContent.trim() === 'Save');
          save.click();
          return Date.now();
        }, DETAIL);
        savedAt.push(saved);
        const inDb = arrivedAt(B.page, onA.id, text, 60_000);
        const inView = i < VIEW_EDITS ? shownAt(B.page, text, 60_000) : undefined;
        idb.push((await inDb) - saved);
        if (inView) shown.push((await inView) - saved);
        await A.page.locator(`${DETAIL} h3`).filter({ hasText: text }).first().waitFor({ timeout: 30_000 });
        await A.page.waitForTimeout(300);
      }
      return { a0, b0, a1: await pageNow(A.page), b1: await pageNow(B.page) };
    });
    const one = (xs) => ({ n: xs.length, medianMs: r0(median(xs)), maxMs: r0(Math.max(...xs)) });
    out.edits = {
      toIdb: one(idb),
      toView: shown.length ? one(shown) : undefined,
      tasksB: tasks(await readMeasure(B.page), ed.value.b0, ed.value.b1),
      tasksA: tasks(await readMeasure(A.page), ed.value.a0, ed.value.a1),
    };
    out.edits.spansA = await spans(A.page, ed.value.a0, ed.value.a1);
    out.edits.spansB = await spans(B.page, ed.value.b0, ed.value.b1);
    if (marksRaw) out.edits.savedAt = savedAt;
    out.syncRows = { A: await syncRowsMB(A.page), B: await syncRowsMB(B.page) };
    if (ed.stretches) out.edits.profile = ed.stretches;
    log(`  ${n}: edits ${JSON.stringify(out.edits)}`);
    for (const h of [A, B]) if (h.offHost.length) throw new Error(`requests left 127.0.0.1: ${h.offHost.join(', ')}`);
    out.pageErrors = [...A.errors, ...B.errors].slice(0, 5);
  } catch (e) {
    out.stoppedAt = where;
    out.error = String(e.message ?? e).split('\n')[0];
    log(`  ${n}: stopped during ${where}: ${out.error}`);
  } finally {
    await A.dispose();
    await B.dispose();
    await relay.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

const server = await startServer({ dir: dist });
const results = [];
try {
  for (const n of sizes) {
    const records = makeMemories(n);
    const text = JSON.stringify({
      format: 'tealeaf-backup',
      version: 1,
      exportedAt: Date.now(),
      data: { sessions: [], turns: [], memories: records, edges: [], segments: [], settings: [] },
    });
    const file = join(tmpdir(), `tealeaf-sync-bench-${process.pid}-${n}.json`);
    writeFileSync(file, text);
    try {
      for (let r = 0; r < runs; r++) results.push(await once(n, server.url, file, gzipSync(text).length));
    } finally {
      rmSync(file, { force: true });
    }
  }
} finally {
  await server.close();
}
// Per size, the median over runs of each headline figure.
const pick = {
  seedMs: (r) => r.seedMs,
  uploadMs: (r) => r.upload?.ms,
  uploadLongestTaskA: (r) => r.upload?.tasksA.maxMs,
  firstSyncIdbMs: (r) => r.firstSync?.idbMs,
  firstSyncViewMs: (r) => r.firstSync?.viewMs,
  bytesRatio: (r) => r.firstSync?.ratio,
  firstSyncLongTasksB: (r) => r.firstSync?.tasksB.count,
  firstSyncLongTaskMedianB: (r) => r.firstSync?.tasksB.medianMs,
  firstSyncLongestTaskB: (r) => r.firstSync?.tasksB.maxMs,
  firstSyncOver200B: (r) => r.firstSync?.tasksB.over200,
  firstSyncLongestTaskA: (r) => r.firstSync?.tasksA.maxMs,
  editToIdbMedianMs: (r) => r.edits?.toIdb.medianMs,
  editToIdbMaxMs: (r) => r.edits?.toIdb.maxMs,
  editToViewMedianMs: (r) => r.edits?.toView?.medianMs,
  editToViewMaxMs: (r) => r.edits?.toView?.maxMs,
  editsLongTasksB: (r) => r.edits?.tasksB.count,
  editsLongestTaskB: (r) => r.edits?.tasksB.maxMs,
  editsOver200B: (r) => r.edits?.tasksB.over200,
  editsLongestTaskA: (r) => r.edits?.tasksA.maxMs,
  editsOver200A: (r) => r.edits?.tasksA.over200,
};
const summary = sizes.map((n) => {
  const mine = results.filter((r) => r.n === n);
  const row = { n, runs: mine.length, stopped: mine.filter((r) => r.error).map((r) => `${r.stoppedAt}: ${r.error}`) };
  for (const [k, f] of Object.entries(pick)) {
    const xs = mine.map(f).filter((x) => typeof x === 'number');
    row[k] = xs.length ? median(xs) : null;
  }
  return row;
});
if (asJson) console.log(JSON.stringify({ summary, runs: results }, null, 2));
else {
  for (const r of results) console.log(JSON.stringify(r));
  for (const s of summary) console.log(`median of ${s.runs} run(s), ${s.n} memories: ${JSON.stringify(s)}`);
}
