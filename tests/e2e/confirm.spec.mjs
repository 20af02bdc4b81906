// Big actions say what they did, in the user's words (chats, messages, memories), and the words
// survive the action: after "Delete everything" the reloaded page says what was deleted (once);
// export names its file and what it holds; an import says what came back and what was skipped.
// A memory reads the same in the Undo bar as in the list, and a source link moves focus to the turn.
// Every count in the words is checked against the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import {
  answerDialog,
  assertNoOffHost,
  deleteOpenMemory,
  exportBackup,
  importLocomo,
  leaveDemo,
  newChat,
  openDemo,
  openMemory,
  pollDb,
  readDb,
  say,
  startChat,
  startImport,
} from './flows.mjs';

const FIXTURE = resolve(import.meta.dirname, '../fixtures/locomo-mini.json');
const server = serveApp();

const n = (count, one, many) => `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
const chats = (c) => n(c, 'chat', 'chats');
const memories = (c) => n(c, 'memory', 'memories');
const messages = (c) => n(c, 'message', 'messages');
const text = async (locator) => (await locator.textContent()).replace(/\s+/g, ' ').trim();
const toast = (page, pattern) => page.getByTestId('toast-info').filter({ hasText: pattern });

/** Two chats, the first ended and memorised: memories exist, and the open chat has none yet. */
async function twoChats(page) {
  await startChat(page, server.url, { delayMs: 1 });
  await say(page, 'My favourite tree is the ginkgo');
  await say(page, 'I water it every Sunday');
  await newChat(page);
  await say(page, 'Planning a trip to Lyon in May');
  return pollDb(page, (db) => db.sessions.some((s) => s.status === 'memorised') && db.memories.length >= 2, {
    what: 'the first chat memorised',
  });
}

test('an export says which file it saved and what it holds, in chats and memories', async () => {
  const profile = tempProfile();
  const h = await launch({ profile });
  try {
    const { page } = h;
    const db = await twoChats(page);
    // The open chat counts as a chat; its messages are not memories: counting turns or
    // memorised chats would give other numbers.
    assert.equal(db.sessions.length, 2);
    assert.notEqual(db.turns.length, db.sessions.length);

    // The file's name and what it holds, counted in the file itself.
    await page.getByTestId('nav-settings').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
    const file = join(profile, 'backup.json');
    await download.saveAs(file);
    const backup = JSON.parse(readFileSync(file, 'utf8')).data;
    assert.equal(backup.sessions.length, db.sessions.length);
    assert.equal(backup.memories.length, db.memories.length);
    const exported = page.getByTestId('export-done');
    assert.equal(
      await text(exported),
      `Saved ${download.suggestedFilename()}: ${chats(backup.sessions.length)} and ${memories(backup.memories.length)}.`,
    );
    await exported.scrollIntoViewIfNeeded();
    await shot(page, 'confirm-export-1280');
    await page.setViewportSize({ width: 375, height: 760 });
    await exported.scrollIntoViewIfNeeded();
    await shot(page, 'confirm-export-375');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('after "Delete everything" the reloaded page says what was deleted, once', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await twoChats(page);
    await page.getByTestId('nav-settings').click();
    const before = await readDb(page, ['sessions', 'memories']);
    await page.getByTestId('delete-all').click();
    await Promise.all([page.waitForEvent('load'), answerDialog(page)]);
    const said = `Everything was deleted: ${chats(before.sessions.length)} and ${memories(before.memories.length)}. Downloaded models were kept.`;
    const deletedToast = toast(page, 'Everything was deleted');
    await deletedToast.waitFor();
    assert.equal(await text(deletedToast.locator('span')), said);
    await page.getByTestId('delete-all').waitFor();
    const empty = await readDb(page, ['sessions', 'turns', 'memories']);
    assert.deepEqual([empty.sessions.length, empty.turns.length, empty.memories.length], [0, 0, 0], 'the store is empty');
    await shot(page, 'confirm-deleted-everything-1280');
    // Shown once: another reload does not say it again.
    await page.reload();
    await page.getByTestId('delete-all').waitFor();
    await page.waitForTimeout(1_000);
    assert.equal(await toast(page, 'Everything was deleted').count(), 0, 'said once');

    // Again at 375 px, models too, with nothing left to delete: the words say so.
    await page.setViewportSize({ width: 375, height: 760 });
    await page.getByTestId('delete-all').click();
    await Promise.all([page.waitForEvent('load'), answerDialog(page, { check: true })]);
    await toast(page, 'Everything was deleted (there were no chats or memories). Downloaded models were deleted too.').waitFor();
    await shot(page, 'confirm-deleted-everything-375');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('an import says what came back and what was skipped and why, in chats, messages and memories', async () => {
  const profile = tempProfile();
  const h = await launch({ profile });
  try {
    const { page } = h;
    await twoChats(page);
    const file = await exportBackup(page, join(profile, 'backup.json'));
    const before = await readDb(page, ['sessions', 'memories']);
    await page.getByTestId('delete-all').click();
    await Promise.all([page.waitForEvent('load'), answerDialog(page)]);
    await page.getByTestId('import-file').waitFor();

    // Into the emptied store: what came back, counted in the store afterwards.
    const settingsBefore = (await readDb(page, ['settings'])).settings.map((s) => s.key);
    await startImport(page, file);
    const done = page.getByTestId('import-done');
    await done.waitFor();
    const back = await readDb(page, ['sessions', 'turns', 'memories']);
    assert.deepEqual([back.sessions.length, back.memories.length], [before.sessions.length, before.memories.length]);
    const settingsWords = settingsBefore.includes('app')
      ? ' Your settings were kept (the backup’s were not applied).'
      : ' The backup’s settings were applied.';
    assert.equal(
      await text(done),
      `Restored ${chats(back.sessions.length)} (${messages(back.turns.length)}) and ${memories(back.memories.length)}.${settingsWords}`,
    );
    assert.doesNotMatch(await text(done), /\b(sessions|turns|edges|segments|records)\b/);
    await done.scrollIntoViewIfNeeded();
    await shot(page, 'confirm-import-1280');

    // The same file again: nothing new, and why.
    await startImport(page, file);
    await done.filter({ hasText: 'Nothing new' }).waitFor();
    assert.equal(
      await text(done),
      `Nothing new was restored. Skipped ${chats(back.sessions.length)}, ${messages(back.turns.length)} and ${memories(back.memories.length)}: they were already there. Your settings were kept (the backup’s were not applied).`,
    );
    const again = await readDb(page, ['sessions', 'turns', 'memories']);
    assert.deepEqual(
      [again.sessions.length, again.turns.length, again.memories.length],
      [back.sessions.length, back.turns.length, back.memories.length],
    );
    await page.setViewportSize({ width: 375, height: 760 });
    await done.scrollIntoViewIfNeeded();
    await shot(page, 'confirm-import-375');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

/** A memorised chat; the Memory view shows its ginkgo memory selected. Returns it as stored and as listed. */
async function ginkgoSelected(page) {
  const db = await twoChats(page);
  const stored = db.memories.find((m) => m.text.includes('ginkgo'));
  assert.match(stored.text, /^The user said: /, 'stored in the third person');
  // The list shows it in the second person; select it there.
  await openMemory(page, 'ginkgo');
  const listed = await text(page.locator('.tl button.item .text').filter({ hasText: 'ginkgo' }).first());
  assert.equal(listed, 'You said: My favourite tree is the ginkgo');
  const title = await text(page.locator('aside[aria-label="Memory details"] h3').first());
  assert.equal(title, listed, 'the detail panel words it the same');
  return { stored, listed };
}

test('"Open →" moves focus to the source turn, in view and named', async () => {
  const h = await launch();
  try {
    const { page } = h;
    const { stored } = await ginkgoSelected(page);

    // "Open →": the chat shows the turn, and focus is on it (not on the page's body).
    await page.locator('aside[aria-label="Memory details"] ul.sources button.source').first().click();
    await page.locator('article.flash').waitFor();
    const focusedTurn = () => page.evaluate(() => document.activeElement?.getAttribute('data-turn-id') ?? document.activeElement?.tagName);
    await page
      .waitForFunction((id) => document.activeElement?.getAttribute('data-turn-id') === id, stored.sourceTurnIds[0], { timeout: 5_000 })
      .catch(() => undefined);
    assert.equal(await focusedTurn(), stored.sourceTurnIds[0], 'focus is on the source turn');
    assert.match(await text(page.locator(':focus')), /My favourite tree is the ginkgo/);
    const inView = await page.evaluate(() => {
      const r = document.activeElement.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight;
    });
    assert.ok(inView, 'the focused turn is in view');
    assert.equal(await page.locator(':focus').getAttribute('aria-label'), 'You said', 'read out as what the user said');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('the Undo bar (and its "is back") words a memory as the list does', async () => {
  const h = await launch();
  try {
    const { page } = h;
    const { stored, listed } = await ginkgoSelected(page);
    // Delete it: the Undo bar quotes the words the list showed.
    await deleteOpenMemory(page);
    const bar = page.getByTestId('undo-bar');
    await bar.waitFor();
    assert.equal(await text(bar.locator('span')), `Deleted “${listed}”`);
    assert.equal(
      (await readDb(page, ['memories'])).memories.some((m) => m.id === stored.id),
      false,
      'deleted in the store',
    );
    await shot(page, 'confirm-undo-1280');
    await page.getByTestId('undo').click();
    await toast(page, `“${listed}” is back.`).waitFor();
    assert.ok(
      (await readDb(page, ['memories'])).memories.some((m) => m.id === stored.id),
      'back in the store',
    );
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('deleting a chat says what happened to its memories, as the store has it', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    await say(page, 'My ginkgo tree is growing well');
    await newChat(page);
    await say(page, 'Planning a trip to Lyon in May');
    await newChat(page);
    await say(page, 'A third chat to keep open');
    const db = await pollDb(page, (d) => d.sessions.filter((s) => s.status === 'memorised').length === 2, { what: 'two chats memorised' });
    const [keep, drop] = ['ginkgo', 'Lyon'].map((w) => db.sessions.find((s) => s.title.includes(w)));
    const row = (s) => page.getByTestId('session-row').filter({ hasText: s.title });

    // Kept memories (the box left unticked).
    await row(keep).getByTestId('delete-chat').click();
    await answerDialog(page);
    const kept = db.memories.filter((m) => m.sessionId === keep.id).length;
    assert.ok(kept > 0);
    const keptWords =
      kept === 1
        ? `Deleted “${keep.title}”. Its memory was kept; the explorer shows its source as deleted.`
        : `Deleted “${keep.title}”. Its ${memories(kept)} were kept; the explorer shows their source as deleted.`;
    await toast(page, keptWords).waitFor();
    await shot(page, 'confirm-chat-deleted-1280');
    let after = await readDb(page, ['sessions', 'memories']);
    assert.equal(
      after.sessions.some((s) => s.id === keep.id),
      false,
    );
    assert.equal(after.memories.filter((m) => m.sessionId === keep.id).length, kept);

    // Deleted with them (the box ticked).
    await row(drop).getByTestId('delete-chat').click();
    await answerDialog(page, { check: true });
    const gone = db.memories.filter((m) => m.sessionId === drop.id).length;
    await toast(
      page,
      gone === 1
        ? `Deleted “${drop.title}” and the memory made from it.`
        : `Deleted “${drop.title}” and the ${memories(gone)} made from it.`,
    ).waitFor();
    after = await readDb(page, ['sessions', 'memories']);
    assert.equal(after.memories.filter((m) => m.sessionId === drop.id).length, 0);
    await page.setViewportSize({ width: 375, height: 760 });
    await shot(page, 'confirm-chat-deleted-375');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('a LoCoMo import says what it brought in chats and memories, also when run again', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await importLocomo(page, server.url, FIXTURE);
    const note = page.getByTestId('import-result');
    const db = await readDb(page, ['sessions', 'turns', 'memories', 'edges']);
    const name = basename(FIXTURE);
    assert.equal(
      await text(note.locator('span')),
      `${name}: Imported ${chats(db.sessions.length)} (${messages(db.turns.length)}), remembered as ${memories(db.memories.length)} and ${n(db.edges.length, 'link', 'links')}.`,
    );
    await shot(page, 'confirm-locomo-1280');
    await page.getByTestId('import-locomo').first().setInputFiles(FIXTURE);
    await note.filter({ hasText: 'Nothing new' }).waitFor();
    assert.equal(
      await text(note.locator('span')),
      `${name}: Nothing new was imported: ${chats(db.sessions.length)} of this conversation were already there.`,
    );
    assert.equal((await readDb(page, ['sessions'])).sessions.length, db.sessions.length);
    await page.setViewportSize({ width: 375, height: 760 });
    await shot(page, 'confirm-locomo-375');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('leaving and removing the demo say so after the reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await importLocomo(page, server.url, FIXTURE);
    const db = await readDb(page, ['sessions']);
    // Leave the demo: said after the reload.
    await openDemo(page, { button: 'open-demo' });
    await leaveDemo(page);
    await toast(page, 'You left the demo').waitFor();
    assert.equal(await page.getByTestId('demo-banner').count(), 0);
    // Remove it: said after the reload, and its database is gone.
    await openDemo(page, { button: 'open-demo' });
    await Promise.all([page.waitForEvent('load'), page.getByTestId('remove-demo').click()]);
    await toast(page, 'The demo was removed').waitFor();
    await shot(page, 'confirm-demo-removed-1280');
    const names = await page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name));
    assert.equal(names.includes('tealeaf-demo'), false, 'the demo database is gone');
    assert.equal((await readDb(page, ['sessions'])).sessions.length, db.sessions.length, 'the user’s own chats are there');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
