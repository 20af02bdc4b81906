// Managing chats: rename, search, delete (keeping or deleting memories; during a
// memorise job), edit and resend, regenerate any reply with versions to flip through, an ended
// chat that says a new one starts, and the persona and temperature settings. Every effect is
// checked in the store and the view, and again after a restart of the browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, PATIENCE_MS, serveApp, shot, tempProfile } from './harness.mjs';
import {
  answerDialog,
  assertNoOffHost,
  endAndRemember,
  exportBackup,
  held,
  lastReply,
  loadTestModel,
  newChat,
  openMemory,
  pollDb,
  readDb,
  say,
  send,
  setScript,
  setScriptHolding,
  startChat,
  startImport,
} from './flows.mjs';

const server = serveApp();

const row = (page, title) => page.getByTestId('session-row').filter({ hasText: title });
const shownTexts = async (page) =>
  (
    await page.locator('[data-testid="turn-user"] .bubble, [data-testid="turn-assistant"] [data-testid="reply-body"]').allTextContents()
  ).map((t) => t.trim());
const sessionOf = (db, title) => db.sessions.find((s) => s.title === title);

/**
 * Types `q` into the chat search and waits until the list shows `want` (the titles, in order): the
 * search answers after a debounce, so the list is awaited, not read after a pause (an empty search
 * shows every chat at once). Returns the titles.
 */
async function search(page, q, want) {
  await page.getByTestId('chat-search').fill(q);
  const titles = async () => (await page.getByTestId('session-row').locator('.title').allTextContents()).map((t) => t.trim());
  if (want !== undefined) await pollUntilShown(page, titles, want, `the chats found for "${q}"`);
  return titles();
}

/** Waits until `read` gives `want`; the safety net's error says what was shown instead. */
async function pollUntilShown(page, read, want, what) {
  const end = Date.now() + PATIENCE_MS;
  for (;;) {
    const got = await read();
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(got)}`);
    await page.waitForTimeout(50);
  }
}

test('rename, search and delete chats; kept memories show their source as deleted; all after a restart', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1 });

    await say(page, 'My ginkgo tree is growing well');
    // Rename with the keyboard: the row's rename button, type, Enter.
    await row(page, 'My ginkgo').getByTestId('rename-chat').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('rename-input').fill('Garden notes');
    await page.keyboard.press('Enter');
    await page.locator('.heading strong').filter({ hasText: 'Garden notes' }).waitFor();
    assert.ok(sessionOf(await readDb(page, ['sessions']), 'Garden notes'), 'renamed in the store');

    // A second chat; the first one ends and is memorised.
    await newChat(page);
    await say(page, 'Planning a trip to Lyon in May');
    const memorised = await pollDb(page, (db) => sessionOf(db, 'Garden notes')?.status === 'memorised' && db.memories.length > 0, {
      what: 'the first chat memorised',
    });
    const garden = sessionOf(memorised, 'Garden notes');
    const gardenMemories = memorised.memories.filter((m) => m.sessionId === garden.id);
    assert.ok(gardenMemories.some((m) => /ginkgo/.test(m.text)));

    assert.deepEqual(await search(page, 'ginkgo', ['Garden notes']), ['Garden notes'], 'found by message text');
    assert.match(await page.getByTestId('search-snippet').first().textContent(), /ginkgo/);
    await shot(page, 'chat-search-1280');
    assert.deepEqual(await search(page, 'GARDEN', ['Garden notes']), ['Garden notes'], 'found by title');
    assert.deepEqual(await search(page, 'lyon may', ['Planning a trip to Lyon in May']), ['Planning a trip to Lyon in May']);
    assert.deepEqual(await search(page, 'cactus', []), []);
    await page.getByTestId('sessions-empty').filter({ hasText: 'No chat mentions that' }).waitFor();
    await search(page, '');

    // Delete the memorised chat: Cancel really cancels, then delete keeping its memories.
    await row(page, 'Garden notes').getByTestId('delete-chat').click();
    const question = await answerDialog(page, { ok: false });
    assert.match(question, /Delete this chat\?.*1 memory.*Also delete the memory made from it/);
    assert.ok(sessionOf(await readDb(page, ['sessions']), 'Garden notes'), 'Cancel kept the chat');
    await row(page, 'Garden notes').getByTestId('delete-chat').click();
    await page.getByTestId('confirm-dialog').waitFor();
    await shot(page, 'chat-delete-dialog-1280');
    await answerDialog(page); // box unticked: keep the memories
    await row(page, 'Garden notes').waitFor({ state: 'detached' });
    await page
      .getByTestId('toast-info')
      .filter({ hasText: /memory was kept/ })
      .waitFor();
    const afterDelete = await readDb(page);
    assert.equal(sessionOf(afterDelete, 'Garden notes'), undefined);
    assert.deepEqual(
      afterDelete.turns.filter((t) => t.sessionId === garden.id),
      [],
    );
    assert.deepEqual(
      afterDelete.segments.filter((s) => s.sessionId === garden.id),
      [],
    );
    assert.deepEqual(
      afterDelete.jobs.filter((j) => j.sessionId === garden.id),
      [],
    );
    assert.deepEqual(
      afterDelete.memories
        .filter((m) => m.sessionId === garden.id)
        .map((m) => m.id)
        .sort(),
      gardenMemories.map((m) => m.id).sort(),
      'memories kept',
    );

    await openMemory(page, 'ginkgo');
    await page.getByTestId('source-deleted').first().waitFor();
    await shot(page, 'explorer-source-deleted-1280');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    // After a restart: the chat stays deleted, the memory stays with its source marked deleted.
    h = await launch({ profile });
    await h.page.goto(`${server.url}/#/chat`);
    await row(h.page, 'Planning a trip').waitFor();
    assert.equal(await row(h.page, 'Garden notes').count(), 0);
    assert.deepEqual(await search(h.page, 'ginkgo', []), []);
    await openMemory(h.page, 'ginkgo');
    await h.page.getByTestId('source-deleted').first().waitFor();

    // Deleting the open chat shown now, with no memories: no checkbox, an empty chat afterwards.
    await h.page.getByTestId('nav-chat').click();
    await row(h.page, 'Planning a trip').getByTestId('session-item').click();
    await row(h.page, 'Planning a trip').getByTestId('delete-chat').click();
    const q2 = await answerDialog(h.page);
    assert.doesNotMatch(q2, /Also delete/);
    await h.page.getByTestId('sessions-empty').waitFor();
    assert.equal(await h.page.getByTestId('turn-user').count(), 0);
    const end = await readDb(h.page);
    assert.deepEqual([end.sessions.length, end.turns.length, end.jobs.length], [0, 0, 0]);
    assert.ok(end.memories.length >= gardenMemories.length, 'the kept memories are still there');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('deleting a chat while its memorise job runs leaves nothing of it, and memorising goes on', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1, recordCalls: true });
    await setScriptHolding(page, { delayMs: 1, recordCalls: true, holdJson: ['session_memories'] });
    await say(page, 'I bake sourdough every Sunday');
    await page.getByTestId('end-session').click();
    // The job is inside its summarising call, held there until the chat is deleted.
    await held(page, 'session_memories');
    const sid = (await readDb(page, ['sessions'])).sessions[0].id;
    await row(page, 'sourdough').getByTestId('delete-chat').click();
    assert.match(await answerDialog(page), /not been memorised yet/);
    // The call the job was waiting on answers now; the delete, which waits for the job to let go, ends.
    await setScript(page, { delayMs: 1 });
    await pollDb(page, (db) => !db.sessions.some((x) => x.id === sid), { what: 'the chat deleted' });
    const ofIt = (db) => ({
      sessions: db.sessions.filter((s) => s.id === sid).length,
      turns: db.turns.filter((t) => t.sessionId === sid).length,
      jobs: db.jobs.filter((j) => j.sessionId === sid).length,
      memories: db.memories.filter((m) => m.sessionId === sid).length,
      segments: db.segments.filter((g) => g.sessionId === sid).length,
    });
    const none = { sessions: 0, turns: 0, jobs: 0, memories: 0, segments: 0 };
    assert.deepEqual(ofIt(await readDb(page)), none);
    assert.equal(await page.getByTestId('toast-error').count(), 0, 'no error');
    await page.getByTestId('job-badge').waitFor({ state: 'detached' });

    // The job runner is not stuck: the next chat is memorised. The runner takes one job at a
    // time, so the answer to the deleted chat's call has been dealt with by then: still nothing of it.
    await say(page, 'My cat is called Pepper');
    await endAndRemember(page);
    const later = await readDb(page);
    assert.deepEqual(ofIt(later), none);
    assert.ok(later.memories.some((m) => /Pepper/.test(m.text)));
    assert.ok(!later.memories.some((m) => /sourdough/.test(m.text)));
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('edit and resend, regenerate any reply, flip versions (also after a restart); memories from the versions shown', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1, replies: [{ when: 'I like tea', say: 'Tea is lovely.' }] });

    await say(page, 'I like tea');
    await say(page, 'Tell me more');
    assert.deepEqual(await shownTexts(page), ['I like tea', 'Tea is lovely.', 'Tell me more', 'You said: Tell me more']);

    // Regenerate the first reply: a new version; the turns after it go with the old one.
    await setScript(page, { delayMs: 1, replies: [{ when: 'I like tea', say: 'Tea, a fine choice.' }] });
    await page.getByTestId('regenerate').first().click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="turn-assistant"]').length === 1);
    assert.equal(await lastReply(page), 'Tea, a fine choice.');
    const counter = page.getByTestId('turn-assistant').first().getByTestId('version-count');
    assert.equal(await counter.textContent(), '2/2');
    await page.getByTestId('version-prev').click();
    await page.getByTestId('turn-assistant').nth(1).waitFor();
    assert.deepEqual(await shownTexts(page), ['I like tea', 'Tea is lovely.', 'Tell me more', 'You said: Tell me more']);
    assert.equal(await counter.textContent(), '1/2');
    await page.getByTestId('version-next').click();
    await page.getByTestId('turn-assistant').nth(1).waitFor({ state: 'detached' });
    assert.deepEqual(await shownTexts(page), ['I like tea', 'Tea, a fine choice.']);

    // Edit the first message (keyboard: Edit, type, Enter) and resend it.
    await page.getByTestId('turn-user').first().getByTestId('edit').click();
    await page.getByTestId('edit-input').fill('I like coffee');
    await shot(page, 'chat-edit-1280');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="turn-assistant"] [data-testid="reply-body"]')?.textContent?.includes('coffee'),
    );
    assert.equal(await lastReply(page), 'You said: I like coffee');
    assert.equal(await page.getByTestId('turn-user').first().getByTestId('version-count').textContent(), '2/2');
    await shot(page, 'chat-versions-1280');
    const db = await readDb(page, ['turns']);
    assert.deepEqual(
      db.turns.sort((a, b) => a.index - b.index).map((t) => t.text),
      ['I like coffee', 'You said: I like coffee'],
      'the store holds the shown branch',
    );
    assert.equal(db.turns[0].versions[0].text, 'I like tea');
    assertNoOffHost(h);
    await h.close();

    h = await launch({ profile });
    const p = h.page;
    await p.goto(`${server.url}/#/chat`);
    await row(p, 'I like tea').getByTestId('session-item').click();
    await p.getByTestId('turn-user').first().waitFor();
    assert.deepEqual(await shownTexts(p), ['I like coffee', 'You said: I like coffee']);
    await p.getByTestId('turn-user').first().getByTestId('version-prev').click();
    await p.getByTestId('turn-assistant').first().getByTestId('version-count').filter({ hasText: '2/2' }).waitFor();
    assert.deepEqual(await shownTexts(p), ['I like tea', 'Tea, a fine choice.']);
    await p.getByTestId('turn-assistant').first().getByTestId('version-prev').click();
    await p.getByTestId('turn-assistant').nth(1).waitFor();
    assert.deepEqual(await shownTexts(p), ['I like tea', 'Tea is lovely.', 'Tell me more', 'You said: Tell me more']);
    // Show the coffee branch again, then end: memories come from what is shown.
    await p.getByTestId('turn-user').first().getByTestId('version-next').click();
    await p.getByTestId('turn-assistant').nth(1).waitFor({ state: 'detached' });
    assert.deepEqual(await shownTexts(p), ['I like coffee', 'You said: I like coffee']);
    await loadTestModel(p, server.url);
    await p.getByTestId('nav-chat').click();
    await endAndRemember(p);
    const mem = (await readDb(p, ['memories'])).memories.map((m) => m.text);
    assert.ok(
      mem.some((t) => /coffee/.test(t)),
      mem.join(' | '),
    );
    assert.ok(!mem.some((t) => /tea|Tell me more/.test(t)), mem.join(' | '));
    // A remembered chat cannot change: no Edit, versions do not flip.
    assert.equal(await p.getByTestId('edit').count(), 0);
    assert.equal(await p.getByTestId('version-prev').first().isDisabled(), true);

    // Sending in it says, before and after, that a new chat starts, one that follows on from it:
    // its reply sees the messages shown (the probe says whether the old reply was in its prompt).
    await p.getByTestId('ended-note').filter({ hasText: 'starts a new chat that follows on from this one' }).waitFor();
    await shot(p, 'chat-ended-note-1280');
    const before = (await readDb(p, ['sessions'])).sessions.length;
    const endedTitle = (await p.locator('.heading strong').textContent())?.trim();
    await setScript(p, { delayMs: 1, probe: ['You said: I like coffee'] });
    await send(p, 'Good morning again');
    assert.match(await lastReply(p), /^You said: Good morning again\b[\s\S]*\[probe You said: I like coffee: in prompt\]$/);
    await p
      .getByTestId('toast-info')
      .filter({ hasText: /new chat started.*still see the previous chat's messages/i })
      .waitFor();
    await p.locator('.heading strong').filter({ hasText: 'Good morning again' }).waitFor();
    assert.equal(await p.getByTestId('ended-note').count(), 0);
    const follows = await p.getByTestId('follows-note').textContent();
    assert.match(follows ?? '', new RegExp(`Follows on from “${endedTitle}”, which had ended: replies here also see its messages`));
    // After a reload the new chat still follows on, and its next reply still sees the ended chat.
    await p.reload();
    await p.getByTestId('follows-note').waitFor();
    await loadTestModel(p, server.url);
    await p.getByTestId('nav-chat').click();
    await setScript(p, { delayMs: 1, probe: ['You said: I like coffee'] });
    await send(p, 'And again');
    assert.match(await lastReply(p), /^You said: And again\b[\s\S]*\[probe You said: I like coffee: in prompt\]$/);
    assert.equal((await readDb(p, ['sessions'])).sessions.length, before + 1);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('persona and temperature reach the model, persist, and survive a backup round trip', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await loadTestModel(page, server.url);
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('system-prompt').fill('You are Mabel, a cheerful gardener.');
    await page.getByTestId('system-prompt').blur();
    // Keyboard on the slider: 0.7 -> 1.2.
    await page.getByTestId('temperature').focus();
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    await page.getByTestId('temperature-value').filter({ hasText: '1.2' }).waitFor();
    await page.getByTestId('settings-assistant').scrollIntoViewIfNeeded();
    await shot(page, 'settings-assistant-1280');

    await page.getByTestId('nav-chat').click();
    await setScript(page, { delayMs: 1 });
    assert.equal(await say(page, 'What do you get? [echo settings]'), 'persona: You are Mabel, a cheerful gardener. | temperature: 1.2');

    const file = await exportBackup(page, join(profile, 'backup.json'));
    const app = JSON.parse(readFileSync(file, 'utf8')).data.settings.find((s) => s.key === 'app').value;
    assert.equal(app.systemPrompt, 'You are Mabel, a cheerful gardener.');
    assert.equal(app.temperature, 1.2);
    assertNoOffHost(h);
    await h.close();

    h = await launch({ profile });
    const p = h.page;
    await p.goto(`${server.url}/#/settings`);
    await p.getByTestId('system-prompt').waitFor();
    assert.equal(await p.getByTestId('system-prompt').inputValue(), 'You are Mabel, a cheerful gardener.');
    assert.equal((await p.getByTestId('temperature-value').textContent()).trim(), '1.2');

    // Delete everything (models kept), then the backup brings the settings back.
    await p.getByTestId('delete-all').click();
    await Promise.all([p.waitForEvent('load'), answerDialog(p)]);
    await p.goto(`${server.url}/#/settings`);
    await p.getByTestId('system-prompt').waitFor();
    assert.equal(await p.getByTestId('system-prompt').inputValue(), '');
    assert.equal((await p.getByTestId('temperature-value').textContent()).trim(), '0.7');
    await startImport(p, file, { mode: 'replace' });
    await answerDialog(p);
    await p.getByTestId('import-done').waitFor();
    assert.equal(await p.getByTestId('system-prompt').inputValue(), 'You are Mabel, a cheerful gardener.');
    assert.equal((await p.getByTestId('temperature-value').textContent()).trim(), '1.2');
    await loadTestModel(p, server.url);
    await p.getByTestId('nav-chat').click();
    await p.getByTestId('new-chat').click();
    assert.equal(await say(p, 'And now? [echo settings]'), 'persona: You are Mabel, a cheerful gardener. | temperature: 1.2');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('dialogs are keyboard-only: Cancel has focus, Tab stays inside, Escape cancels, focus returns', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/settings`);
    const del = page.getByTestId('delete-all');
    await del.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByTestId('confirm-dialog');
    await dialog.waitFor();
    assert.equal(await dialog.getAttribute('role'), 'alertdialog');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'confirm-cancel');
    const inside = () => page.evaluate(() => !!document.activeElement?.closest('[data-testid="confirm-dialog"]'));
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Tab');
      assert.ok(await inside(), `Tab ${i + 1} stays in the dialog`);
    }
    await page.keyboard.press('Shift+Tab');
    assert.ok(await inside());
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'delete-all', 'focus is back');
    assert.equal(await page.getByTestId('settings-assistant').count(), 1, 'still here: nothing was deleted');

    // "Delete all downloaded models" asks first; Cancel cancels.
    await page.getByTestId('free-models').click();
    assert.match(await answerDialog(page, { ok: false }), /Delete all downloaded models\?/);

    // At 375 px: the dialog and the chats drawer.
    await page.setViewportSize({ width: 375, height: 760 });
    await page.getByTestId('delete-all').click();
    await dialog.waitFor();
    await shot(page, 'settings-delete-all-dialog-375');
    await page.keyboard.press('Escape');
    await page.getByTestId('settings-assistant').scrollIntoViewIfNeeded();
    await shot(page, 'settings-assistant-375');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('chat management at 375 px: drawer with search, rename and delete; versions', async () => {
  const h = await launch({ viewport: { width: 375, height: 760 } });
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    await say(page, 'Notes about my vegetable garden and the tomatoes');
    await page.getByTestId('regenerate').click();
    await page.getByTestId('version-count').filter({ hasText: '2/2' }).waitFor();
    await lastReply(page);
    await shot(page, 'chat-versions-375');
    await page.getByTestId('turn-user').getByTestId('edit').click();
    await shot(page, 'chat-edit-375');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Show past sessions' }).click();
    await page.getByTestId('chat-search').fill('said tomatoes');
    await page.getByTestId('search-snippet').waitFor();
    await shot(page, 'chat-search-375');
    await row(page, 'Notes about').getByTestId('delete-chat').click();
    await page.getByTestId('confirm-dialog').waitFor();
    await shot(page, 'chat-delete-dialog-375');
    await page.keyboard.press('Escape');
    assert.equal((await readDb(page, ['sessions'])).sessions.length, 1, 'Escape cancelled');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
