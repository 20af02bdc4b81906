// "Memory the user controls", end to end: the demo is a space of its own (never in a
// real reply, removable in one click, old demo records offered for removal), the chat says what
// memorising is doing and what it learned, memory switches and a temporary chat, "No longer true"
// on any trait, and the "remembered" details in plain words. Each checks the data and the view,
// also after a reload; screenshots at 1280 and 375 px.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import {
  assertNoOffHost,
  endAndRemember,
  exportBackup,
  held,
  leaveDemo,
  loadTestModel,
  newChat,
  openDemo,
  readDb,
  say,
  setScript,
  setScriptHolding,
  startChat,
  startImport,
} from './flows.mjs';

const server = serveApp();

/** A screenshot at 1280 px and one at 375 px of the same state. */
async function shots(page, name) {
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForTimeout(150);
  await shot(page, `${name}-1280`);
  await page.setViewportSize({ width: 375, height: 740 });
  await page.waitForTimeout(150);
  await shot(page, `${name}-375`);
  await page.setViewportSize(size);
}

const DEMO_WORDS = /knee|half-marathon|Lisbon|\bAna\b|swimming|espresso|physio|Portuguese|wedding/i;

/** The user opens the Memory view of their own space; resolves once it counts their one memory. */
async function openOwnMemory(page) {
  await page.getByTestId('nav-memory').click();
  await page
    .getByTestId('memory-count')
    .filter({ hasText: /^1 memor/ })
    .waitFor();
}

async function openChat(page, title) {
  await page.getByTestId('nav-chat').click();
  const toggle = page.getByRole('button', { name: 'Show past sessions' });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByTestId('session-item').filter({ hasText: title }).first().click();
}

test('the demo is a space of its own: a real reply never remembers it, also after a reload; removed in one click', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    // A real memory first, so that real replies do remember something.
    await say(page, 'I grow tomatoes on my balcony');
    await endAndRemember(page);

    await openDemo(page, { button: 'open-demo' });
    await page
      .getByTestId('memory-count')
      .filter({ hasText: /^2\d memories/ })
      .waitFor();
    assert.match(await page.getByTestId('demo-banner').textContent(), /You are looking at the demo: nothing here is yours/);
    await shots(page, 'demo-banner');
    // The demo's own database holds the demo; the user's holds none of it.
    const demoDb = await readDb(page, ['sessions', 'memories']);
    assert.ok(demoDb.memories.length >= 27 && demoDb.memories.every((m) => m.id.startsWith('demo:')));
    const ownWhileInDemo = await readDb(page, ['sessions', 'memories'], { db: 'tealeaf' });
    assert.ok(ownWhileInDemo.memories.every((m) => !m.id.startsWith('demo:')));
    // Nothing can be imported into the demo (it would vanish with "Remove the demo"): the Memory
    // view offers no import, and Settings says to leave the demo first.
    const importHistory = page.getByRole('button', { name: 'Import ChatGPT or Claude history…' });
    assert.equal(await importHistory.count(), 0, 'no history import in the demo');
    assert.equal(await page.getByRole('button', { name: /^Import (LoCoMo|a LoCoMo)/ }).count(), 0, 'no LoCoMo import in the demo');
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('import-demo').waitFor();
    assert.equal(await page.getByTestId('import-file').count(), 0, 'no backup import in the demo');
    assert.equal(await page.getByTestId('export').textContent(), 'Export the demo');

    await leaveDemo(page);
    await page.getByTestId('nav-chat').waitFor();
    assert.equal(await page.getByTestId('demo-banner').count(), 0);
    await openOwnMemory(page);
    await importHistory.waitFor();
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('import-file').waitFor();
    assert.equal(await page.getByTestId('export').textContent(), 'Export everything');

    // The test model is not kept loaded across page loads: load it again.
    await loadTestModel(page, server.url);
    await page.getByTestId('nav-chat').click();
    await newChat(page);
    await say(page, 'How is my knee after the long run, and the tomatoes on the balcony?');
    const chip = page.getByTestId('remembered').last();
    await chip.waitFor();
    await chip.click();
    const detail = await page.getByTestId('remembered-detail').last().textContent();
    assert.match(detail, /tomatoes/);
    assert.doesNotMatch(detail, DEMO_WORDS, 'the real reply remembered nothing of the demo');
    const real = await readDb(page, ['turns', 'memories']);
    const used = real.turns.filter((t) => t.usedMemory).flatMap((t) => [...t.usedMemory.memoryIds, ...t.usedMemory.segmentIds]);
    assert.ok(used.length > 0 && used.every((id) => !id.startsWith('demo:')), `used ${used}`);
    assert.ok(real.memories.every((m) => !m.id.startsWith('demo:')));
    assertNoOffHost(h);
    await h.close();

    // After a restart: still the user's own space, and a new reply still remembers nothing of it.
    h = await launch({ profile });
    page = h.page;
    await loadTestModel(page, server.url);
    assert.equal(await page.getByTestId('demo-banner').count(), 0);
    await openChat(page, 'How is my knee');
    await setScript(page, { delayMs: 1 });
    await say(page, 'Remind me about my knee and the half-marathon in Lisbon');
    const last = page.getByTestId('remembered').last();
    if (await last.count()) {
      await last.click();
      assert.doesNotMatch(await page.getByTestId('remembered-detail').last().textContent(), DEMO_WORDS);
    }
    const after = await readDb(page, ['turns']);
    assert.ok(after.turns.flatMap((t) => t.usedMemory?.memoryIds ?? []).every((id) => !id.startsWith('demo:')));

    // Remove the demo from inside it: its database is gone, the user's memory stays.
    await openDemo(page, { button: 'open-demo' });
    await page.getByTestId('remove-demo').click();
    await page.waitForLoadState('load');
    await openOwnMemory(page);
    assert.equal(await page.getByTestId('demo-banner').count(), 0);
    const names = await page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name));
    assert.ok(!names.includes('tealeaf-demo'), `databases: ${names}`);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test("demo records an earlier version put into the user's memory are offered for removal, and removed", async () => {
  const profile = tempProfile();
  const h = await launch({ profile });
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    await say(page, 'I grow tomatoes on my balcony');
    await endAndRemember(page);
    // The old way: the demo written into the user's own database (a backup of the demo, merged).
    await openDemo(page, { button: 'open-demo' });
    const file = await exportBackup(page, join(profile, 'demo-backup.json'));
    await leaveDemo(page);
    await page.getByTestId('nav-settings').click();
    await startImport(page, file);
    await page.getByTestId('import-done').waitFor();
    await page.reload();

    const offer = page.getByTestId('legacy-demo');
    await offer.waitFor();
    assert.match(await offer.textContent(), /6 chats, 27 memories/);
    await shots(page, 'demo-legacy-offer');
    let db = await readDb(page, ['sessions', 'memories', 'edges', 'turns'], { db: 'tealeaf' });
    assert.ok(db.memories.some((m) => m.id.startsWith('demo:')));

    await page.getByTestId('remove-legacy-demo').click();
    await offer.waitFor({ state: 'detached' });
    // It says what went, counted as the store held it.
    const [chats, memories] = [db.sessions, db.memories].map((rs) => rs.filter((r) => r.id.startsWith('demo:')).length);
    await page
      .getByTestId('toast-info')
      .filter({ hasText: `Removed the old demo from your memory: ${chats} chats and ${memories} memories.` })
      .waitFor();
    db = await readDb(page, ['sessions', 'memories', 'edges', 'turns'], { db: 'tealeaf' });
    for (const store of ['sessions', 'memories', 'edges', 'turns']) {
      assert.ok(
        db[store].every((r) => !r.id.startsWith('demo:') && !(r.from ?? '').startsWith('demo:') && !(r.to ?? '').startsWith('demo:')),
        `${store} holds no demo record`,
      );
    }
    assert.ok(
      db.memories.some((m) => /tomatoes/.test(m.text)),
      "the user's own memory stays",
    );
    await page.reload();
    await openOwnMemory(page);
    assert.equal(await page.getByTestId('legacy-demo').count(), 0, 'not offered again after a reload');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('memorising shows its step, then "Memory updated" with what was learned and a link to the explorer', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    // The summarising call is held, so the progress is seen while it runs (not raced by a timer).
    await startChat(page, server.url, { delayMs: 1 });
    await setScriptHolding(page, { delayMs: 1, holdJson: ['session_memories'] });
    await say(page, 'I adopted a puppy named Biscuit last week');
    await say(page, 'Biscuit loves chasing the red ball in the park');
    await page.getByTestId('end-session').click();
    await held(page, 'session_memories');
    const progress = page.getByTestId('memory-progress');
    await progress.filter({ hasText: /Memorising this chat: step \d of 4/ }).waitFor();
    assert.doesNotMatch(await page.getByTestId('session-status').textContent(), /memorising soon/);
    assert.match(await page.getByTestId('session-status').textContent(), /memorising \d\/4|waiting/);
    await shots(page, 'memory-progress');
    await setScript(page, { delayMs: 1 });

    const notice = page.getByTestId('memory-updated');
    await notice.waitFor();
    const text = await notice.textContent();
    assert.match(text, /Memory updated\./);
    assert.match(text, /learned 2 new memories/);
    // Shown as the user reads it: "You said ...", not "The user said ...".
    assert.match(text, /You said: I adopted a puppy named Biscuit/);
    assert.doesNotMatch(text, /The user/);
    await shots(page, 'memory-updated');
    const db = await readDb(page, ['memories']);
    assert.equal(db.memories.length, 2);
    assert.ok(
      db.memories.every((m) => m.text.startsWith('The user said')),
      'stored text unchanged',
    );
    await h.close();

    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    await openChat(page, 'I adopted a puppy');
    await page.getByTestId('memory-updated').waitFor();
    await page.getByTestId('memory-updated-open').click();
    await page.locator('aside[aria-label="Memory details"] h3').filter({ hasText: 'Biscuit' }).first().waitFor();
    await shots(page, 'memory-updated-explorer');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('memory switches are respected, and a temporary chat leaves nothing in the store', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    await say(page, 'My cat Miso sleeps on the piano');
    await endAndRemember(page);

    // Memory use off: a reply about Miso remembers nothing.
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('switch-memory-use').uncheck();
    await shots(page, 'settings-memory-switches');
    await page.getByTestId('nav-chat').click();
    await newChat(page);
    await say(page, 'Where does Miso sleep?');
    assert.equal(await page.getByTestId('remembered').count(), 0, 'no remembered details with memory use off');
    let db = await readDb(page, ['turns', 'sessions']);
    const asked = db.sessions.find((s) => s.title.startsWith('Where does Miso'));
    const reply = db.turns.find((t) => t.sessionId === asked.id && t.role === 'assistant');
    assert.equal(reply.usedMemory, undefined, 'nothing retrieved with memory use off');

    // Memory creation off: the chat ends, is kept, is not memorised; no job is queued.
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('switch-memory-creation').uncheck();
    await page.getByTestId('nav-chat').click();
    await page.getByTestId('end-session').click();
    await page.getByTestId('session-status').filter({ hasText: 'not remembered' }).waitFor();
    await page
      .getByTestId('memory-progress')
      .filter({ hasText: /switched off/ })
      .waitFor();
    await shots(page, 'chat-not-remembered');
    // The chat list says the same (it said "memorising soon" for such a chat, which never came).
    await page.getByTestId('session-item').filter({ hasText: 'Where does Miso' }).filter({ hasText: 'not remembered' }).waitFor();
    db = await readDb(page, ['sessions', 'jobs', 'memories']);
    const miso = db.sessions.find((s) => s.title.startsWith('Where does Miso'));
    assert.equal(miso.status, 'ended');
    assert.ok(!db.jobs.some((j) => j.sessionId === miso.id), 'no memorising job');
    assert.equal(db.memories.length, 1);

    // Temporary chat: answered, but nothing of it is stored, during or after.
    await page.getByTestId('temporary-chat').click();
    await page.getByTestId('temporary-note').waitFor();
    await say(page, 'My secret password hint is blue walrus');
    await page.getByTestId('temporary-badge').waitFor();
    await shots(page, 'chat-temporary');
    const during = JSON.stringify(await readDb(page));
    assert.doesNotMatch(during, /blue walrus/);
    await page.getByTestId('close-temporary').click();
    await page.getByTestId('temporary-badge').waitFor({ state: 'detached' });
    assert.doesNotMatch(JSON.stringify(await readDb(page)), /blue walrus/);
    assert.equal(await page.getByTestId('session-item').filter({ hasText: 'blue walrus' }).count(), 0);
    await h.close();

    // After a restart: the switches stay off, and nothing of the temporary chat exists.
    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/settings`);
    await page.getByTestId('switch-memory-use').waitFor();
    assert.equal(await page.getByTestId('switch-memory-use').isChecked(), false);
    assert.equal(await page.getByTestId('switch-memory-creation').isChecked(), false);
    assert.doesNotMatch(JSON.stringify(await readDb(page)), /blue walrus/);
    // Creation on again: the ended chat stays unremembered (it ended while off); a new one is memorised.
    await page.getByTestId('switch-memory-creation').check();
    await loadTestModel(page, server.url);
    await page.getByTestId('nav-chat').click();
    await setScript(page, { delayMs: 1 });
    await newChat(page);
    await say(page, 'I bought a green bicycle');
    await endAndRemember(page);
    db = await readDb(page, ['memories']);
    assert.ok(db.memories.some((m) => /green bicycle/.test(m.text)));
    assert.ok(!db.memories.some((m) => /Where does Miso/.test(m.text)));
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('"No longer true" on any trait, in the persona panel and the detail panel; "Mark current" undoes it; kept after a reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/memory`);
    await openDemo(page);
    await page.getByRole('tab', { name: /persona/i }).click();
    // A current trait with no newer trait replacing it.
    const trait = page.getByTestId('trait').filter({ hasText: 'encouraging' }).first();
    await trait.getByRole('button', { name: 'No longer true' }).click();
    // It asks since when: today, as no change links it.
    await trait.getByTestId('end-date-confirm').click();
    await page.getByTestId('trait').filter({ hasText: 'encouraging' }).filter({ hasText: /until/ }).first().waitFor();
    let db = await readDb(page, ['memories']);
    const coach = db.memories.find((m) => m.id === 'demo:m:coach');
    assert.ok(Number.isFinite(coach.endedAt), 'endedAt stored');
    assert.equal(coach.supersededBy, undefined);
    await shots(page, 'persona-no-longer-true');

    // A reload keeps this tab in the demo, and the trait ended.
    await page.reload();
    await page.getByTestId('demo-banner').waitFor();
    await page.getByRole('tab', { name: /persona/i }).click();
    const ended = page.getByTestId('trait').filter({ hasText: 'encouraging' }).first();
    await ended.filter({ hasText: /until/ }).waitFor();
    // The detail panel says so too, and "Mark current" there undoes it.
    await ended.locator('button.text').click();
    const panel = page.locator('aside[aria-label="Memory details"]');
    await panel.getByTestId('past-tag').filter({ hasText: /until/ }).waitFor();
    await shots(page, 'detail-no-longer-true');
    await panel.getByRole('button', { name: 'Mark current' }).click();
    await panel.getByTestId('past-tag').waitFor({ state: 'detached' });
    db = await readDb(page, ['memories']);
    assert.equal(db.memories.find((m) => m.id === 'demo:m:coach').endedAt, undefined);
    // And "No longer true" from the detail panel on a trait that a newer one replaces.
    await page.getByTestId('trait').filter({ hasText: 'tea person' }).first().locator('button.text').click();
    await panel.getByRole('button', { name: 'Mark current' }).click();
    await panel.getByRole('button', { name: 'No longer true' }).click();
    await panel.getByTestId('end-date-confirm').click();
    await panel.getByTestId('past-tag').waitFor();
    db = await readDb(page, ['memories']);
    const tea = db.memories.find((m) => m.id === 'demo:m:tea');
    assert.ok(Number.isFinite(tea.endedAt));
    assert.equal(tea.supersededBy, 'demo:m:coffee');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('"remembered" details read plainly: relation labels, You/Tealeaf passages, a "why" list that fits 375 px', async () => {
  const h = await launch({ viewport: { width: 375, height: 740 } });
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1, replies: [{ when: 'bike', say: 'A **good** bike matters. `Check` the tyres.' }] });
    await say(page, 'I ride my bike to work every day along the canal');
    await say(page, 'My bike is a blue bike with a basket');
    await endAndRemember(page);
    await page.getByRole('button', { name: 'Show past sessions' }).click();
    await newChat(page);
    await say(page, 'Tell me about my bike on the canal');
    await page.getByTestId('remembered').last().click();
    const detail = page.getByTestId('remembered-detail').last();
    await detail.waitFor();
    const passages = detail.getByTestId('remembered-passage');
    assert.ok((await passages.count()) > 0, 'a passage of the past chat');
    const passage = await passages.first().textContent();
    assert.match(passage, /You: /);
    assert.match(passage, /Tealeaf: /);
    assert.doesNotMatch(passage, /\buser:|\bassistant:|\*\*|`/);
    for (const rel of await detail.getByTestId('remembered-relation').allTextContents()) {
      assert.match(rel, /Same topic|Cause|Reason|Want|React|Hindered by|Changed/);
      assert.doesNotMatch(rel, /SameTopic|HinderedBy/);
    }
    await detail.locator('summary').click();
    await detail.getByTestId('remembered-why').waitFor();
    assert.match(await detail.getByTestId('remembered-why').textContent(), /same words \d\.\d\d · overall/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `overflows by ${overflow}px`);
    const wide = await detail.evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(wide <= 1, `the details scroll sideways by ${wide}px`);
    await detail.getByTestId('remembered-why').scrollIntoViewIfNeeded();
    await shots(page, 'remembered-details');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test("entering the demo while a chat is being memorised: nothing reaches the demo, and the job finishes in the user's memory", async () => {
  const h = await launch();
  try {
    const { page } = h;
    // The summarising call is held: the demo is entered while the job is in it (not raced by a timer).
    await startChat(page, server.url, { delayMs: 1 });
    await setScriptHolding(page, { delayMs: 1, holdJson: ['session_memories'] });
    await say(page, 'I adopted a puppy named Biscuit last week');
    await page.getByTestId('end-session').click();
    await held(page, 'session_memories');
    await page
      .getByTestId('memory-progress')
      .filter({ hasText: /step \d of 4/ })
      .waitFor();
    // Entered while the call is out (the memory still empty: the demo loads into it); the call
    // dies with the page, and the job finishes back in the user's memory.
    await openDemo(page);
    await setScript(page, { delayMs: 1 });
    // Time for anything to reach the demo, were it going to (a check that something does not
    // happen: a slow machine can make it weaker, not fail it).
    await page.waitForTimeout(2000);
    const demo = await readDb(page, ['memories', 'sessions']);
    assert.ok(
      demo.memories.every((m) => m.id.startsWith('demo:')),
      'no memory of the real chat in the demo',
    );
    assert.ok(!JSON.stringify(demo).includes('Biscuit'));

    await leaveDemo(page);
    await loadTestModel(page, server.url);
    await openChat(page, 'I adopted a puppy');
    await page.getByTestId('memory-updated').waitFor();
    const own = await readDb(page, ['memories', 'jobs'], { db: 'tealeaf' });
    assert.ok(own.memories.some((m) => /Biscuit/.test(m.text)));
    assert.ok(own.memories.every((m) => !m.id.startsWith('demo:')));
    assert.ok(own.jobs.every((j) => j.status === 'done'));
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
