// The app never bricks, and Undo after deleting a memory works.
// - A store holding records that point at missing ones (as a race or an older version could have
//   left) starts, is repaired, and says so; the repair is in Settings.
// - A start that fails anyway (here: a database from a newer version) shows a screen that still
//   offers a backup and "Delete all my data", and deleting lets the app start again.
// - Undo after deleting a memory puts it back: in the store, in the view, and after a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, deleteOpenMemory, importLocomo, readDb } from './flows.mjs';

const server = serveApp();

const FIXTURE = resolve(import.meta.dirname, '../fixtures/locomo-mini.json');

/** Writes records straight into the app's database, past the app's own integrity rule. */
async function writeRaw(page, records) {
  await page.evaluate(
    (records) =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open('tealeaf');
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const tx = db.transaction(Object.keys(records), 'readwrite');
          for (const [store, values] of Object.entries(records)) for (const v of values) tx.objectStore(store).put(v);
          tx.oncomplete = () => {
            db.close();
            resolve();
          };
          tx.onerror = () => {
            db.close();
            reject(tx.error);
          };
        };
      }),
    records,
  );
}

const missingRefs = (db) => {
  const memories = new Set(db.memories.map((m) => m.id));
  const sessions = new Set(db.sessions.map((s) => s.id));
  return [
    ...db.edges.filter((e) => !memories.has(e.from) || !memories.has(e.to)).map((e) => `edge ${e.id}`),
    ...db.memories.filter((m) => m.supersededBy && !memories.has(m.supersededBy)).map((m) => `supersededBy of ${m.id}`),
    ...db.jobs.filter((j) => j.sessionId && !sessions.has(j.sessionId)).map((j) => `job ${j.id}`),
    ...db.segments.filter((s) => !sessions.has(s.sessionId)).map((s) => `segment ${s.id}`),
  ];
};

test('a store with dangling references starts, is repaired, and the repair is shown in Settings', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    await importLocomo(h.page, server.url, FIXTURE);
    const db = await readDb(h.page);
    const [a, b] = db.memories;
    await writeRaw(h.page, {
      edges: [{ id: 'edge:dangling', from: a.id, to: 'mem:deleted-meanwhile', relation: 'Cause', origin: 'model', createdAt: 1 }],
      memories: [{ ...b, supersededBy: 'mem:deleted-meanwhile' }],
      jobs: [
        {
          id: 'memorise:gone',
          kind: 'memorise',
          sessionId: 'session:gone',
          step: 'link',
          status: 'pending',
          attempts: 0,
          createdAt: 1,
          updatedAt: 1,
        },
      ],
    });
    await h.close();

    h = await launch({ profile });
    await h.page.goto(`${server.url}/#/memory`);
    await h.page.getByTestId('memory-count').waitFor();
    assert.equal(await h.page.getByTestId('fatal').count(), 0, 'the app started');
    await h.page
      .getByTestId('toast-info')
      .filter({ hasText: /repaired/ })
      .waitFor();
    const after = await readDb(h.page);
    assert.deepEqual(missingRefs(after), []);
    assert.equal(after.memories.length, db.memories.length, 'no memory was lost by the repair');
    await h.page.goto(`${server.url}/#/settings`);
    const log = h.page.getByTestId('repair-log');
    await log.waitFor();
    assert.match(await log.textContent(), /link/);
    await shot(h.page, 'settings-repair-log');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('when the start fails anyway, the failure screen offers a backup and delete-all, and delete-all recovers', async () => {
  const h = await launch();
  try {
    await h.page.goto(`${server.url}/#/chat`);
    // A database from a newer version of the app: this version cannot open it.
    await h.page.evaluate(async () => {
      const dbs = await indexedDB.databases();
      const current = dbs.find((d) => d.name === 'tealeaf');
      await new Promise((resolve, reject) => {
        const req = indexedDB.open('tealeaf', (current?.version ?? 1) + 50);
        req.onsuccess = () => {
          req.result.close();
          resolve();
        };
        req.onerror = () => reject(req.error);
      });
    });
    await h.page.reload();
    const fatal = h.page.getByTestId('fatal');
    await fatal.waitFor();
    await h.page.getByTestId('rescue-export').waitFor();
    await shot(h.page, 'fatal-rescue');
    await h.page.getByTestId('rescue-delete').click();
    await h.page.getByTestId('confirm-dialog').getByTestId('confirm-ok').click();
    await h.page.waitForLoadState('load');
    await h.page.getByTestId('composer').waitFor();
    assert.equal(await fatal.count(), 0);
    // The reloaded page says what happened.
    await h.page.getByTestId('toast-info').filter({ hasText: 'Everything was deleted. Downloaded models were kept.' }).waitFor();
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('Undo after deleting a memory puts it back, in the store and the view, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    const { page } = h;
    await importLocomo(page, server.url, FIXTURE);
    const before = await readDb(page);
    await page.getByRole('tab', { name: /list/i }).click();
    const first = page.locator('.tl button.item').first();
    const text = (await first.locator('.text').textContent()).trim();
    const victim = before.memories.find((m) => m.text === text);
    assert.ok(victim, `memory "${text}" is in the store`);
    const edgesOfVictim = before.edges
      .filter((e) => e.from === victim.id || e.to === victim.id)
      .map((e) => e.id)
      .sort();
    await first.click();
    await deleteOpenMemory(page);
    await page.getByTestId('undo-bar').waitFor();
    assert.equal(
      (await readDb(page)).memories.some((m) => m.id === victim.id),
      false,
      'deleted from the store',
    );
    await page.getByTestId('undo').click();
    await page.getByTestId('toast-info').filter({ hasText: /back/ }).waitFor();
    assert.equal(await page.getByTestId('toast-error').count(), 0, 'no error toast');
    const restored = await readDb(page);
    assert.deepEqual(
      restored.memories.find((m) => m.id === victim.id),
      victim,
    );
    assert.deepEqual(
      restored.edges
        .filter((e) => e.from === victim.id || e.to === victim.id)
        .map((e) => e.id)
        .sort(),
      edgesOfVictim,
    );
    assert.equal((await page.locator('.tl button.item').filter({ hasText: text }).count()) > 0, true, 'back in the list');
    await h.close();

    h = await launch({ profile });
    await h.page.goto(`${server.url}/#/memory`);
    await h.page.getByTestId('memory-count').waitFor();
    await h.page.getByRole('tab', { name: /list/i }).click();
    assert.ok(
      (await h.page.locator('.tl button.item .text').allTextContents()).some((t) => t.trim() === text),
      'still there after reload',
    );
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
