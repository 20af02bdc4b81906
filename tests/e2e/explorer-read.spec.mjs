// An explorer you can read and click. After importing a history of 23 chats: the
// timeline's labels do not overlap and none is a word cut short; a click on a label (not its dot)
// opens that memory; the graph names memories before anything is selected; searching "cat" lists
// "my cat Miso" first and does not call "relocation" a word match; after a reload the same holds.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, shot, startServer, tempProfile } from './harness.mjs';
import { assertNoOffHost, frames, graphLaidOut, loadTestModel, pollDb, setScript } from './flows.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
  rmSync(profile, { recursive: true, force: true });
});

/** What the user said in each chat: 23 chats over half a year, some on the same days. */
const CHATS = [
  ['Job offer', 'They offered 66k plus relocation to Lisbon.'],
  ['Adopting a cat', 'I adopted my cat Miso from the shelter last week.'],
  ['Marathon plan', 'I am training for a half marathon in October.'],
  ['Sister visiting', 'My sister Ana is visiting in May with her two kids.'],
  ['Cello lessons', 'I started cello lessons with a teacher called Mrs Okafor.'],
  ['Tomatoes', 'My tomato plants finally have flowers on the balcony.'],
  ['Sourdough', 'My sourdough starter smells like nail polish remover.'],
  ['Reading', 'I am reading a long novel about a lighthouse keeper.'],
  ['Knee', 'My left knee hurts after long runs downhill.'],
  ['Spanish', 'I practise Spanish every morning on the train to work.'],
  ['Apartment', 'We are looking for a bigger apartment near the river.'],
  ['Birthday', 'My birthday dinner is at the Greek place on Friday.'],
  ['Coffee', 'I switched from espresso to green tea in the afternoons.'],
  ['Bike', 'I bought a second-hand road bike with a steel frame.'],
  ['Podcast', 'I listen to a history podcast about the Roman navy.'],
  ['Garden', 'The neighbours asked me to water their garden in August.'],
  ['Photography', 'I started taking film photos with my grandfather’s camera.'],
  ['Miso food', 'Miso only eats the salmon food now, and the kittens next door love it.'],
  ['Team lead', 'I was asked to lead the payments team from next quarter.'],
  ['Chess', 'I play chess online with my brother every Sunday evening.'],
  ['Vacation', 'We booked a week of hiking in the Dolomites for September.'],
  ['Piano', 'I sold the old piano to a school down the street.'],
  ['Recipe', 'I want to learn to bake Portuguese custard tarts at home.'],
];

function historyFile() {
  const day = 86_400_000;
  const start = Date.UTC(2024, 0, 8, 9);
  const conversations = CHATS.map(([name, said], i) => {
    const t = start + Math.floor(i * 7.5) * day + (i % 3) * 3_600_000;
    const at = (ms) => new Date(ms).toISOString();
    return {
      uuid: `c0000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      name,
      created_at: at(t),
      updated_at: at(t + 600_000),
      account: { uuid: 'acc-1' },
      chat_messages: [
        {
          uuid: `u${i}`,
          text: said,
          content: [{ type: 'text', text: said }],
          sender: 'human',
          created_at: at(t + 60_000),
          updated_at: at(t + 60_000),
          attachments: [],
          files: [],
        },
        {
          uuid: `a${i}`,
          text: 'Thanks for telling me.',
          content: [{ type: 'text', text: 'Thanks for telling me.' }],
          sender: 'assistant',
          created_at: at(t + 90_000),
          updated_at: at(t + 90_000),
          attachments: [],
          files: [],
        },
      ],
    };
  });
  const file = join(tempProfile(), 'conversations.json');
  writeFileSync(file, JSON.stringify(conversations));
  return file;
}

const overlaps = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The timeline's labels as drawn: id, text and box on the page. */
async function timelineLabels(page) {
  return page.$$eval('[data-testid="timeline-view"] svg text.label', (els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      return { id: el.getAttribute('data-id'), text: el.textContent, x: r.x, y: r.y, width: r.width, height: r.height };
    }),
  );
}

/** No two boxes overlap; no label is a word cut short (a "…" after a whole word of its memory only). */
function assertReadable(labels, storedTexts, where) {
  for (const [i, a] of labels.entries())
    for (const b of labels.slice(i + 1)) assert.ok(!overlaps(a, b), `${where}: "${a.text}" overlaps "${b.text}"`);
  for (const l of labels) {
    if (!l.text.endsWith('…')) continue;
    const body = l.text.slice(0, -1).replace(/^You said:\s*/, '');
    const whole = new RegExp(`${escape(body)}(?=[\\s.,;:!?’']|$)`, 'i');
    assert.ok(
      storedTexts.some((t) => whole.test(t)),
      `${where}: "${l.text}" is not whole words of a memory`,
    );
  }
}

// One history, imported and memorised once; each test opens it in a fresh browser on that profile.
const profile = tempProfile();
let db;
let shown = [];
before(async () => {
  const h = await launch({ profile, viewport: { width: 1280, height: 800 } });
  try {
    const { page } = h;
    await loadTestModel(page, server.url);
    await setScript(page, { delayMs: 2 });
    await page.goto(`${server.url}/#/memory`);
    await page.getByTestId('import-history').first().setInputFiles(historyFile());
    await page.getByTestId('import-result').filter({ hasText: 'Imported 23 chats' }).waitFor();
    db = await pollDb(page, (d) => d.jobs.length === 23 && d.jobs.every((j) => j.status === 'done'), {
      what: 'memorised history',
      timeout: 120_000,
    });
    assert.equal(db.memories.length, 23, db.memories.map((m) => m.text).join(' | '));
    // The texts as the explorer words them ("You ...", voice.ts), read from its List tab.
    await page.getByRole('tab', { name: /list/i }).click();
    await page.locator('.tl button.item .text').nth(22).waitFor();
    shown = (await page.locator('.tl button.item .text').allTextContents()).map((t) => t.trim());
    assertNoOffHost(h);
  } finally {
    await h.close();
  }
});

/** Opens the Memory view on the imported history (the timeline drawn). */
async function open(width = 1280) {
  const h = await launch({ profile, viewport: { width, height: 800 } });
  try {
    await h.page.goto(`${server.url}/#/memory`);
    await h.page.getByTestId('memory-count').filter({ hasText: '23 memories' }).waitFor();
    await h.page.locator('[data-testid="timeline-view"] svg g[transform]').first().waitFor();
    await frames(h.page);
    return h;
  } catch (e) {
    await h.close();
    throw e;
  }
}

const stored = () => [...db.memories.map((m) => m.text), ...shown];
const said = (id) => db.memories.find((m) => m.id === id)?.text.replace(/^The user said:\s*/, '');
const detailTitle = (page) => page.locator('aside[aria-label="Memory details"] h3').first();

test('timeline at 1280 px: many labels, none over another, none a word cut short (also after a reload)', async () => {
  for (let round = 0; round < 2; round++) {
    const h = await open();
    try {
      const labels = await timelineLabels(h.page);
      assert.ok(labels.length >= 8, `only ${labels.length} labels: ${labels.map((l) => l.text).join(' | ')}`);
      assertReadable(labels, stored(), `timeline, round ${round}`);
      if (round === 0) await shot(h.page, 'explread-timeline-1280-light');
      assert.deepEqual(h.errors, []);
    } finally {
      await h.close();
    }
  }
});

test('a click on a label, away from its dot, opens that memory; so does Enter; the keyboard shows the whole text', async () => {
  const h = await open();
  try {
    const { page } = h;
    const labels = await timelineLabels(page);
    const label = labels.find((l) => l.width > 60);
    assert.ok(label, `a label at least 60 px wide among ${JSON.stringify(labels)}`);
    assert.ok(said(label.id), `the label names a stored memory (${label.id})`);
    await page.mouse.click(label.x + label.width - 6, label.y + label.height / 2);
    await detailTitle(page)
      .filter({ hasText: said(label.id) })
      .waitFor();
    // Closed again, Enter on the selected memory opens it; its whole text shows as on hover.
    await page.keyboard.press('Escape');
    await detailTitle(page).waitFor({ state: 'detached' });
    await page.getByTestId('timeline-view').press('ArrowRight');
    await page.getByTestId('memory-tip').waitFor();
    const tip = (await page.getByTestId('memory-tip').textContent()).trim();
    assert.ok(
      stored().some((t) => tip.includes(t.replace(/^The user said:\s*/, ''))),
      tip,
    );
    await page.getByTestId('timeline-view').press('Enter');
    await detailTitle(page).waitFor();
    assert.deepEqual(h.errors, []);
  } finally {
    await h.close();
  }
});

test('the graph names memories before anything is selected, none over another', async () => {
  const h = await open();
  try {
    const { page } = h;
    await page.getByRole('tab', { name: /graph/i }).click();
    await graphLaidOut(page);
    const graphLabels = await page.$$eval('.stage .labels .label', (els) =>
      els.map((el) => {
        const r = el.getBoundingClientRect();
        return { text: el.textContent, x: r.x, y: r.y, width: r.width, height: r.height };
      }),
    );
    assert.ok(graphLabels.length >= 3, `graph labels with no selection: ${JSON.stringify(graphLabels)}`);
    assertReadable(graphLabels, stored(), 'graph');
    await shot(page, 'explread-graph-1280-light');
    assert.deepEqual(h.errors, []);
  } finally {
    await h.close();
  }
});

test('search "cat": "my cat Miso" listed first, "relocation" no word match, and the count says what it counts', async () => {
  const h = await open();
  try {
    const { page } = h;
    await page.getByRole('searchbox', { name: 'Search memories' }).first().fill('cat');
    await page.getByTestId('search-result').first().waitFor();
    assert.equal(
      await page.getByTestId('search-count').textContent(),
      '1 whole-word match · searched by words only (the memory search model is not loaded)',
    );
    const results = await page.getByTestId('search-result').evaluateAll((els) => els.map((e) => [e.dataset.match, e.textContent]));
    assert.match(results[0][1], /my cat Miso/, JSON.stringify(results));
    assert.deepEqual(
      results.map(([kind]) => kind),
      ['word'],
    );
    assert.ok(!results.some(([, text]) => /relocation/.test(text)), JSON.stringify(results));
    await shot(page, 'explread-search-1280');
    await page.getByTestId('search-result').first().click();
    await detailTitle(page).filter({ hasText: 'my cat Miso' }).waitFor();
    assert.deepEqual(h.errors, []);
  } finally {
    await h.close();
  }
});

test('screenshots: timeline and graph at 1280 and 375 px, light and dark', async () => {
  for (const width of [1280, 375]) {
    const h = await open(width);
    try {
      const { page } = h;
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.getByRole('tab', { name: /timeline/i }).click();
        await page.locator('[data-testid="timeline-view"] svg g[transform]').first().waitFor();
        await frames(page);
        assertReadable(await timelineLabels(page), stored(), `timeline ${width} ${scheme}`);
        await shot(page, `explread-timeline-${width}-${scheme}`);
        await page.getByRole('tab', { name: /graph/i }).click();
        await graphLaidOut(page);
        await shot(page, `explread-graph-${width}-${scheme}`);
      }
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.close();
    }
  }
});
