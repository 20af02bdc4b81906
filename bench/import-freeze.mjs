// How long the page freezes while a large backup is imported (target: no main-thread task over
// 200 ms during a 50 MB import). The production build, served from 127.0.0.1 in headless
// Chromium; a generated backup of 100,000 memories (with edges, sessions and turns, ~50 MB) is
// imported through Settings (replace). Long tasks (bench/lib/long-tasks.mjs) are recorded
// in two windows: the import itself (read, parse, check, write: the worker) and the rebuild of
// the memory index that follows on the page. Median of runs.
// Usage: npm run -s bench:import -- [--runs 3] [--memories 100000] [--json]
import { mkdtempSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launchAsUsers as launch, startServer } from '../tests/e2e/harness.mjs';
import { MEASURE_INIT, median, pageNow, readMeasure } from './lib/long-tasks.mjs';
import { flag, option } from './lib/cli.mjs';

const runs = Number(option('--runs', 3));
const n = Number(option('--memories', 100_000));
const asJson = flag('--json');
const DIST = resolve(import.meta.dirname, '../dist');

const WORDS =
  'garden trip sister coffee painting concert dog hike beach exam project recipe bakery guitar novel museum marathon camping violin school promotion wedding cousin puppy kayak'.split(
    ' ',
  );
let seed = 42;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const words = (k) => Array.from({ length: k }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');

/** A backup as the app writes it: sessions of 100 memories, two turns per memory, ~1.3 edges each. */
function makeBackup() {
  const T0 = Date.UTC(2020, 0, 1);
  const sessions = [];
  const turns = [];
  const memories = [];
  const edges = [];
  for (let i = 0; i < n; i++) {
    const s = Math.floor(i / 100);
    if (i % 100 === 0)
      sessions.push({
        id: `s${s}`,
        title: words(4),
        startedAt: T0 + s * 86_400_000,
        lastActivityAt: T0 + s * 86_400_000 + 3_600_000,
        endedAt: T0 + s * 86_400_000 + 3_600_000,
        status: 'memorised',
        endReason: 'button',
      });
    const time = T0 + s * 86_400_000 + (i % 100) * 60_000;
    const u = {
      id: `t${i}u`,
      sessionId: `s${s}`,
      index: (i % 100) * 2,
      role: 'user',
      text: `I told you about the ${words(14)}`,
      time,
      status: 'complete',
    };
    const a = {
      id: `t${i}a`,
      sessionId: `s${s}`,
      index: (i % 100) * 2 + 1,
      role: 'assistant',
      text: words(12),
      time: time + 1000,
      status: 'complete',
    };
    turns.push(u, a);
    memories.push({
      id: `m${i}`,
      kind: i % 5 === 0 ? 'user-trait' : 'event',
      text: `The user mentioned the ${words(16)}`,
      time,
      sourceTurnIds: [u.id],
      sessionId: `s${s}`,
      edited: false,
      createdAt: time,
    });
    if (i > 0)
      edges.push({
        id: `e${i}`,
        from: `m${Math.floor(rnd() * i)}`,
        to: `m${i}`,
        relation: ['Cause', 'SameTopic', 'Reason', 'Changed'][i % 4],
        origin: 'model',
        createdAt: time,
      });
    if (i > 10 && i % 3 === 0)
      edges.push({ id: `f${i}`, from: `m${i - 10}`, to: `m${i}`, relation: 'SameTopic', origin: 'similarity', createdAt: time });
  }
  return {
    format: 'tealeaf-backup',
    version: 1,
    exportedAt: Date.now(),
    data: { sessions, turns, memories, edges, segments: [], settings: [] },
  };
}

const r1 = (x) => Math.round(x * 10) / 10;

const dir = mkdtempSync(join(tmpdir(), 'tealeaf-import-'));
const file = join(dir, 'backup.json');
writeFileSync(file, JSON.stringify(makeBackup()));
const sizeMB = statSync(file).size / 1024 / 1024;
const server = await startServer({ dir: DIST });
const results = [];
try {
  for (let i = 0; i < runs; i++) {
    const h = await launch({ init: MEASURE_INIT });
    try {
      const { page } = h;
      page.on('dialog', (d) => d.accept());
      await page.goto(`${server.url}/#/settings`);
      await page.getByTestId('import-file').setInputFiles(file);
      await page.getByTestId('import-mode').selectOption('replace');
      await page.getByTestId('import-run').click();
      // A replace asks first (an in-page dialog): the import starts with the yes.
      const start = await pageNow(page);
      await page.getByTestId('confirm-ok').click({ timeout: 10_000 });
      // The worker's part ends when the progress says the page is loading its memories (the rebuild).
      await page.locator('[data-testid="backup-progress"][data-phase="reloading"]').waitFor({ timeout: 600_000 });
      const written = await pageNow(page);
      await page.getByTestId('import-done').waitFor({ timeout: 600_000 });
      const done = await pageNow(page);
      const measure = await readMeasure(page);
      const text = await page.getByTestId('import-done').textContent();
      if (!text.includes(`${n.toLocaleString('en-US')} memories`)) throw new Error(`unexpected result: ${text}`);
      results.push({
        importMs: written - start,
        rebuildMs: done - written,
        longestTaskImportMs: measure.longestTask(start, written),
        longestTaskRebuildMs: measure.longestTask(written, done),
        longestFrameGapImportMs: measure.longestFrameGap(start, written),
        longestFrameGapRebuildMs: measure.longestFrameGap(written, done),
      });
      if (h.offHost.length) throw new Error(`requests left 127.0.0.1: ${h.offHost.join(', ')}`);
    } finally {
      await h.dispose();
    }
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
const summary = {
  memories: n,
  fileMB: r1(sizeMB),
  runs,
  importMsMedian: r1(median(results.map((r) => r.importMs))),
  longestTaskDuringImportMsMedian: r1(median(results.map((r) => r.longestTaskImportMs))),
  longestFrameGapDuringImportMsMedian: r1(median(results.map((r) => r.longestFrameGapImportMs))),
  rebuildMsMedian: r1(median(results.map((r) => r.rebuildMs))),
  longestTaskDuringRebuildMsMedian: r1(median(results.map((r) => r.longestTaskRebuildMs))),
  longestFrameGapDuringRebuildMsMedian: r1(median(results.map((r) => r.longestFrameGapRebuildMs))),
  all: results.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r1(v)]))),
};
if (asJson) console.log(JSON.stringify(summary, null, 2));
else console.log(summary);
