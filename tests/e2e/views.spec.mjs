// Every view at a phone width (375 px) and on a desktop: nothing overflows sideways, and a
// screenshot of each is kept for review.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, startServer } from './harness.mjs';
import { assertNoOffHost, lastReply, loadTestModel, send, setScript } from './flows.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

for (const viewport of [
  { width: 375, height: 740 },
  { width: 1280, height: 800 },
]) {
  test(`views fit at ${viewport.width} px`, async () => {
    const h = await launch({ viewport });
    try {
      const { page } = h;
      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      await page.goto(`${server.url}/`);
      await loadTestModel(page, server.url);
      await page.goto(`${server.url}/#/chat`);
      await setScript(page, {
        delayMs: 1,
        replies: [
          { when: 'plan', say: 'Here is a plan:\n\n1. **Rest** the knee for a week\n2. Try `swimming` instead\n\n> Small steps count.' },
        ],
      });
      await send(page, 'Can you help me plan my week? My knee hurts after running.');
      await lastReply(page);
      const name = `w${viewport.width}`;
      await shot(page, `${name}-chat`);
      assert.ok((await overflow()) <= 0, 'chat overflows sideways');
      for (const view of ['models', 'settings', 'memory']) {
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
