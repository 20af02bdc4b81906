// Every view at a phone width (375 px) and on a desktop: nothing overflows sideways, and a
// screenshot of each is kept for review.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, say, startChat } from './flows.mjs';

const server = serveApp();

for (const viewport of [
  { width: 375, height: 740 },
  { width: 1280, height: 800 },
]) {
  test(`views fit at ${viewport.width} px`, async () => {
    const h = await launch({ viewport });
    try {
      const { page } = h;
      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      await startChat(page, server.url, {
        delayMs: 1,
        replies: [
          { when: 'plan', say: 'Here is a plan:\n\n1. **Rest** the knee for a week\n2. Try `swimming` instead\n\n> Small steps count.' },
        ],
      });
      await say(page, 'Can you help me plan my week? My knee hurts after running.');
      const name = `w${viewport.width}`;
      await shot(page, `${name}-chat`);
      assert.ok((await overflow()) <= 0, 'chat overflows sideways');
      for (const view of ['models', 'settings', 'evaluate', 'memory']) {
        await page.getByTestId(`nav-${view}`).click();
        await page.waitForTimeout(200);
        if (view === 'memory') {
          await page.getByTestId('load-demo').click();
          await page.getByTestId('memory-count').waitFor();
          await page.waitForTimeout(300);
        }
        await shot(page, `${name}-${view}`);
        assert.ok((await overflow()) <= 0, `${view} overflows sideways at ${viewport.width}px`);
      }
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.dispose();
    }
  });
}
