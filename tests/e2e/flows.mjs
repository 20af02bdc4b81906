// Steps shared by several e2e specs.
import assert from 'node:assert/strict';
import { PATIENCE_MS } from './harness.mjs';

export const TEST_MODEL = 'tealeaf-test-scripted';

export async function setScript(page, script) {
  await page.evaluate((s) => localStorage.setItem('tealeaf-test-script', JSON.stringify(s)), script);
}

/**
 * Sets `script` with its `holdJson` entries (tests/support/scripted-model.ts): JSON calls held once
 * begun until a script without them is set. Their marks from before are cleared first.
 */
export async function setScriptHolding(page, script) {
  await page.evaluate((s) => {
    for (const e of s.holdJson ?? []) localStorage.removeItem(`tealeaf-test-held:${e}`);
    localStorage.setItem('tealeaf-test-script', JSON.stringify(s));
  }, script);
}

/** Waits for `n` animation frames of the page: what a frame draws is drawn, counted in frames, not in ms. */
export async function frames(page, n = 2) {
  await page.evaluate(async (k) => {
    for (let i = 0; i < k; i++) await new Promise((r) => requestAnimationFrame(r));
  }, n);
}

/** The graph's layout has settled and been fitted (GraphView's data-laid-out), and drawn. */
export async function graphLaidOut(page) {
  await page.locator('.stage[data-laid-out="true"]').waitFor({ state: 'attached' });
  await frames(page);
}

/** Waits until the scripted model holds the JSON call `entry` names ("<title>" or "<title>#<n>"): it is out. */
export async function held(page, entry) {
  await page.waitForFunction((e) => localStorage.getItem(`tealeaf-test-held:${e}`) !== null, entry);
}

/** In the Models view already shown: the user loads the scripted test model; resolves once it is ready. */
export async function pickTestModel(page) {
  await page.getByTestId(`load-${TEST_MODEL}`).click();
  await page
    .getByTestId('model-status')
    .filter({ hasText: /scripted/i })
    .waitFor();
}

/** The user opens the Models view and loads the scripted test model (pending jobs then run). */
export async function loadTestModel(page, url) {
  await page.goto(`${url}/#/models`);
  await pickTestModel(page);
}

/**
 * The usual start of a chat test: open the app, load the scripted test model (and, with
 * `embedder`, the test embedding model), go to the chat and give the model its `script`.
 */
export async function startChat(page, url, script, { embedder = false } = {}) {
  await page.goto(`${url}/`);
  await loadTestModel(page, url);
  if (embedder) await loadTestEmbedder(page);
  await page.goto(`${url}/#/chat`);
  await setScript(page, script);
}

export async function send(page, text) {
  await page.getByTestId('composer').fill(text);
  await page.getByTestId('send').click();
}

/**
 * Waits until the last assistant turn has `status` and its text has stopped changing (the DOM may
 * flush the final words a frame after the status), then returns the text. Looked at every frame,
 * and unchanged for three frames: counted in frames, which a busy machine slows as it slows the
 * flush (two looks 50 ms apart could both fall before a late frame).
 */
export async function lastReply(page, { status = 'complete', timeout = PATIENCE_MS } = {}) {
  const handle = await page.waitForFunction(
    (want) => {
      const all = document.querySelectorAll('[data-testid="turn-assistant"]');
      const el = all[all.length - 1];
      const w = window;
      if (!el || el.getAttribute('data-status') !== want) {
        w.__lastReplySeen = undefined;
        return false;
      }
      const text = el.querySelector('[data-testid="reply-body"]')?.textContent?.trim() ?? '';
      if (w.__lastReplySeen?.text !== text) {
        w.__lastReplySeen = { text, frames: 0 };
        return false;
      }
      if (++w.__lastReplySeen.frames < 3) return false;
      w.__lastReplySeen = undefined;
      // Wrapped: an empty reply (stopped before its first word) is '', which would read as "not yet".
      return [text];
    },
    status,
    { timeout, polling: 'raf' },
  );
  return (await handle.jsonValue())[0];
}

/**
 * Answers the app's in-page confirmation (src/app/dialog): OK or Cancel, optionally ticking its
 * checkbox first. Returns the dialog's text. Fails if a native dialog would have been needed.
 */
export async function answerDialog(page, { ok = true, check = false, timeout = PATIENCE_MS } = {}) {
  const dialog = page.getByTestId('confirm-dialog');
  await dialog.waitFor({ timeout });
  const text = (await dialog.textContent()).replace(/\s+/g, ' ').trim();
  if (check) await dialog.getByTestId('confirm-check').check();
  await dialog.getByTestId(ok ? 'confirm-ok' : 'confirm-cancel').click();
  await dialog.waitFor({ state: 'detached', timeout });
  return text;
}

export function assertNoOffHost(h) {
  assert.deepEqual(h.offHost, [], `requests left 127.0.0.1: ${h.offHost.join(', ')}`);
}

/**
 * Sends a message and waits for *its* reply (lastReply alone may still see the previous one), and
 * for the chat to be idle again (Send back in place of Stop: the reply's last save is done).
 */
export async function say(page, text) {
  const before = await page.getByTestId('turn-assistant').count();
  await send(page, text);
  await page.getByTestId('turn-assistant').nth(before).waitFor();
  const reply = await lastReply(page);
  await page.getByTestId('send').waitFor({ state: 'attached' });
  return reply;
}

/** The user starts a new chat; resolves once the previous chat's turns are gone. */
export async function newChat(page) {
  await page.getByTestId('new-chat').click();
  await page.getByTestId('turn-assistant').first().waitFor({ state: 'detached' });
}

/** The user ends the open chat and waits until it is memorised ("remembered"). */
export async function endAndRemember(page) {
  await page.getByTestId('end-session').click();
  await page.getByTestId('session-status').filter({ hasText: 'remembered' }).waitFor();
}

/**
 * The user shows the demo from the Memory view: `button` is 'load-demo' (an empty memory) or
 * 'open-demo' (beside the user's own memories). Resolves once the demo banner is up.
 */
export async function openDemo(page, { button = 'load-demo', timeout = PATIENCE_MS } = {}) {
  await page.getByTestId('nav-memory').click();
  await page.getByTestId(button).click();
  await page.getByTestId('demo-banner').waitFor({ timeout });
}

/** The user leaves the demo (the page reloads into the user's own space). */
export async function leaveDemo(page) {
  await page.getByTestId('leave-demo').click();
  await page.waitForLoadState('load');
}

/** The user imports a LoCoMo-format conversation from the Memory view and waits until it is done. */
export async function importLocomo(page, url, file) {
  await page.goto(`${url}/#/memory`);
  await page.getByTestId('import-locomo').first().setInputFiles(file);
  await page.getByTestId('memory-count').waitFor({ timeout: 120_000 });
  await page.getByTestId('memory-busy').waitFor({ state: 'detached', timeout: 120_000 });
}

/** The user downloads a backup from Settings into `file`; returns `file`. */
export async function exportBackup(page, file) {
  await page.getByTestId('nav-settings').click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
  await download.saveAs(file);
  return file;
}

/**
 * In Settings (already shown): the user picks a backup file and starts its import, in `mode`
 * ('replace' asks first; the caller answers) or the view's default (merge).
 */
export async function startImport(page, file, { mode } = {}) {
  await page.getByTestId('import-file').setInputFiles(file);
  if (mode) await page.getByTestId('import-mode').selectOption(mode);
  await page.getByTestId('import-run').click();
}

/**
 * Records the message of every native dialog (alert, confirm, prompt) the page opens, dismissing
 * each: a test asserts the returned array stays empty.
 */
export function collectDialogs(page) {
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return dialogs;
}

/** The first visit: waits until the service worker controls the page (its precache is complete). */
export async function waitForServiceWorker(page) {
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  await page.reload();
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
}

const ALL_STORES = ['sessions', 'turns', 'memories', 'edges', 'segments', 'jobs', 'vectors'];

/**
 * Reads whole object stores through a second connection of the page's own origin. Vectors come
 * back as {unitId, modelId, length} (which unit has one, not the numbers). By default the database
 * the page shows (the demo's while it shows the demo); `db` names one.
 */
export async function readDb(page, names = ALL_STORES, { db } = {}) {
  return page.evaluate(
    ([names, name]) =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open(name ?? (sessionStorage.getItem('tealeaf-space') === 'demo' ? 'tealeaf-demo' : 'tealeaf'));
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const tx = db.transaction(names, 'readonly');
          const out = {};
          for (const n of names) {
            const r = tx.objectStore(n).getAll();
            r.onsuccess = () => {
              out[n] =
                n === 'vectors' ? r.result.map((v) => ({ unitId: v.unitId, modelId: v.modelId, length: v.vector.length })) : r.result;
            };
          }
          tx.oncomplete = () => {
            db.close();
            resolve(out);
          };
          tx.onerror = () => {
            db.close();
            reject(tx.error);
          };
        };
      }),
    [names, db],
  );
}

/**
 * Reads the database again and again until `predicate` holds. `timeout` is a safety net, not a
 * time the app must keep: the error names what was awaited and the jobs.
 */
export async function pollDb(page, predicate, { timeout = PATIENCE_MS, what = 'state', db: name } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const db = await readDb(page, ALL_STORES, { db: name });
    if (predicate(db)) return db;
    if (Date.now() > end)
      throw new Error(
        `timed out waiting for ${what}: jobs ${JSON.stringify(db.jobs.map((j) => [j.sessionId, j.step, j.status, j.state?.linked]))}`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---- Added for tests/e2e/trust-matrix.spec.mjs: UI steps a user takes on memories. ----

const DETAIL = 'aside[aria-label="Memory details"]';

/**
 * Opens the Memory view afresh (the view reads the live graph when it mounts), shows the List tab
 * with every thread expanded, and selects the memory whose text contains `text`.
 */
export async function openMemory(page, text, { timeout = PATIENCE_MS } = {}) {
  await page.getByTestId('nav-chat').click();
  await page.getByTestId('nav-memory').click();
  await page.getByRole('tab', { name: /list/i }).click({ timeout });
  const item = page.locator('.tl button.item').filter({ hasText: text }).first();
  // The list is drawn (its folded threads with it) before it is looked at: a look before the first
  // item is there would find nothing to unfold.
  await page.locator('.tl button.item').first().waitFor({ timeout });
  if (!(await item.isVisible())) {
    // Long threads and many threads are folded: unfold them all.
    for (let i = 0; i < 20; i++) {
      const more = page.locator('button.more').filter({ hasText: /Show all|Show more/ });
      if ((await more.count()) === 0) break;
      await more.first().click();
    }
  }
  await item.click({ timeout });
  await page.locator(`${DETAIL} h3`).filter({ hasText: text }).first().waitFor({ timeout });
}

/** Deletes the selected memory through its Delete button and the confirmation. */
export async function deleteOpenMemory(page) {
  await page.locator(DETAIL).getByRole('button', { name: 'Delete', exact: true }).first().click();
  await page.locator(`${DETAIL} .confirm`).getByRole('button', { name: 'Delete' }).click();
}

/** Replaces the selected memory's text through Edit / Save; resolves once the panel shows it. */
export async function editOpenMemory(page, text) {
  await page.locator(DETAIL).getByRole('button', { name: 'Edit', exact: true }).click();
  await page.locator(`${DETAIL} textarea`).fill(text);
  await page.locator(DETAIL).getByRole('button', { name: 'Save', exact: true }).click();
  await page.locator(`${DETAIL} h3`).filter({ hasText: text }).first().waitFor();
}

/** The relation picker of one edge in the selected memory's detail panel. */
export function edgeSelect(page, edgeId) {
  return page.locator(`${DETAIL} select[id="rel-${edgeId.replace(/["\\]/g, '\\$&')}"]`);
}

/** Sets an edge's relation (a value of RELATIONS) or, with null, removes the link (confirmed). */
export async function setEdgeRelation(page, edgeId, relation) {
  const select = edgeSelect(page, edgeId);
  if (relation === null) {
    await select.selectOption('__delete');
    await page.locator(`${DETAIL} .confirm`).getByRole('button', { name: 'Remove' }).click();
    await select.waitFor({ state: 'detached' });
  } else {
    await select.selectOption(relation);
  }
}

/** Loads the test embedding model from the Models view unless it is already ready (or loading). */
export async function loadTestEmbedder(page, { timeout = PATIENCE_MS } = {}) {
  const state = page.getByTestId('embedder-state');
  await state.waitFor({ timeout });
  const button = page.getByTestId('load-embedder');
  if (!/Ready|Loading/.test(await state.textContent()) && (await button.count()) > 0) await button.click();
  await state.filter({ hasText: 'Ready' }).waitFor({ timeout });
}
