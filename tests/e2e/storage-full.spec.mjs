// A full disk is a state, not a crash. The page's IndexedDB writes are
// refused as Chromium refuses them when the quota is used up (a QuotaExceededError DOMException),
// switched on and off through localStorage 'test-disk-full'. Start-up writes that are refused leave
// the app running with a banner and Settings reachable; a message that cannot be saved stays in
// the composer with the storage message, and is sent once there is room.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, lastReply, pollDb, readDb, say, startChat } from './flows.mjs';

const server = serveApp();

/** Installed before the app: while the flag is set, every put or add into Tealeaf's databases throws. */
const FULL_DISK = () => {
  for (const name of ['put', 'add']) {
    const original = IDBObjectStore.prototype[name];
    IDBObjectStore.prototype[name] = function (...args) {
      if (localStorage.getItem('test-disk-full') === '1' && this.transaction.db.name.startsWith('tealeaf'))
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return original.apply(this, args);
    };
  }
};

const diskFull = (page, full) =>
  page.evaluate((on) => (on ? localStorage.setItem('test-disk-full', '1') : localStorage.removeItem('test-disk-full')), full);

/** Moves every open session's last activity back by `ms` (past the idle gap), through a second connection. */
async function ageOpenSessions(page, ms) {
  await page.evaluate(
    (ms) =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open('tealeaf');
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const tx = db.transaction('sessions', 'readwrite');
          const store = tx.objectStore('sessions');
          const all = store.getAll();
          all.onsuccess = () => {
            for (const s of all.result) if (s.status === 'open') store.put({ ...s, lastActivityAt: s.lastActivityAt - ms });
          };
          tx.oncomplete = () => {
            db.close();
            resolve();
          };
          tx.onerror = () => reject(tx.error);
        };
      }),
    ms,
  );
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical axe-core violations on the page as it is now (as tests/e2e/a11y.spec.mjs). */
async function audit(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

const BANNER = /storage is full, so Tealeaf cannot save anything new/;
const STORAGE_MESSAGE = /no storage space left for Tealeaf/;

test('a full disk at start-up: the app starts with a banner and Settings opens; the chat past the idle gap ends once there is room', async () => {
  const profile = tempProfile();
  const h = await launch({ init: FULL_DISK, profile });
  try {
    const { page } = h;
    await startChat(page, server.url, {});
    assert.equal(await say(page, 'My sister plays the cello'), 'You said: My sister plays the cello');
    const [session] = (await readDb(page, ['sessions'])).sessions;
    // The reply's last save: the chat is idle (Send back in place of Stop) only after it.
    await page.getByTestId('send').waitFor();
    await ageOpenSessions(page, 3 * 24 * 3600_000);

    // The disk fills up; the next start has to end that chat and cannot write.
    await diskFull(page, true);
    await page.reload();
    await page.locator('[data-testid="composer"], [data-testid="fatal"]').first().waitFor();
    assert.equal(await page.getByTestId('fatal').count(), 0, 'the app started');
    await page.getByTestId('storage-full').waitFor();
    assert.match(await page.getByTestId('storage-full').textContent(), BANNER);
    await page.getByTestId('composer').waitFor();
    // Nothing half-written: the chat is still open in the store, no job was queued.
    let db = await readDb(page, ['sessions', 'turns', 'jobs']);
    assert.equal(db.sessions.find((s) => s.id === session.id)?.status, 'open');
    assert.deepEqual(db.jobs, []);
    assert.deepEqual(
      db.turns.sort((a, b) => a.index - b.index).map((t) => t.text),
      ['My sister plays the cello', 'You said: My sister plays the cello'],
    );
    await shot(page, 'storage-full-1280');
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, 'storage-full-375');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Settings (where space is freed) can be reached from the banner.
    await page.getByTestId('storage-full').getByRole('link', { name: 'Settings' }).click();
    await page.getByTestId('settings-storage').waitFor();
    await page.getByTestId('free-models').waitFor();
    assert.deepEqual(h.errors, []);

    // Room again: the next start ends the chat and queues it for memorising; no banner.
    await diskFull(page, false);
    await page.reload();
    db = await pollDb(page, (d) => d.sessions.some((s) => s.id === session.id && s.status === 'ended'), { what: 'the chat to end' });
    assert.deepEqual(
      db.jobs.map((j) => j.sessionId),
      [session.id],
    );
    await page.getByTestId('nav-chat').waitFor();
    assert.equal(await page.getByTestId('storage-full').count(), 0);
    assert.equal(await page.getByTestId('fatal').count(), 0);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a message that cannot be saved stays in the composer with the storage message; it is sent once there is room', async () => {
  const h = await launch({ init: FULL_DISK });
  try {
    const { page } = h;
    await startChat(page, server.url, {});
    assert.equal(await say(page, 'First message'), 'You said: First message');

    await diskFull(page, true);
    const composer = page.getByTestId('composer');
    await composer.fill('Please keep these words');
    await page.getByTestId('send').click();
    // The refused write fails; the words are back (awaited: they may leave the box while it is tried).
    await page.getByTestId('unsaved-note').waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid="composer"]')?.value === 'Please keep these words');
    assert.equal(await composer.inputValue(), 'Please keep these words');
    assert.match(await page.getByTestId('unsaved-note').textContent(), STORAGE_MESSAGE);
    await page.getByTestId('storage-full').waitFor();
    assert.equal(await page.getByTestId('turn-user').filter({ hasText: 'Please keep these words' }).count(), 0);
    assert.equal(await page.getByTestId('stop').count(), 0, 'the chat is not left busy');
    let db = await readDb(page, ['turns']);
    assert.equal(db.turns.filter((t) => t.text === 'Please keep these words').length, 0, 'nothing was half-written');
    await shot(page, 'storage-full-composer-1280');
    assert.deepEqual(await audit(page), []);
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, 'storage-full-composer-375');
    assert.deepEqual(await audit(page), []);
    await page.setViewportSize({ width: 1280, height: 800 });

    // Room again: Send sends it; the note and the banner go.
    await diskFull(page, false);
    await page.getByTestId('send').click();
    // Its own reply, not the first one still on screen (lastReply alone may see that one).
    await page.getByTestId('turn-assistant').nth(1).waitFor();
    assert.equal(await lastReply(page), 'You said: Please keep these words');
    assert.equal(await composer.inputValue(), '');
    assert.equal(await page.getByTestId('unsaved-note').count(), 0);
    assert.equal(await page.getByTestId('storage-full').count(), 0);
    db = await readDb(page, ['turns']);
    assert.equal(db.turns.filter((t) => t.text === 'Please keep these words').length, 1);

    // After a reload the message is there.
    await page.reload();
    await page.getByTestId('turn-user').filter({ hasText: 'Please keep these words' }).waitFor();
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
