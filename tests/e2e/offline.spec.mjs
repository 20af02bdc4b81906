// After the first visit the app shell loads with no network at all (service worker).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, waitForServiceWorker } from './flows.mjs';

const server = serveApp();

test('the app opens offline after the first visit', async () => {
  const profile = tempProfile();
  const h = await launch({ profile, serviceWorker: true });
  try {
    const { page, context } = h;
    await page.goto(`${server.url}/`);
    await waitForServiceWorker(page);
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
