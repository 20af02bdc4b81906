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

/** Sends a message and waits for *its* reply (lastReply alone may still see the previous one). */
export async function say(page, text) {
  const before = await page.getByTestId('turn-assistant').count();
  await send(page, text);
  await page.getByTestId('turn-assistant').nth(before).waitFor();
  return lastReply(page);
}

const ALL_STORES = ['sessions', 'turns', 'memories', 'edges', 'segments', 'jobs', 'vectors'];

/**
 * Reads whole object stores through a second connection of the page's own origin. Vectors come
 * back as {unitId, modelId, length} (which unit has one, not the numbers).
 */
export async function readDb(page, names = ALL_STORES) {
  return page.evaluate(
    (names) =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open('tealeaf');
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const tx = db.transaction(names, 'readonly');
          const out = {};
          for (const n of names) {
            const r = tx.objectStore(n).getAll();
            r.onsuccess = () => {
              out[n] = n === 'vectors' ? r.result.map((v) => ({ unitId: v.unitId, modelId: v.modelId, length: v.vector.length })) : r.result;
            };
          }
          tx.oncomplete = () => { db.close(); resolve(out); };
          tx.onerror = () => { db.close(); reject(tx.error); };
        };
      }),
    names,
  );
}

/** Polls the database until `predicate` holds; the error names what was awaited and the jobs. */
export async function pollDb(page, predicate, { timeout = 30_000, what = 'state' } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const db = await readDb(page);
    if (predicate(db)) return db;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: jobs ${JSON.stringify(db.jobs.map((j) => [j.sessionId, j.step, j.status, j.state?.linked]))}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
