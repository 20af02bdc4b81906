// Keyboard and screen readers at ease: from a fresh load with 21 chats the message box
// is at most two key presses away (77 Tab presses before: three stops per chat); the chat list is
// one Tab stop with arrow keys, Home and End; F2 renames and Delete deletes the focused chat, and
// its Rename and Delete are reachable with the right arrow. Every effect is checked in IndexedDB
// and in the list, also after a reload.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launch, serveApp, shot } from './harness.mjs';
import { answerDialog, assertNoOffHost, pollDb, readDb, startImport } from './flows.mjs';

const server = serveApp();

// 21 chats, newest first in the list. Two titles share their start ("Garden notes"), so a rename
// or delete that picks a chat by its title's start instead of the focused one is caught; the chats
// acted on sit in the middle of the list, not at an end where an off-by-one still lands right.
const N = 21;
const title = (i) => (i === 8 ? 'Garden notes' : i === 9 ? 'Garden notes, part two' : `Chat number ${String(i).padStart(2, '0')}`);
// A few memories of the newest chat, so the Memory view shows its explorer and toolbar.
const MEMORIES = (t) =>
  ['The user keeps a garden diary', 'The user grows tomatoes', 'The user waters the garden at dawn'].map((text, i) => ({
    id: `kb-m${i}`,
    kind: 'event',
    text,
    time: t + i,
    sourceTurnIds: ['kb-u0'],
    sessionId: 'kb-s0',
    edited: false,
    createdAt: t + i,
  }));
function backup() {
  const t0 = Date.UTC(2025, 2, 3, 9);
  const sessions = [];
  const turns = [];
  for (let i = 0; i < N; i++) {
    // Chat 0 is the newest: the list shows 0, 1, 2 ... from the top.
    const t = t0 - i * 3_600_000;
    sessions.push({
      id: `kb-s${i}`,
      title: title(i),
      startedAt: t,
      lastActivityAt: t + 60_000,
      endedAt: t + 60_000,
      status: 'memorised',
      endReason: 'import',
    });
    turns.push({
      id: `kb-u${i}`,
      sessionId: `kb-s${i}`,
      index: 0,
      role: 'user',
      text: `Message of ${title(i)}`,
      time: t,
      status: 'complete',
    });
    turns.push({
      id: `kb-a${i}`,
      sessionId: `kb-s${i}`,
      index: 1,
      role: 'assistant',
      text: `Reply in ${title(i)}`,
      time: t + 1000,
      status: 'complete',
    });
  }
  return {
    format: 'tealeaf-backup',
    version: 1,
    exportedAt: t0,
    data: { sessions, turns, memories: MEMORIES(t0), edges: [], segments: [], settings: [] },
  };
}
const FILE = join(tmpdir(), `tealeaf-keyboard-${process.pid}.json`);
writeFileSync(FILE, JSON.stringify(backup()));
after(() => rmSync(FILE, { force: true }));

async function importChats(page) {
  await page.goto(`${server.url}/#/settings`);
  await startImport(page, FILE);
  await page.getByTestId('import-done').waitFor();
  assert.equal((await readDb(page, ['sessions'])).sessions.length, N);
}

/** A fresh load of the chat view, waited on until the chats are listed (the app is ready). */
async function freshChat(page, chats = N) {
  await page.goto(`${server.url}/#/chat`);
  await page.reload();
  await page
    .getByTestId('session-row')
    .nth(chats - 1)
    .waitFor({ state: 'attached' });
  // The composer mounted, with the focus it takes on a desk-sized screen with nothing else in focus
  // (Composer.svelte): awaited, so that a key pressed next does not race it.
  await page.getByTestId('composer').waitFor();
  await page.waitForFunction(
    () =>
      document.activeElement?.matches('[data-testid="composer"]') ||
      (document.activeElement && document.activeElement !== document.body) ||
      !matchMedia('(pointer: fine) and (min-width: 721px)').matches,
  );
}

/** What has focus: its test id, or its tag name. */
const focused = (page) =>
  page.evaluate(() => {
    const a = document.activeElement;
    return a?.getAttribute('data-testid') ?? a?.tagName.toLowerCase() ?? 'none';
  });
/** The title of the chat whose row holds the focus. */
const focusedChat = (page) =>
  page.evaluate(() => document.activeElement?.closest('[data-testid="session-row"]')?.querySelector('.title')?.textContent?.trim() ?? null);
const titles = async (page) => (await page.getByTestId('session-row').locator('.title').allTextContents()).map((t) => t.trim());

/**
 * Key presses a keyboard user needs to reach the message box: Tab, or Enter where the focus is on
 * the skip link (that is what it is for). Stops at 120.
 */
async function pressesToComposer(page) {
  let presses = 0;
  for (; presses < 120; presses++) {
    const at = await focused(page);
    if (at === 'composer') break;
    await page.keyboard.press(at === 'skip-link' ? 'Enter' : 'Tab');
  }
  return presses;
}

for (const width of [1280, 375]) {
  test(`at ${width} px, from a fresh load with ${N} chats the message box is at most 2 key presses away`, async () => {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      await importChats(page);
      await freshChat(page);
      const before = await focused(page);
      const presses = await pressesToComposer(page);
      console.log(`[keyboard] ${width} px: focus on load ${before}, ${presses} key presses to the message box`);
      assert.ok(presses <= 2, `${presses} key presses to reach the message box`);
      if (width === 1280) {
        // A desk (a fine pointer, a wide screen): the box has the focus on load.
        assert.equal(before, 'composer');
        assert.equal(presses, 0);
      } else {
        // The phone layout: no focus on load (it would pop up the on-screen keyboard); the skip
        // link is the first Tab stop and takes the user to the box.
        assert.equal(before, 'body');
        assert.equal(presses, 2);
      }
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  });
}

test('the skip link is the first Tab stop of every view, shows when focused, and leads into the view', async () => {
  const h = await launch();
  try {
    const { page } = h;
    for (const [view, words] of [
      ['memory', 'Skip to main content'],
      ['models', 'Skip to main content'],
      ['settings', 'Skip to main content'],
      ['chat', 'Skip to message box'],
    ]) {
      await page.goto(`${server.url}/#/${view}`);
      await page.reload();
      await page.locator('main h1').first().waitFor();
      if (view === 'chat') {
        // The box took the focus on load: the skip link comes before the header's first link.
        assert.equal(await focused(page), 'composer');
        await page.locator('a.brand').focus();
        await page.keyboard.press('Shift+Tab');
      } else {
        assert.equal(await focused(page), 'body', `${view}: nothing takes the focus on load`);
        await page.keyboard.press('Tab');
      }
      const link = page.getByTestId('skip-link');
      assert.equal(await focused(page), 'skip-link', view);
      assert.equal((await link.textContent()).trim(), words);
      const box = await link.boundingBox();
      assert.ok(box && box.y >= 0 && box.height > 10, `${view}: the focused skip link is on screen (${JSON.stringify(box)})`);
      if (view === 'chat') await shot(page, 'keyboard-skip-link-1280');
      await page.keyboard.press('Enter');
      if (view === 'chat') assert.equal(await focused(page), 'composer');
      else {
        assert.equal(await focused(page), 'main');
        // The next Tab is inside the view, past the header.
        await page.keyboard.press('Tab');
        assert.ok(
          await page.evaluate(() => !!document.activeElement?.closest('main')),
          `${view}: Tab after the skip link stays in the view`,
        );
      }
      assert.equal(new URL(page.url()).hash, `#/${view}`, 'the route is unchanged');
    }
    // Unfocused, it is out of sight.
    await page.getByTestId('composer').focus();
    const hidden = await page.getByTestId('skip-link').boundingBox();
    assert.ok(!hidden || hidden.y + hidden.height <= 0, `off screen: ${JSON.stringify(hidden)}`);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('the chat list is one Tab stop: arrows, Home, End, Enter; F2 renames, Delete deletes; also after a reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await importChats(page);
    await freshChat(page);
    const all = await titles(page);
    assert.equal(all.length, N);
    assert.deepEqual(all.slice(7, 11), ['Chat number 07', 'Garden notes', 'Garden notes, part two', 'Chat number 10']);

    // One Tab stop: from the search box, one Tab into the list, the next one out of it.
    assert.equal(await page.locator('[data-testid="chats-drawer"] [tabindex="0"][data-chat-id]').count(), 1);
    await page.getByTestId('chat-search').focus();
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'session-item');
    assert.equal(await focusedChat(page), all[0]);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="session-row"]')), false, 'Tab leaves the list');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focusedChat(page), all[0]);

    // Arrows, Home and End; no wrap at the ends.
    await page.keyboard.press('End');
    assert.equal(await focusedChat(page), all[N - 1]);
    await page.keyboard.press('ArrowDown');
    assert.equal(await focusedChat(page), all[N - 1]);
    await page.keyboard.press('Home');
    assert.equal(await focusedChat(page), all[0]);
    for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowDown');
    assert.equal(await focusedChat(page), 'Garden notes');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focusedChat(page), 'Garden notes');
    await shot(page, 'keyboard-chat-list-focus-1280');

    // Enter opens it.
    await page.keyboard.press('Enter');
    await page
      .locator('.heading strong')
      .filter({ hasText: /^Garden notes$/ })
      .waitFor();
    await page.getByTestId('turn-user').filter({ hasText: 'Message of Garden notes' }).waitFor();
    assert.equal(await page.locator('[aria-current="true"][data-testid="session-item"] .title').textContent(), 'Garden notes');

    // The list remembers where the focus was: back into it with Shift+Tab lands on the same chat.
    await page.getByTestId('composer').focus();
    await page.getByTestId('chat-search').focus();
    await page.keyboard.press('Tab');
    assert.equal(await focusedChat(page), 'Garden notes');

    // F2: rename the focused chat.
    await page.keyboard.press('F2');
    assert.equal(await focused(page), 'rename-input');
    const selected = await page.evaluate(() => {
      const input = document.activeElement;
      return input.value.slice(input.selectionStart, input.selectionEnd);
    });
    assert.equal(selected, 'Garden notes', 'the old title is selected');
    await page.keyboard.type('Allotment diary');
    await page.keyboard.press('Enter');
    await page.locator('.heading strong').filter({ hasText: 'Allotment diary' }).waitFor();
    assert.equal(await focusedChat(page), 'Allotment diary', 'focus is back on the renamed chat');
    let db = await pollDb(page, (d) => d.sessions.find((s) => s.id === 'kb-s8')?.title === 'Allotment diary', {
      what: 'the rename stored',
    });
    assert.equal(db.sessions.find((s) => s.id === 'kb-s9').title, 'Garden notes, part two', 'the other Garden chat is untouched');

    // F2 then Escape: nothing changes.
    await page.keyboard.press('F2');
    await page.keyboard.type('Not this');
    await page.keyboard.press('Escape');
    assert.equal(await focusedChat(page), 'Allotment diary');

    // Right arrow: its Rename, then its Delete; left goes back.
    await page.keyboard.press('ArrowRight');
    assert.equal(await focused(page), 'rename-chat');
    assert.equal(await focusedChat(page), 'Allotment diary');
    await page.keyboard.press('ArrowRight');
    assert.equal(await focused(page), 'delete-chat');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await focused(page), 'session-item');

    // Delete on the next chat: Cancel keeps it (and the focus on it), OK deletes it.
    await page.keyboard.press('ArrowDown');
    assert.equal(await focusedChat(page), 'Garden notes, part two');
    await page.keyboard.press('Delete');
    assert.match(await answerDialog(page, { ok: false }), /Garden notes, part two/);
    assert.equal(await focusedChat(page), 'Garden notes, part two');
    assert.ok(
      (await readDb(page, ['sessions'])).sessions.some((s) => s.id === 'kb-s9'),
      'Cancel kept it',
    );
    await page.keyboard.press('Delete');
    assert.match(await answerDialog(page), /Garden notes, part two/);
    await page.getByTestId('session-row').filter({ hasText: 'Garden notes, part two' }).waitFor({ state: 'detached' });
    db = await pollDb(page, (d) => !d.sessions.some((s) => s.id === 'kb-s9'), { what: 'the chat deleted' });
    assert.deepEqual(
      db.turns.filter((t) => t.sessionId === 'kb-s9'),
      [],
    );
    assert.equal(db.sessions.length, N - 1);
    assert.equal(await focusedChat(page), 'Chat number 10', 'focus moves on to the chat that took its place');

    // Delete from its Delete button, reached with the right arrow (Enter presses it).
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    await answerDialog(page);
    await pollDb(page, (d) => !d.sessions.some((s) => s.id === 'kb-s10'), { what: 'the second chat deleted' });
    assert.equal(await focusedChat(page), 'Chat number 11');

    const expected = all
      .map((t) => (t === 'Garden notes' ? 'Allotment diary' : t))
      .filter((t) => t !== 'Garden notes, part two' && t !== 'Chat number 10');
    assert.deepEqual(await titles(page), expected);

    // After a reload: the same list, the same store.
    await freshChat(page, N - 2);
    assert.deepEqual(await titles(page), expected);
    db = await readDb(page, ['sessions', 'turns']);
    assert.equal(db.sessions.find((s) => s.id === 'kb-s8').title, 'Allotment diary');
    assert.deepEqual(
      db.sessions.filter((s) => s.id === 'kb-s9' || s.id === 'kb-s10'),
      [],
    );
    assert.equal(db.turns.length, 2 * (N - 2));
    // Still one Tab stop, and the keys still work.
    assert.equal(await page.locator('[data-testid="chats-drawer"] [tabindex="0"][data-chat-id]').count(), 1);
    await page.getByTestId('chat-search').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('End');
    assert.equal(await focusedChat(page), expected.at(-1));
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('looks, 1280 and 375 px, light and dark: the focused chat, the skip link, the Memory toolbar on one line with its menu', async () => {
  for (const [width, scheme] of [
    [1280, 'light'],
    [1280, 'dark'],
    [375, 'light'],
    [375, 'dark'],
  ]) {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      await page.emulateMedia({ colorScheme: scheme });
      await importChats(page);
      await freshChat(page);
      const name = (what) => `keyboard-${what}-${width}-${scheme}`;
      // The skip link, focused from the page's start.
      await page.locator('a.brand').focus();
      await page.keyboard.press('Shift+Tab');
      assert.equal(await focused(page), 'skip-link');
      await shot(page, name('skip-link'));
      // The chat list with the focus ring (on a phone, in its drawer).
      if (width === 375) await page.getByTestId('open-chats').click();
      await page.getByTestId('chat-search').focus();
      await page.keyboard.press('Tab');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      assert.equal(await focusedChat(page), 'Chat number 02');
      await shot(page, name('chat-list-focus'));
      await page.keyboard.press('ArrowRight');
      await shot(page, name('chat-list-rename-focus'));

      // The Memory view with the user's own memories (the demo banner would be another line).
      await page.goto(`${server.url}/#/memory`);
      const toolbar = page.getByTestId('memory-toolbar');
      const recall = page.getByTestId('search-model-recall');
      await recall.waitFor();
      assert.match(await page.getByTestId('memory-count').textContent(), /^3 memories/);
      const line = await recall.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || 20);
      const box = await toolbar.boundingBox();
      if (width === 375) {
        assert.ok(box.height < 2 * line, `the toolbar is one line at 375 px: ${box.height} px high, a line is ${line} px`);
        // Every control is still there, one tap away.
        const more = page.getByTestId('toolbar-more');
        assert.equal(await more.getAttribute('aria-expanded'), 'false');
        assert.equal(await page.getByTestId('open-demo').isVisible(), false);
        await shot(page, name('memory-toolbar'));
        await more.click();
        assert.equal(await more.getAttribute('aria-expanded'), 'true');
        for (const label of ['Explore the demo', 'Import ChatGPT or Claude history…', 'Import LoCoMo…'])
          assert.ok(await page.getByRole('button', { name: label }).isVisible(), label);
        await shot(page, name('memory-toolbar-menu'));
        // Escape closes it and gives the focus back to More.
        await page.getByRole('button', { name: 'Import LoCoMo…' }).focus();
        await page.keyboard.press('Escape');
        assert.equal(await more.getAttribute('aria-expanded'), 'false');
        assert.equal(await focused(page), 'toolbar-more');
        // The imports still open their pickers from the menu.
        await more.click();
        const [chooser] = await Promise.all([
          page.waitForEvent('filechooser'),
          page.getByRole('button', { name: 'Import LoCoMo…' }).click(),
        ]);
        assert.ok(chooser);
        assert.equal(await more.getAttribute('aria-expanded'), 'false', 'a choice closes the menu');
      } else {
        assert.equal(await page.getByTestId('toolbar-more').count(), 0, 'no menu where there is room');
        assert.ok(await page.getByTestId('open-demo').isVisible());
        await shot(page, name('memory-toolbar'));
      }
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});
