// How long the page freezes while a reply streams in (target: no main-thread task over 200 ms).
// The production build, served from 127.0.0.1 in headless Chromium, chats with the model server
// double (tests/support/fake-openai-server.mjs), which streams a generated markdown reply of
// --kb kilobytes (paragraphs, headings, lists, code, tables) one word per event at --rate events
// per second, or all at once with --burst. Long tasks and the gaps between animation frames
// (bench/lib/long-tasks.mjs) are recorded from Send until the reply is complete. Median of runs.
// Usage: npm run -s bench:stream -- [--runs 3] [--kb 100] [--rate 200] [--burst] [--dist dist[,other]] [--json]
//   --dist a,b measures several builds (e.g. one of the code before a change), runs alternating.
import { resolve } from 'node:path';
import { launchAsUsers as launch, startServer } from '../tests/e2e/harness.mjs';
import { startFakeOpenAiServer } from '../tests/support/fake-openai-server.mjs';
import { MEASURE_INIT, median, pageNow, readMeasure } from './lib/long-tasks.mjs';
import { distList, flag, option } from './lib/cli.mjs';

const runs = Number(option('--runs', 3));
const kb = Number(option('--kb', 100));
const rate = Number(option('--rate', 200));
const burst = flag('--burst');
const asJson = flag('--json');
const dists = distList(resolve(import.meta.dirname, '../dist'));

const WORDS =
  'the garden trip with my sister was lovely and we talked about coffee painting concerts dogs hikes beaches exams projects recipes bakeries guitars novels museums'.split(
    ' ',
  );
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const pick = () => WORDS[Math.floor(rnd() * WORDS.length)];
const words = (n) => Array.from({ length: n }, pick).join(' ');

/** A markdown reply of about `bytes` characters, with the blocks a model writes. */
function markdownReply(bytes) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    let block;
    switch (i % 6) {
      case 0:
        block = `## ${words(4)}`;
        break;
      case 2:
        block = Array.from({ length: 4 }, () => `- **${pick()}**: ${words(10)}`).join('\n');
        break;
      case 3:
        block = ['```js', ...Array.from({ length: 8 }, (_, k) => `const ${pick()}${k} = "${words(5)}";`), '```'].join('\n');
        break;
      case 5:
        block = ['| name | note |', '| --- | --- |', ...Array.from({ length: 4 }, () => `| ${pick()} | ${words(6)} |`)].join('\n');
        break;
      default:
        block = `${words(60)}. *${words(8)}* and \`${pick()}\`, ${words(30)}.`;
    }
    parts.push(block);
    size += block.length + 2;
  }
  return parts.join('\n\n');
}

const r0 = (x) => Math.round(x);

async function once(appUrl, fakeUrl, reply) {
  const h = await launch({ init: MEASURE_INIT });
  try {
    const { page } = h;
    await page.goto(`${appUrl}/#/models`);
    await page.getByTestId('server-url').fill(fakeUrl);
    await page.getByTestId('server-connect').click();
    await page.getByTestId('server-model').selectOption('tiny-chat');
    await page.getByTestId('server-use').click();
    await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor({ timeout: 10_000 });
    await page.getByTestId('nav-chat').click();
    await page.getByTestId('composer').fill('Write me the long answer');
    const start = await pageNow(page);
    const wall = Date.now();
    await page.getByTestId('send').click();
    await page.locator('[data-testid="turn-assistant"][data-status="complete"]').waitFor({ timeout: 1_800_000 });
    const end = await pageNow(page);
    const measure = await readMeasure(page);
    const shown = await page.evaluate(
      () => document.querySelector('[data-testid="turn-assistant"] [data-testid="reply-body"]')?.textContent?.length ?? 0,
    );
    const inWindow = measure.within(start, end);
    if (h.offHost.length) throw new Error(`requests left 127.0.0.1: ${h.offHost.join(', ')}`);
    if (shown < reply.length * 0.5) throw new Error(`the reply shown is too short: ${shown} of ${reply.length} characters`);
    return {
      streamMs: Date.now() - wall,
      longestTaskMs: measure.longestTask(start, end),
      tasksOver200: inWindow.filter((t) => t.duration > 200).length,
      blockedMs: inWindow.reduce((sum, t) => sum + t.duration, 0),
      longestFrameGapMs: measure.longestFrameGap(start, end),
    };
  } finally {
    await h.dispose();
  }
}

const reply = markdownReply(kb * 1024);
const fake = await startFakeOpenAiServer({
  maxTokensIgnored: true,
  eventDelayMs: burst ? 0 : 1000 / rate,
  replies: [{ when: 'long answer', say: reply }],
});
const servers = await Promise.all(dists.map((dir) => startServer({ dir })));
const results = dists.map(() => []);
try {
  for (let i = 0; i < runs; i++)
    for (let d = 0; d < dists.length; d++) {
      const r = await once(servers[d].url, fake.url, reply);
      results[d].push(r);
      if (!asJson)
        console.error(`${dists[d]} run ${i + 1}: ${JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r0(v)])))}`);
    }
} finally {
  await fake.close();
  await Promise.all(servers.map((s) => s.close()));
}
const summary = dists.map((dist, d) => ({
  dist,
  replyKB: Math.round(reply.length / 1024),
  delivery: burst ? 'one burst' : `${rate} events/s`,
  runs,
  longestTaskMsMedian: r0(median(results[d].map((r) => r.longestTaskMs))),
  longestFrameGapMsMedian: r0(median(results[d].map((r) => r.longestFrameGapMs))),
  tasksOver200Median: median(results[d].map((r) => r.tasksOver200)),
  blockedMsMedian: r0(median(results[d].map((r) => r.blockedMs))),
  streamMsMedian: r0(median(results[d].map((r) => r.streamMs))),
  all: results[d].map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r0(v)]))),
}));
if (asJson) console.log(JSON.stringify(summary, null, 2));
else for (const s of summary) console.log(s);
