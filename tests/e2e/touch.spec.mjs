// A phone with a touch screen (375 px, touch events, taps): chatting, the chats drawer, and the
// explorer's timeline and graph answer taps: a tap on a memory selects it and opens its details,
// and a tap on empty space clears the selection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, lastReply, loadTestModel, setScript } from './flows.mjs';

const server = serveApp();
const PHONE = { width: 375, height: 740 };
const DETAIL = 'aside[aria-label="Memory details"]';

/** Where (in the page) a selected memory is drawn, from the view's own selection marker. */
async function selectedPoint(page, view) {
  if (view === 'timeline') {
    return page.evaluate(() => {
      const ring = document.querySelector('[data-testid="timeline-view"] circle.selected');
      const m = /translate\(([-\d.e]+),([-\d.e]+)\)/.exec(ring?.parentElement?.getAttribute('transform') ?? '');
      const box = document.querySelector('[data-testid="timeline-view"]').getBoundingClientRect();
      return m ? { x: box.left + Number(m[1]), y: box.top + Number(m[2]) } : null;
    });
  }
  return page.evaluate(() => {
    const label = document.querySelector('.labels .label.selected');
    const box = document.querySelector('canvas[aria-roledescription="memory graph"]').getBoundingClientRect();
    return label ? { x: box.left + Number(label.dataset.x), y: box.top + Number(label.dataset.y), id: label.dataset.id } : null;
  });
}

test('at 375 px with a touch screen: tap to chat, to open the chats drawer and to pick a chat', async () => {
  const h = await launch({ viewport: PHONE, touch: true });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await loadTestModel(page, server.url);
    await page.goto(`${server.url}/#/chat`);
    await setScript(page, { delayMs: 1 });
    await page.getByTestId('composer').tap();
    await page.keyboard.type('Tapping on a phone works');
    await page.getByTestId('send').tap();
    assert.equal(await lastReply(page), 'You said: Tapping on a phone works');
    await page.getByRole('button', { name: 'Show past sessions' }).tap();
    await page.getByTestId('new-chat').tap();
    await page.getByTestId('turn-user').first().waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Show past sessions' }).tap();
    await page.getByTestId('session-item').filter({ hasText: 'Tapping on a phone' }).tap();
    await page.getByTestId('turn-user').filter({ hasText: 'Tapping on a phone works' }).waitFor();
    assert.equal(await page.getByTestId('new-chat').isVisible(), false, 'picking a chat closed the drawer');
    await shot(page, 'touch-chat-375');
    // No hover looks on a touch screen: a phone leaves :hover on whatever was tapped last, so a tab
    // or button would stay highlighted as if chosen.
    assert.equal(await page.evaluate(() => matchMedia('(hover: none)').matches), true, 'the phone reports no hover');
    const navBg = () => page.getByRole('link', { name: 'Memory' }).evaluate((a) => getComputedStyle(a).backgroundColor);
    const plain = await navBg();
    await page.getByRole('link', { name: 'Memory' }).hover();
    assert.equal(await navBg(), plain, 'the Memory tab under the finger looks like the other tabs');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

for (const view of ['timeline', 'graph']) {
  test(`at 375 px with a touch screen: the ${view} selects and opens a tapped memory, and a tap on empty space clears the selection`, async () => {
    const h = await launch({ viewport: PHONE, touch: true });
    try {
      const { page } = h;
      await page.goto(`${server.url}/#/memory`);
      await page.getByTestId('load-demo').tap();
      await page.getByTestId('memory-count').waitFor();
      if (view === 'graph') {
        await page.getByRole('tab', { name: /graph/i }).tap();
        await page.getByText('Drag to pan, scroll to zoom').waitFor();
      }
      await page.waitForTimeout(800);
      const surface = view === 'timeline' ? page.getByTestId('timeline-view') : page.locator('canvas[aria-roledescription="memory graph"]');
      // Learn where a memory is drawn (keyboard selection), then clear the selection by tapping
      // empty space, and select it again by tapping it.
      await surface.focus();
      await page.keyboard.press('ArrowRight');
      await page.waitForTimeout(300);
      const at = await selectedPoint(page, view);
      assert.ok(at, 'a memory was selected by the keyboard');
      const box = await surface.boundingBox();
      await page.touchscreen.tap(box.x + 4, box.y + box.height - 4);
      await page.waitForFunction(() => !document.querySelector('circle.selected, .labels .label.selected'));
      await page.touchscreen.tap(at.x, at.y);
      await page.waitForFunction(() => document.querySelector('circle.selected, .labels .label.selected'));
      const again = await selectedPoint(page, view);
      assert.ok(Math.abs(again.x - at.x) < 2 && Math.abs(again.y - at.y) < 2, 'the tapped memory is selected');
      // One tap opens the tapped memory's details (no hidden double tap).
      await page.locator(`${DETAIL} h3`).waitFor();
      const opened = await page.locator(`${DETAIL} h3`).textContent();
      assert.ok(opened.trim().length > 0, 'the details of the tapped memory');
      // Its date and chat, spaced as a sentence ("12:19 AM · Running again").
      assert.match(await page.locator(`${DETAIL} .when`).textContent(), /(AM|PM)\s·\s\S/);
      await shot(page, `touch-${view}-375`);
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.dispose();
    }
  });
}
