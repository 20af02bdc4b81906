// Memory commands in the chat, end to end: "remember that …" stores the user's words with
// their source turn and no model call (also with no model loaded), "forget …" asks in the chat and
// deletes only what the user confirms (Undo brings it back), "what do you remember about me?" lists
// what is true now. Each checks IndexedDB and the view, also after a reload; screenshots of the
// forget card and the list at 1280 and 375 px, light and dark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, loadTestModel, openMemory, pollDb, readDb, setScript } from './flows.mjs';

const server = serveApp();
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical axe-core violations on the page as it is now (as tests/e2e/a11y.spec.mjs). */
async function audit(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.targets.join(', ')}`);
}

/** Screenshots at 1280 and 375 px, light and dark, each state checked with axe-core, the chat scrolled to its end. */
async function shots(page, name) {
  const size = page.viewportSize();
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: width === 1280 ? 800 : 740 });
      await page.waitForTimeout(150);
      await page.getByTestId('conversation').evaluate((el) => (el.scrollTop = el.scrollHeight));
      await shot(page, `${name}-${width}-${scheme}`);
      assert.deepEqual(await audit(page), [], `${name} at ${width} px, ${scheme}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(size);
}

/** Sends a memory command and waits for its answer in `state`; returns the answer's element. */
async function command(page, text, state) {
  const before = await page.getByTestId('turn-assistant').count();
  await page.getByTestId('composer').fill(text);
  await page.getByTestId('send').click();
  const answer = page.getByTestId('turn-assistant').nth(before);
  await answer.and(page.locator(`[data-state="${state}"]`)).waitFor();
  return answer;
}

const modelCalls = (page) => page.evaluate(() => Object.keys(localStorage).filter((k) => /^tealeaf-test-(chat-)?call:/.test(k)));

async function openChat(page) {
  await page.getByTestId('nav-chat').click();
  await page.getByTestId('composer').waitFor();
}

test('"remember that …" stores the words with their source turn, with no model loaded and no model call; in the Memory view after a reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/chat`);
    // No model: the composer still takes a command (and says so), and the help lists them.
    assert.match(await page.getByTestId('composer').getAttribute('placeholder'), /remember that/);
    await page.getByTestId('command-help-toggle').click();
    assert.match(await page.getByTestId('command-help').textContent(), /remember that.*forget.*what do you remember about me/s);
    const answer = await command(page, 'remember that my sister is called Ana', 'done');
    assert.equal((await answer.getByTestId('reply-body').textContent()).trim(), 'Remembered: “Your sister is called Ana.”');

    const db = await pollDb(page, (d) => d.memories.length === 1, { what: 'the memory' });
    const [user, reply] = db.turns.sort((a, b) => a.index - b.index);
    assert.equal(user.text, 'remember that my sister is called Ana');
    assert.deepEqual(reply.command, { kind: 'remember', state: 'done' });
    const [m] = db.memories;
    assert.equal(m.text, 'Your sister is called Ana.');
    assert.equal(m.kind, 'user-trait');
    assert.equal(m.edited, true);
    assert.deepEqual(m.sourceTurnIds, [user.id]);
    assert.equal(m.sessionId, user.sessionId);

    // With a model loaded: still no model call for a command.
    await loadTestModel(page, server.url);
    await setScript(page, { delayMs: 1, recordCalls: true });
    await openChat(page);
    await command(page, 'please remember that I play the cello', 'done');
    assert.deepEqual(await modelCalls(page), [], 'no model call');
    await pollDb(page, (d) => d.memories.length === 2, { what: 'the second memory' });

    await page.reload();
    await openMemory(page, 'Your sister is called Ana');
    // "Open →" goes to the turn the user said it in.
    await page.locator('aside[aria-label="Memory details"] button.source').first().click();
    await page.locator(`[data-turn-id="${user.id}"]`).waitFor();
    assert.match(page.url(), /#\/chat/);
    assert.equal(await page.locator('[data-command="remember"][data-state="done"]').count(), 2, 'the answers are kept with the chat');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('"forget …" asks in the chat, deletes only after "Forget", and Undo brings it back; also after a reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/chat`);
    await command(page, 'remember that my sister is called Ana', 'done');
    await command(page, 'remember that I play the cello', 'done');
    const card = await command(page, 'forget my sister', 'asked');
    assert.match(
      await card.getByTestId('reply-body').textContent(),
      /Forget this memory about “my sister”\? Nothing is deleted until you confirm/,
    );
    assert.equal(await card.getByTestId('forget-pick').count(), 1);
    assert.match(await card.getByTestId('forget-card').textContent(), /Your sister is called Ana/);
    // Asking deleted nothing.
    assert.equal((await readDb(page, ['memories'])).memories.length, 2);
    await shots(page, 'memory-command-forget-card');

    await card.getByTestId('forget-confirm').click();
    await card.and(page.locator('[data-state="forgotten"]')).waitFor();
    const gone = await pollDb(page, (d) => d.memories.length === 1, { what: 'the forgotten memory gone' });
    assert.equal(gone.memories[0].text, 'You play the cello.');
    const { tombstones } = await readDb(page, ['tombstones']);
    assert.deepEqual(
      tombstones.map((t) => t.kind),
      ['memory'],
    );
    assert.equal((await card.getByTestId('reply-body').textContent()).trim(), 'Forgot 1 memory.');
    await page.getByTestId('nav-memory').click();
    await page
      .getByTestId('memory-count')
      .filter({ hasText: /^1 memor/ })
      .waitFor();
    assert.equal(await page.locator('.tl button.item').filter({ hasText: 'sister' }).count(), 0);

    await openChat(page);
    await page.locator('[data-state="forgotten"]').getByTestId('command-undo').click();
    await page.locator('[data-command="forget"][data-state="undone"]').waitFor();
    const back = await pollDb(page, (d) => d.memories.length === 2, { what: 'the memory back' });
    assert.ok(back.memories.some((m) => m.text === 'Your sister is called Ana.'));
    assert.deepEqual((await readDb(page, ['tombstones'])).tombstones, []);

    await page.reload();
    await openMemory(page, 'Your sister is called Ana');
    await openChat(page);
    await page.locator('[data-command="forget"][data-state="undone"]').waitFor();
    // Nothing matching: said plainly.
    const none = await command(page, 'forget my dentist', 'none');
    assert.match(await none.textContent(), /Nothing in your memory matches “my dentist”, so nothing was forgotten/);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('"what do you remember about me?" lists the traits true now and not an ended one', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/chat`);
    await command(page, 'remember that my sister is called Ana', 'done');
    await command(page, 'remember that I work at the bakery', 'done');
    await command(page, 'remember that I live in Porto', 'done');
    // The bakery job ended: "No longer true" in the Memory view.
    await openMemory(page, 'You work at the bakery');
    const panel = page.locator('aside[aria-label="Memory details"]');
    await panel.getByTestId('toggle-past').click();
    // It asks since when (today is offered); confirmed as offered.
    await panel.getByTestId('end-date-confirm').click();
    await pollDb(page, (d) => d.memories.some((m) => m.text.includes('bakery') && m.endedAt), { what: 'the ended trait' });

    await openChat(page);
    const list = await command(page, 'What do you remember about me?', 'done');
    assert.equal((await list.getByTestId('reply-body').textContent()).trim(), 'What I remember about you that is true now (2 memories):');
    const items = await list.getByTestId('recall-item').allTextContents();
    assert.deepEqual(items.map((t) => t.trim()).sort(), ['You live in Porto.', 'Your sister is called Ana.']);
    const { turns } = await readDb(page, ['turns']);
    const stored = turns.find((t) => t.command?.kind === 'recall');
    assert.equal(stored.usedMemory.memoryIds.length, 2);
    await page.getByTestId('command-help-toggle').click();
    await shots(page, 'memory-command-list');

    await page.reload();
    await page.locator('[data-command="recall"]').getByTestId('recall-item').first().waitFor();
    assert.equal(await page.locator('[data-command="recall"]').getByTestId('recall-item').count(), 2);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
