// After the first visit the app shell loads with no network at all (service worker).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, startServer, tempProfile } from './harness.mjs';
import { assertNoOffHost } from './flows.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

test('the app opens offline after the first visit', async () => {
  const profile = tempProfile();
  const h = await launch({ profile });
  try {
    const { page, context } = h;
    await page.goto(`${server.url}/`);
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
    });
    // Wait until the worker controls the page, so the precache is complete.
    await page.reload();
    await page.waitForFunction(() => !!navigator.serviceWorker.controller, null, { timeout: 20_000 });
    await context.setOffline(true);
    await page.reload();
    await page.getByTestId('nav-chat').waitFor();
    await page.getByTestId('composer').waitFor();
    await shot(page, 'offline-shell');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
