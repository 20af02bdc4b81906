// How long the page freezes while a large ChatGPT history is imported (target: no main-thread
// task over 200 ms). The production build, served from 127.0.0.1 in headless Chromium, imports a
// generated conversations.json (tests/support/history-export.mjs) of each --mb size through the
// Memory view, from choosing the file until the result is shown. Long tasks and the gaps between
// animation frames (bench/lib/long-tasks.mjs) are recorded in that window, and Chromium's trace of
// the same tasks gives the processor time of the longest (on a loaded machine a task waits for a
// core: wall time alone overstates the page's work). Median of runs.
// Usage: npm run -s bench:history -- [--runs 3] [--mb 240,113] [--dist dist[,other]] [--json]
//   --dist a,b measures several builds (e.g. one of the code before a change), runs alternating.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launchAsUsers as launch, startServer } from '../tests/e2e/harness.mjs';
import { makeChatgptExport } from '../tests/support/history-export.mjs';
import { MEASURE_INIT, median, pageNow, readMeasure, traceMainThread } from './lib/long-tasks.mjs';
import { distList, flag, option } from './lib/cli.mjs';

const runs = Number(option('--runs', 3));
const sizes = option('--mb', '240,113').split(',').map(Number);
const asJson = flag('--json');
const dists = distList(resolve(import.meta.dirname, '../dist'));
const r0 = (x) => Math.round(x);

async function once(appUrl, file, chats) {
  const h = await launch({ init: MEASURE_INIT });
  try {
    const { page } = h;
    await page.goto(`${appUrl}/#/memory`);
    await page.getByTestId('load-demo').waitFor();
    const stopTrace = await traceMainThread(page);
    const start = await pageNow(page);
    const wall = Date.now();
    await page.getByTestId('import-history').setInputFiles(file);
    const result = page.getByTestId('import-result');
    await result.waitFor({ timeout: 1_200_000 });
    const end = await pageNow(page);
    const text = await result.textContent();
    if (!text.includes(`Imported ${chats.toLocaleString('en-US')} chats`)) throw new Error(`unexpected result: ${text}`);
    const measure = await readMeasure(page);
    const traced = await stopTrace();
    if (h.offHost.length) throw new Error(`requests left 127.0.0.1: ${h.offHost.join(', ')}`);
    const inWindow = measure.within(start, end);
    return {
      importMs: Date.now() - wall,
      longestTaskMs: measure.longestTask(start, end),
      tasksOver200: inWindow.filter((t) => t.duration > 200).length,
      blockedMs: inWindow.reduce((sum, t) => sum + t.duration, 0),
      longestFrameGapMs: measure.longestFrameGap(start, end),
      // The same tasks as Chromium traced them: the longest on the processor (the page's own work).
      longestTaskCpuMs: Math.max(0, ...traced.map((t) => t.cpuMs)),
    };
  } finally {
    await h.dispose();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'tealeaf-history-'));
const servers = await Promise.all(dists.map((d) => startServer({ dir: d })));
const summary = [];
try {
  for (const mb of sizes) {
    const made = makeChatgptExport({ mb });
    const file = join(dir, `conversations-${mb}.json`);
    writeFileSync(file, made.text);
    const results = dists.map(() => []);
    for (let i = 0; i < runs; i++)
      for (let d = 0; d < dists.length; d++) {
        const r = await once(servers[d].url, file, made.chats);
        results[d].push(r);
        if (!asJson)
          console.error(
            `${mb} MB ${dists[d]} run ${i + 1}: ${JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r0(v)])))}`,
          );
      }
    rmSync(file);
    for (let d = 0; d < dists.length; d++)
      summary.push({
        dist: dists[d],
        fileMB: mb,
        chats: made.chats,
        messages: made.messages,
        runs,
        longestTaskMsMedian: r0(median(results[d].map((r) => r.longestTaskMs))),
        longestFrameGapMsMedian: r0(median(results[d].map((r) => r.longestFrameGapMs))),
        longestTaskCpuMsMedian: r0(median(results[d].map((r) => r.longestTaskCpuMs))),
        tasksOver200Median: median(results[d].map((r) => r.tasksOver200)),
        blockedMsMedian: r0(median(results[d].map((r) => r.blockedMs))),
        importMsMedian: r0(median(results[d].map((r) => r.importMs))),
        all: results[d].map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r0(v)]))),
      });
  }
} finally {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
}
if (asJson) console.log(JSON.stringify(summary, null, 2));
else for (const s of summary) console.log(s);
