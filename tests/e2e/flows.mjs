// Steps shared by several e2e specs.
import assert from 'node:assert/strict';

export const TEST_MODEL = 'tealeaf-test-scripted';

export async function setScript(page, script) {
  await page.evaluate((s) => localStorage.setItem('tealeaf-test-script', JSON.stringify(s)), script);
}

export async function loadTestModel(page, url) {
  await page.goto(`${url}/#/models`);
  await page.getByTestId(`load-${TEST_MODEL}`).click();
  await page.getByTestId('model-status').filter({ hasText: /scripted/i }).waitFor({ timeout: 15_000 });
}

export async function send(page, text) {
  await page.getByTestId('composer').fill(text);
  await page.getByTestId('send').click();
}

/**
 * Waits until the last assistant turn has `status` and its text has stopped changing (the DOM may
 * flush the final words a frame after the status), then returns the text.
 */
export async function lastReply(page, { status = 'complete', timeout = 15_000 } = {}) {
  const handle = await page.waitForFunction(
    (want) => {
      const all = document.querySelectorAll('[data-testid="turn-assistant"]');
      const el = all[all.length - 1];
      if (!el || el.getAttribute('data-status') !== want) return false;
      const text = el.querySelector('[data-testid="reply-body"]')?.textContent?.trim() ?? '';
      const w = window;
      if (w.__lastReplySeen !== text) { w.__lastReplySeen = text; return false; }
      w.__lastReplySeen = undefined;
      return text;
    },
    status,
    { timeout, polling: 50 },
  );
  return handle.jsonValue();
}

export function assertNoOffHost(h) {
  assert.deepEqual(h.offHost, [], `requests left 127.0.0.1: ${h.offHost.join(', ')}`);
}
