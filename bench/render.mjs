// Memory explorer render benchmark: loads synthetic graphs of 1,000 and
// 5,000 memories into the built production app (dist/) in headless Chromium, through the
// Settings backup import, then measures
//   firstRenderMs: from the click that opens the memory view to the first 'explorer:render' mark;
//   medianFrameMs: median requestAnimationFrame interval during a scripted zoom (wheel) and pan (drag).
// Median over runs. Targets at 5,000: first render <= 1,000 ms, median frame <= 33 ms.
// Usage: npm run -s bench:render -- [--json] [--runs 3] [--sizes 1000,5000] [--dist dist] [--debug]
import { mulberry32 } from '../scripts/lib/rng.mjs';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const RELATIONS = ['Changed', 'Cause', 'Reason', 'HinderedBy', 'React', 'Want', 'SameTopic'];
const TOPICS = [
  'running',
  'swimming',
  'cooking',
  'gardening',
  'guitar',
  'Portuguese',
  'work',
  'sister',
  'travel',
  'books',
  'chess',
  'painting',
  'budget',
  'moving house',
  'the dog',
  'cycling',
  'photography',
  'sleep',
  'baking',
  'hiking',
];
const VERBS = ['talked about', 'planned', 'worried about', 'finished', 'started', 'asked for advice on', 'was happy about', 'postponed'];
const DAY = 86_400_000;

/** Deterministic, so every run loads the same graph. */
const rng = mulberry32;

const pad = (n, w = 5) => String(n).padStart(w, '0');

/**
 * A tealeaf-backup v1 object (src/store/backup.ts) with `memories` memories over three years,
 * 10 per session, grouped into topics of ~40 (the explorer's threads), and exactly `edges`
 * edges, older -> newer, inside topics: each memory links to the previous one of its topic
 * (so threads are connected), the rest to random recent members. Changed edges between two
 * traits of one kind mark the older superseded, as the method does.
 */
export function syntheticBackup({ memories: n, edges: targetEdges, seed = 42, now = Date.UTC(2025, 0, 1) }) {
  const random = rng(seed);
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  const perSession = 10;
  const sessionCount = Math.ceil(n / perSession);
  const span = 3 * 365 * DAY;
  const start = now - span;
  const sessions = [];
  const turns = [];
  const memories = [];
  const topicCount = Math.max(3, Math.round(n / 40));
  for (let s = 0; s < sessionCount; s++) {
    const id = `syn:s${pad(s)}`;
    const t0 = Math.floor(start + (s * span) / sessionCount + random() * 6 * 3600_000);
    const turnIds = [];
    for (let i = 0; i < 6; i++) {
      const tid = `${id}:t${i}`;
      turnIds.push(tid);
      const role = i % 2 === 0 ? 'user' : 'assistant';
      turns.push({
        id: tid,
        sessionId: id,
        index: i,
        role,
        text: `${role === 'user' ? 'I' : 'You'} ${pick(VERBS)} ${pick(TOPICS)} (turn ${i}).`,
        time: t0 + i * 60_000,
        status: 'complete',
      });
    }
    const end = t0 + 5 * 60_000;
    sessions.push({
      id,
      title: `Synthetic session ${s + 1}`,
      startedAt: t0,
      lastActivityAt: end,
      endedAt: end,
      status: 'memorised',
      endReason: 'button',
    });
    for (let k = 0; k < perSession && memories.length < n; k++) {
      const turn = Math.floor(random() * 6);
      const topic = Math.floor(random() * topicCount);
      const r = random();
      const kind = r < 0.7 ? 'event' : r < 0.82 ? 'user-trait' : r < 0.9 ? 'assistant-trait' : 'note';
      const about = TOPICS[topic % TOPICS.length];
      const m = {
        id: `syn:m${pad(memories.length)}`,
        kind,
        text:
          kind === 'note'
            ? `Keep answers about ${about} short (${memories.length}).`
            : `The ${kind === 'assistant-trait' ? 'assistant' : 'user'} ${pick(VERBS)} ${about}, item ${memories.length} of thread ${topic}.`,
        subject: kind === 'assistant-trait' ? 'assistant' : 'user',
        time: t0 + turn * 60_000,
        sourceTurnIds: [turnIds[turn]],
        sessionId: id,
        edited: false,
        createdAt: end + 60_000,
        ...(kind === 'note' ? { context: `The user asked for it in session ${s + 1}.` } : {}),
      };
      m.topic = topic;
      memories.push(m);
    }
  }
  // The app's chronological order: time, then createdAt, then id.
  const order = [...memories].sort((a, b) => a.time - b.time || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const history = new Map();
  const chain = [];
  const extra = [];
  for (const m of order) {
    const h = history.get(m.topic) ?? [];
    if (h.length > 0) chain.push([h[h.length - 1], m]);
    for (let j = 2; j <= Math.min(6, h.length); j++) extra.push([h[h.length - j], m]);
    h.push(m);
    history.set(m.topic, h);
  }
  // Deterministic shuffle of the optional pairs, then take as many as the target needs.
  for (let i = extra.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [extra[i], extra[j]] = [extra[j], extra[i]];
  }
  const pairs = [...chain, ...extra].slice(0, targetEdges);
  if (pairs.length < targetEdges) throw new Error(`cannot place ${targetEdges} edges on ${n} memories (only ${pairs.length} pairs)`);
  const edges = pairs.map(([a, b]) => {
    const trait = a.kind === b.kind && (a.kind === 'user-trait' || a.kind === 'assistant-trait');
    const relation = trait && random() < 0.5 ? 'Changed' : pick(RELATIONS);
    if (relation === 'Changed' && trait && a.supersededBy === undefined) a.supersededBy = b.id;
    return {
      id: `edge:${a.id}->${b.id}`,
      from: a.id,
      to: b.id,
      relation,
      origin: random() < 0.8 ? 'model' : 'similarity',
      createdAt: b.createdAt,
    };
  });
  for (const m of memories) delete m.topic;
  return { format: 'tealeaf-backup', version: 1, exportedAt: now, data: { sessions, turns, memories, edges, segments: [], settings: [] } };
}

/** Edge counts of the benchmark: 10,000 at 5,000 memories, two per memory below that. */
export const edgesFor = (n) => (n >= 5000 ? 10_000 : 2 * n);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round1 = (x) => Math.round(x * 10) / 10;

class UiMissing extends Error {}

async function need(page, selector, what, timeout = 30_000) {
  try {
    await page.waitForSelector(selector, { state: 'attached', timeout });
  } catch {
    throw new UiMissing(
      `bench:render: ${what} (${selector}) not found in the built app after ${timeout / 1000} s. ` +
        'The benchmark needs the Settings backup import (data-testid="import-file", "import-mode", "import-run", "import-done"), ' +
        'the navigation link data-testid="nav-memory" and the memory view\'s performance.mark("explorer:render").',
    );
  }
}

async function importThroughUi(page, url, backup) {
  await page.goto(`${url}/#/settings`, { waitUntil: 'load' });
  await need(page, '[data-testid="import-file"]', 'the backup file input');
  await need(page, '[data-testid="import-mode"]', 'the import mode select');
  await need(page, '[data-testid="import-run"]', 'the import button');
  await page.setInputFiles('[data-testid="import-file"]', {
    name: `synthetic-${backup.data.memories.length}.json`,
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(backup)),
  });
  await page.selectOption('[data-testid="import-mode"]', 'replace');
  await page.click('[data-testid="import-run"]');
  // A replace asks first (an in-page dialog): yes.
  await page.locator('[data-testid="confirm-ok"]').click({ timeout: 10_000 });
  const done = await page
    .waitForSelector('[data-testid="import-done"], [data-testid="import-error"]', { timeout: 120_000 })
    .catch(() => null);
  if (!done)
    throw new UiMissing('bench:render: neither data-testid="import-done" nor "import-error" appeared within 120 s of clicking import-run');
  if ((await done.getAttribute('data-testid')) === 'import-error')
    throw new Error(`bench:render: the app refused the synthetic backup: ${await done.innerText()}`);
}

/** Opens the memory view by its nav link; ms from the click to the first explorer:render mark. */
async function firstRender(page, url, expected) {
  await page.goto(`${url}/#/chat`, { waitUntil: 'load' });
  await need(page, '[data-testid="nav-memory"]', 'the memory view link');
  // Let the app finish loading the store, so the figure is the explorer's, not the boot's.
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(500);
  const ms = await page.evaluate(async (expectedCount) => {
    return await new Promise((ok, fail) => {
      const link = document.querySelector('[data-testid="nav-memory"]');
      const timer = setTimeout(
        () => fail(new Error('no performance.mark("explorer:render") within 30 s of opening the memory view')),
        30_000,
      );
      let t0 = 0;
      const observer = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          // A mark may say how many memories it drew; an empty first draw does not count.
          const drawn = e.detail && typeof e.detail.memories === 'number' ? e.detail.memories : expectedCount;
          if (e.name === 'explorer:render' && e.startTime >= t0 && drawn >= expectedCount) {
            clearTimeout(timer);
            observer.disconnect();
            ok(e.startTime - t0);
            return;
          }
        }
      });
      observer.observe({ type: 'mark' });
      t0 = performance.now();
      link.click();
    });
  }, expected);
  const count = await page
    .locator('[data-testid="memory-count"]')
    .first()
    .innerText({ timeout: 5_000 })
    .catch(() => '');
  if (count && !count.includes(`${expected.toLocaleString('en-US')} memories`) && !count.includes(`${expected} memories`)) {
    throw new Error(`bench:render: the memory view shows "${count}", expected ${expected} memories`);
  }
  return ms;
}

async function timelineBox(page) {
  for (const selector of ['[data-testid="timeline-view"]', '[aria-roledescription="memory timeline"]', 'main canvas', 'main svg']) {
    const handles = await page.$$(selector);
    let best = null;
    for (const h of handles) {
      const box = await h.boundingBox();
      if (box && box.width > 100 && box.height > 100 && (!best || box.width * box.height > best.width * best.height)) best = box;
    }
    if (best) return best;
  }
  throw new UiMissing(
    'bench:render: no timeline to zoom: expected [data-testid="timeline-view"] (or a canvas/svg of at least 100x100 px in main)',
  );
}

/** Median rAF interval while the timeline is zoomed with the wheel and panned by dragging. */
async function frameTimes(page) {
  const box = await timelineBox(page);
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  await page.mouse.move(cx, cy);
  await page.waitForTimeout(300);
  await page.evaluate(() => {
    const w = window;
    w.__benchFrames = [];
    w.__benchOn = true;
    const tick = (t) => {
      if (!w.__benchOn) return;
      w.__benchFrames.push(t);
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  for (const dy of [-120, 120]) {
    for (let i = 0; i < 12; i++) {
      await page.mouse.wheel(0, dy);
      await page.waitForTimeout(16);
    }
  }
  for (let i = 0; i < 6; i++) await page.mouse.wheel(0, -120); // zoomed in while panning
  await page.mouse.down();
  await page.mouse.move(cx - box.width / 3, cy + 20, { steps: 40 });
  await page.mouse.move(cx + box.width / 3, cy - 20, { steps: 60 });
  await page.mouse.move(cx, cy, { steps: 30 });
  await page.mouse.up();
  await page.waitForTimeout(100);
  const frames = await page.evaluate(() => {
    window.__benchOn = false;
    return window.__benchFrames;
  });
  const intervals = frames.slice(1).map((t, i) => t - frames[i]);
  if (intervals.length < 10) throw new Error(`bench:render: only ${intervals.length} frames recorded during zoom and pan`);
  if (debug) {
    const sorted = [...intervals].sort((a, b) => a - b);
    const marks = await page.evaluate(
      (from) => performance.getEntriesByName('explorer:render').filter((e) => e.startTime >= from).length,
      frames[0],
    );
    console.error(
      `  frames ${intervals.length}, median ${round1(median(intervals))} ms, p95 ${round1(sorted[Math.floor(sorted.length * 0.95)])} ms, max ${round1(sorted.at(-1))} ms, explorer:render marks during the gesture ${marks}`,
    );
    await shot(page, 'after-gesture');
  }
  return median(intervals);
}

let debug = false;
let shotDir = '';
async function shot(page, name) {
  const { mkdirSync } = await import('node:fs');
  mkdirSync(shotDir, { recursive: true });
  await page.screenshot({ path: resolve(shotDir, `${name}.png`) });
}

async function measure(size, runs, url, launch) {
  const backup = syntheticBackup({ memories: size, edges: edgesFor(size) });
  const h = await launch({ viewport: { width: 1280, height: 800 } });
  h.page.on('dialog', (d) => void d.accept()); // "replace everything?" confirmation
  try {
    await importThroughUi(h.page, url, backup);
    const renders = [];
    const frames = [];
    for (let r = 0; r < runs; r++) {
      renders.push(await firstRender(h.page, url, size));
      if (debug) {
        console.error(`${size}: first render ${round1(renders.at(-1))} ms`);
        shotDir = resolve(import.meta.dirname, `../test-results/render/${size}`);
        await shot(h.page, 'first-render');
      }
      await h.page.waitForTimeout(300);
      frames.push(await frameTimes(h.page));
    }
    if (h.errors.length > 0) throw new Error(`bench:render: page errors: ${h.errors.slice(0, 3).join(' | ')}`);
    return { firstRenderMs: round1(median(renders)), medianFrameMs: round1(median(frames)) };
  } finally {
    await h.dispose();
  }
}

async function main() {
  const args = process.argv.slice(2);
  const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const asJson = args.includes('--json');
  // --debug: per-run figures on stderr and screenshots in test-results/render/.
  debug = args.includes('--debug');
  const runs = Number(opt('--runs')) || 3;
  const sizes = (opt('--sizes') ?? '1000,5000')
    .split(',')
    .map(Number)
    .filter((x) => x > 0);
  const { launchAsUsers: launch, startServer } = await import('../tests/e2e/harness.mjs');
  const server = await startServer({ dir: resolve(opt('--dist') ?? resolve(import.meta.dirname, '../dist')) });
  const result = {};
  try {
    for (const size of sizes) result[String(size)] = await measure(size, runs, server.url, launch);
  } finally {
    await server.close();
  }
  if (asJson) console.log(JSON.stringify(result));
  else {
    for (const [size, r] of Object.entries(result)) {
      console.log(
        `${size} memories, ${edgesFor(Number(size))} edges: first render ${r.firstRenderMs} ms, median frame ${r.medianFrameMs} ms`,
      );
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((e) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  });
}
