// Explorer behaviours users expect, asserted by their effect: the timeline stays within the data
// when a memory near an edge is selected; its time axis reads in the units of its span; the graph
// names the selected memory and its neighbours and is navigable by keyboard; Enter opens the
// detail with focus in it and Escape brings focus back to the view on the same memory; the List
// view does not list a timeline twice. Screenshots at 1280 and 375 px.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, endAndRemember, say, startChat } from './flows.mjs';

const server = serveApp();

const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 375, height: 740 },
];
const DETAIL = 'aside[aria-label="Memory details"]';

async function loadDemo(page) {
  await page.goto(`${server.url}/#/memory`);
  await page.getByTestId('load-demo').click();
  await page.getByTestId('memory-count').waitFor();
  await page.getByTestId('timeline-view').waitFor();
  await page.waitForTimeout(300);
}

/** Where the first label matching `selector` points, once that place is the same over 5 frames. */
async function settledLabel(page, selector) {
  const handle = await page.waitForFunction(
    (sel) =>
      new Promise((resolve) => {
        const read = () => {
          const el = document.querySelector(sel);
          return el ? `${el.getAttribute('data-x')},${el.getAttribute('data-y')}` : null;
        };
        let last = read();
        let same = 0;
        const tick = () => {
          const now = read();
          same = now !== null && now === last ? same + 1 : 0;
          last = now;
          if (same >= 5) resolve(now);
          else if (performance.now() - t0 > 3000) resolve(false);
          else requestAnimationFrame(tick);
        };
        const t0 = performance.now();
        requestAnimationFrame(tick);
      }),
    selector,
  );
  const [x, y] = (await handle.jsonValue()).split(',').map(Number);
  return { x, y };
}

/** Screen position (in the chart) of the selected memory's ring, or null. */
function selectedXY(page) {
  return page.evaluate(() => {
    const ring = document.querySelector('[data-testid="timeline-view"] circle.selected');
    const m = /translate\(([-\d.e]+),([-\d.e]+)\)/.exec(ring?.parentElement?.getAttribute('transform') ?? '');
    return m ? { x: Number(m[1]), y: Number(m[2]) } : null;
  });
}

const axisLabels = (page) => page.locator('svg.axis text').allTextContents();
const activeInfo = (page) =>
  page.evaluate(() => {
    const a = document.activeElement;
    return {
      tag: a?.tagName.toLowerCase(),
      testid: a?.getAttribute('data-testid'),
      role: a?.getAttribute('aria-roledescription'),
      inDetail: !!a?.closest('aside[aria-label="Memory details"]'),
      text: a?.textContent?.trim() ?? '',
    };
  });

for (const viewport of VIEWPORTS) {
  const w = viewport.width;

  test(`timeline at ${w} px: a memory at the left edge is selected without panning into empty time; Enter and Escape move focus`, async () => {
    const h = await launch({ viewport });
    try {
      const { page } = h;
      await loadDemo(page);
      const chart = page.getByTestId('timeline-view');
      const width = await chart.evaluate((el) => el.clientWidth);
      await chart.focus();
      await page.keyboard.press('ArrowRight'); // the newest memory of the top thread
      await page.keyboard.press('Home'); // its oldest: at the left edge of the data
      const first = await selectedXY(page);
      assert.ok(first, 'a memory is selected');
      assert.ok(first.x >= 0 && first.x < 60, `unzoomed, the oldest memory stays at the left edge (x = ${first.x})`);

      // Zoomed in around the middle, the oldest memory brings the view to the data's start, no further.
      for (let i = 0; i < 3; i++) await page.keyboard.press('+');
      await page.keyboard.press('End');
      await page.waitForTimeout(100);
      await page.keyboard.press('Home');
      await page.waitForTimeout(100);
      const zoomed = await selectedXY(page);
      const k = 1.6 ** 3;
      assert.ok(
        Math.abs(zoomed.x - k * first.x) < 2,
        `the view stops at the first memory (x = ${zoomed.x}, expected ${k * first.x}), not centred at ${width / 2}`,
      );
      await shot(page, `explorer-keys-w${w}-timeline-left-edge`);

      // Enter: the detail opens with focus on the memory's text; Escape: back on the timeline.
      await page.keyboard.press('Enter');
      await page.locator(`${DETAIL} h3`).waitFor();
      const inPanel = await activeInfo(page);
      assert.equal(inPanel.inDetail, true, 'focus moved into the detail panel');
      assert.equal(inPanel.tag, 'h3');
      const announced = await page.locator('.tv .sr-only[aria-live]').textContent();
      assert.ok(announced.startsWith(inPanel.text), `the panel shows the selected memory ("${inPanel.text}")`);
      await shot(page, `explorer-keys-w${w}-timeline-detail-focus`);
      await page.keyboard.press('Escape');
      await page.locator(DETAIL).waitFor({ state: 'detached' });
      assert.equal((await activeInfo(page)).testid, 'timeline-view', 'focus is back on the timeline');
      assert.deepEqual(await selectedXY(page), zoomed, 'on the same memory');
      await page.keyboard.press('ArrowRight');
      assert.ok((await selectedXY(page)).x > zoomed.x, 'and the arrow keys go on from there');
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.dispose();
    }
  });

  test(`graph at ${w} px: keys move between memories, the selection and its neighbours are named, Enter and Escape move focus`, async () => {
    const h = await launch({ viewport });
    try {
      const { page } = h;
      await loadDemo(page);
      await page.getByRole('tab', { name: /graph/i }).click();
      await page.getByText('Drag to pan, scroll to zoom').waitFor();
      await page.waitForTimeout(500);
      const canvas = page.locator('canvas[aria-roledescription="memory graph"]');
      await canvas.focus();
      await page.keyboard.press('ArrowRight'); // nothing selected: the newest memory
      const selected = page.locator('.labels .label.selected');
      await selected.waitFor();
      const a = {
        id: await selected.getAttribute('data-id'),
        x: Number(await selected.getAttribute('data-x')),
        text: (await selected.textContent()).trim(),
      };
      const names = await page.locator('.labels .label').count();
      assert.ok(names >= 2, `the selected memory and its neighbours are named (${names} labels)`);
      const announce = await page.locator('.gv .sr-only[aria-live]').textContent();
      // The label is the memory's text, or whole words of it without its lead ("You said:").
      assert.ok(
        announce.toLowerCase().includes(a.text.replace(/…$/, '').toLowerCase()),
        `the label is the memory's text ("${a.text}" / "${announce}")`,
      );

      await page.keyboard.press('ArrowLeft');
      await page.waitForFunction((id) => document.querySelector('.labels .label.selected')?.getAttribute('data-id') !== id, a.id);
      const b = { id: await selected.getAttribute('data-id'), x: Number(await selected.getAttribute('data-x')) };
      assert.ok(b.x < a.x, `ArrowLeft moved to a memory further left (${b.x} < ${a.x})`);
      await shot(page, `explorer-keys-w${w}-graph-labels`);

      await page.keyboard.press('Enter');
      await page.locator(`${DETAIL} h3`).waitFor();
      const inPanel = await activeInfo(page);
      assert.equal(inPanel.inDetail, true, 'focus moved into the detail panel');
      await shot(page, `explorer-keys-w${w}-graph-detail-focus`);
      await page.keyboard.press('Escape');
      await page.locator(DETAIL).waitFor({ state: 'detached' });
      assert.equal((await activeInfo(page)).role, 'memory graph', 'focus is back on the graph');
      assert.equal(await selected.getAttribute('data-id'), b.id, 'on the same memory');

      // Hover names a memory too (its tip). Closing the panel resized the stage and the graph
      // refits on the next frame: read the neighbour's place once it has stopped moving.
      const box = await canvas.boundingBox();
      const at = await settledLabel(page, '.labels .label:not(.selected)');
      await page.mouse.move(box.x + at.x, box.y + at.y);
      await page.locator('.stage .tip').waitFor();
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.dispose();
    }
  });
}

test('the List view lists a timeline once: not again when it is a whole thread already shown', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await loadDemo(page);
    await page.getByRole('tab', { name: /list/i }).click();
    // Every thread item, in order; a selected memory's timelines must not repeat one of them.
    const threads = page.locator('.list > .tl');
    const count = await threads.count();
    for (let i = 0; i < count; i++) {
      const items = threads.nth(i).locator('button.item');
      if ((await items.count()) < 2) continue;
      await items.first().click();
      await page.locator(`${DETAIL} h3`).waitFor();
      const lists = await page.evaluate(() =>
        [...document.querySelectorAll('.list > .tl')].map((s) => ({
          title: s.querySelector('h4')?.textContent ?? '',
          ids: [...s.querySelectorAll('button.item .text')].map((t) => t.textContent),
        })),
      );
      const timelines = lists.filter((l) => /^Timeline /.test(l.title));
      const shown = lists.filter((l) => !/^Timeline /.test(l.title));
      const key = (l) => l.ids.join('\u0000');
      for (const t of timelines) {
        assert.ok(!shown.some((s) => key(s).includes(key(t))), `"${t.title}" (${t.ids.length} memories) repeats a thread`);
        assert.equal(timelines.filter((o) => key(o) === key(t)).length, 1, 'no timeline twice');
      }
    }
    await shot(page, 'explorer-keys-w1280-list');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

for (const viewport of VIEWPORTS) {
  test(`time axis at ${viewport.width} px: a first chat seconds long reads in hours, minutes and seconds`, async () => {
    const h = await launch({ viewport });
    try {
      const { page } = h;
      await startChat(page, server.url, { delayMs: 2 }, { embedder: true });
      await say(page, 'I adopted a puppy named Biscuit last week');
      await page.waitForTimeout(2500);
      await say(page, 'Biscuit loves chasing the red ball in the park');
      await endAndRemember(page);
      await page.getByTestId('nav-memory').click();
      await page.getByTestId('timeline-view').waitFor();
      await page.waitForTimeout(300);
      const labels = await axisLabels(page);
      assert.ok(labels.length >= 1, 'the axis has labels');
      for (const l of labels) {
        assert.doesNotMatch(l, /^[:.]|\.\d{3}|^\d+\s?[AP]M$/, `no d3 fragment like ":08" or ".500" ("${l}")`);
        assert.match(l, /\d{1,2}:\d{2}:\d{2}/, `a time of day with seconds ("${l}")`);
      }
      assert.match(labels[0], /[A-Z][a-z]{2} \d{1,2}/, `the first label says the day ("${labels[0]}")`);
      await shot(page, `explorer-keys-w${viewport.width}-axis-seconds`);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  });
}

test('time axis of months of memories reads in days and months, with the year once', async () => {
  const h = await launch();
  try {
    await loadDemo(h.page);
    const labels = await axisLabels(h.page);
    assert.ok(labels.length >= 4);
    assert.match(labels[0], /\d{4}$/, `the first label has the year ("${labels[0]}")`);
    for (const l of labels.slice(1)) assert.match(l, /^[A-Z][a-z]{2}( \d{1,2})?(, \d{4}| \d{4})?$/, `a date or month ("${l}")`);
  } finally {
    await h.dispose();
  }
});
