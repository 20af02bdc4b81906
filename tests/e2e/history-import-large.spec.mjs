// Nothing freezes: a large ChatGPT export (40 MB, generated here) is parsed in a worker
// and saved in chunks, with a progress bar in words and a Cancel. Cancel, while the worker reads or
// while chats are being saved, leaves the store as it was before the import (the chats saved so far
// are taken back): checked in IndexedDB and in the chat list, also after a reload. An error inside
// the worker (malformed JSON, a broken chat at the end of the file) comes back in plain words and
// nothing is written. The freeze itself is measured by `npm run bench:history`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launch, shot, startServer, tempProfile } from './harness.mjs';
import { assertNoOffHost, loadTestModel, pollDb, readDb } from './flows.mjs';
import { makeChatgptExport } from '../support/history-export.mjs';

const CLAUDE = resolve(import.meta.dirname, '../fixtures/claude-conversations.json');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const BIG = join(tmpdir(), `tealeaf-history-40mb-${process.pid}.json`);
const RECORDS = ['sessions', 'turns', 'jobs', 'tombstones'];

let server;
let made;
before(async () => {
  server = await startServer();
  made = makeChatgptExport({ mb: 40 });
  writeFileSync(BIG, made.text);
});
after(async () => {
  await server?.close();
  rmSync(BIG, { force: true });
});

/** Every text the progress bar showed, in order (the reading phases pass quickly). */
const RECORD_WORDS = () => {
  window.__words = [];
  new MutationObserver(() => {
    const t = document.querySelector('[data-testid="history-progress-text"]')?.textContent;
    if (t && window.__words.at(-1) !== t) window.__words.push(t);
  }).observe(document, { subtree: true, childList: true, characterData: true });
};
const words = (page) => page.evaluate(() => window.__words);

async function importFile(page, file, expect) {
  await page.getByTestId('import-history').setInputFiles(file);
  const result = page.getByTestId('import-result').filter({ hasText: expect });
  await result.waitFor({ timeout: 120_000 });
  await page.getByTestId('memory-busy').waitFor({ state: 'detached' });
  return result.textContent();
}

/** Waits until the bar says at least `least` chats are saved ("Saving 120 of 1,140 chats…"). */
async function savedAtLeast(page, least) {
  await page.waitForFunction(
    (least) => {
      const m = /Saving ([\d,]+) of/.exec(document.querySelector('[data-testid="history-progress-text"]')?.textContent ?? '');
      return m !== null && Number(m[1].replace(/,/g, '')) >= least;
    },
    least,
    { timeout: 120_000, polling: 20 },
  );
}

/** Serious and critical axe violations on the page as it is now. */
async function audit(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.targets.join(', ')}`);
}

/** The chat list holds exactly these titles (and, when given, not `absent`). */
async function chatList(page, titles) {
  await page.goto(`${server.url}/#/chat`);
  for (const t of titles) await page.getByTestId('session-item').filter({ hasText: t }).first().waitFor();
  return page.getByTestId('session-item').count();
}

test('a 40 MB export: progress in words; Cancel while saving takes back every chat it saved, in the store and the chat list, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile, init: RECORD_WORDS });
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/memory`);
    await page.getByTestId('load-demo').waitFor();
    await importFile(page, CLAUDE, 'Imported 2 chats from Claude');
    const before = await readDb(page, RECORDS);
    assert.equal(before.sessions.length, 2);

    await page.getByTestId('import-history').setInputFiles(BIG);
    await savedAtLeast(page, 100);
    // Chats are in the store now: the cancel has something to take back.
    const midway = await readDb(page, ['sessions']);
    assert.ok(midway.sessions.length >= 102, `${midway.sessions.length} sessions while saving`);
    const bar = page.getByTestId('history-progress');
    assert.equal(await bar.getAttribute('data-phase'), 'saving');
    assert.ok(Number(await bar.getAttribute('data-percent')) >= 55);
    assert.deepEqual(await audit(page), []);
    await shot(page, 'history-large-saving-1280');
    await page.getByTestId('history-cancel').click();
    const note = page.getByTestId('import-result').filter({ hasText: `${BIG.split('/').pop()}: Import cancelled. Nothing was changed.` });
    await note.waitFor();
    assert.equal(await note.getAttribute('role'), 'status');
    await page.getByTestId('memory-busy').waitFor({ state: 'detached' });
    await shot(page, 'history-large-cancelled-1280');

    // What the bar said, in order: the file, the chats read (in the worker), the chats saved, the cancel.
    const said = (await words(page)).map((w) => w.replace(/^[^:]+: /, ''));
    const first = (re) => said.findIndex((w) => re.test(w));
    const order = [
      /^Reading the file…$/,
      /^Reading [\d,]+ of 1,140 chats…$/,
      /^Saving [\d,]+ of 1,140 chats…$/,
      /^Cancelling…$|^Cancelling: taking back/,
    ];
    const at = order.map(first);
    assert.ok(
      at.every((i, k) => i >= 0 && (k === 0 || i > at[k - 1])),
      `progress words in order: ${JSON.stringify(said.slice(0, 12))} … ${JSON.stringify(said.slice(-4))}`,
    );
    assert.ok(
      said.some((w) => /^Cancelling: taking back the chats saved so far \([\d,]+ of [\d,]+\)…$/.test(w)),
      said.slice(-4).join(' | '),
    );

    // The store is as it was before the import: the two Claude chats, nothing of the export.
    assert.deepEqual(await readDb(page, RECORDS), before);
    assert.equal(await chatList(page, ['Learning the cello', 'My tomato plants']), 2);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    // After a reload: the same.
    h = await launch({ profile });
    assert.equal(await chatList(h.page, ['Learning the cello', 'My tomato plants']), 2);
    assert.deepEqual(await readDb(h.page, RECORDS), before);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('the whole 40 MB export from the explorer toolbar, after a Cancel while the worker reads; light and dark, 1280 and 375 px', async () => {
  const profile = tempProfile();
  let h = await launch({ profile, init: RECORD_WORDS });
  try {
    const { page } = h;
    // Memories first, so the Memory view shows the explorer with the imports in its toolbar.
    await loadTestModel(page, server.url);
    await page.goto(`${server.url}/#/memory`);
    await importFile(page, CLAUDE, 'Imported 2 chats from Claude');
    await pollDb(page, (d) => d.jobs.length === 2 && d.jobs.every((j) => j.status === 'done'), { what: 'memorised Claude chats' });
    // The export's 1,140 chats wait to be memorised: this test is about importing them.
    await page.goto(`${server.url}/#/settings`);
    await page.getByTestId('switch-memory-creation').uncheck();
    await page.goto(`${server.url}/#/memory`);
    await page.getByTestId('memory-count').waitFor();
    const before = await readDb(page, RECORDS);

    // Cancelled while the worker reads the file or its chats: nothing was written yet.
    await page.getByTestId('import-history').setInputFiles(BIG);
    await page
      .locator('[data-testid="history-progress"]:is([data-phase="reading"],[data-phase="opening"],[data-phase="checking"])')
      .waitFor();
    await page.getByTestId('history-cancel').click();
    await page.getByTestId('import-result').filter({ hasText: 'Import cancelled. Nothing was changed.' }).waitFor();
    assert.deepEqual(await readDb(page, RECORDS), before);

    // Now the whole file.
    await page.getByTestId('import-history').setInputFiles(BIG);
    await savedAtLeast(page, 50);
    for (const [scheme, width] of [
      ['light', 1280],
      ['light', 375],
      ['dark', 375],
      ['dark', 1280],
    ]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: 800 });
      await shot(page, `history-large-toolbar-${scheme}-${width}`);
      assert.deepEqual(await audit(page), [], `${scheme} ${width}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    const text = await page
      .getByTestId('import-result')
      .filter({ hasText: 'Imported 1,140 chats from ChatGPT' })
      .textContent({ timeout: 120_000 });
    assert.match(text, /once “Make new memories from chats” is switched on again/);
    const check = async (p) => {
      const d = await readDb(p, RECORDS);
      assert.equal(d.sessions.length, 2 + made.chats);
      assert.equal(d.turns.length, before.turns.length + made.messages);
      assert.equal(d.jobs.filter((j) => j.status === 'pending').length, made.chats);
      // The export's own order and times: the last chat's last message at its time.
      const last = d.sessions.find((s) => s.title === 'Generated chat 1139');
      assert.equal(last.lastActivityAt, (Date.UTC(2022, 0, 1) / 1000 + 1139 * 3600 + 23 * 30) * 1000);
    };
    await check(page);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    h = await launch({ profile });
    await h.page.goto(`${server.url}/#/chat`);
    await h.page.getByTestId('chat-search').fill('Generated chat 1139');
    await h.page.getByTestId('session-item').filter({ hasText: 'Generated chat 1139' }).waitFor();
    await check(h.page);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('errors inside the worker: malformed JSON and a broken last chat of a 40 MB file are told in plain words; nothing is written, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile, viewport: { width: 375, height: 800 } });
  // Files on disk, each named conversations.json as an export's is (a 40 MB buffer is slow to pass to the page).
  const dir = mkdtempSync(join(tmpdir(), 'tealeaf-history-bad-'));
  const truncated = join(dir, 'a', 'conversations.json');
  const broken = join(dir, 'b', 'conversations.json');
  mkdirSync(join(dir, 'a'));
  mkdirSync(join(dir, 'b'));
  writeFileSync(truncated, made.text.slice(0, -5000));
  const list = JSON.parse(made.text);
  list[list.length - 1].mapping = 'gone';
  writeFileSync(broken, JSON.stringify(list));
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/memory`);
    await page.getByTestId('load-demo').waitFor();
    await importFile(page, CLAUDE, 'Imported 2 chats from Claude');
    const before = await readDb(page, RECORDS);

    const error = page.getByTestId('import-result').filter({ hasText: 'Could not import conversations.json' });
    await page.getByTestId('import-history').setInputFiles(truncated);
    await error.filter({ hasText: 'This file is not JSON. Tealeaf imports conversations.json from a ChatGPT data export' }).waitFor();
    assert.equal(await error.getAttribute('role'), 'alert');
    await shot(page, 'history-large-not-json-375');
    assert.deepEqual(await readDb(page, RECORDS), before);

    await page.getByTestId('import-result').getByRole('button').click(); // dismissed: the next words are new
    await page.getByTestId('import-history').setInputFiles(broken);
    await error.waitFor();
    assert.match(
      await error.textContent(),
      /This looks like a ChatGPT export, but one chat could not be read \(chat 1140 mapping: expected an object of message nodes\)\. Nothing was imported\./,
    );
    assert.deepEqual(await readDb(page, RECORDS), before);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    h = await launch({ profile });
    assert.equal(await chatList(h.page, ['Learning the cello', 'My tomato plants']), 2);
    assert.deepEqual(await readDb(h.page, RECORDS), before);
  } finally {
    await h.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});
