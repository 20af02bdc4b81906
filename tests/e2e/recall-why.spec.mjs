// The "why these" view of a reply says what the self-reflection did (seed 002, asked in the
// refinement call): whether what was found first was enough, or not and a second search ran with
// the model's keywords. The judgement and keywords are stored with the reply and shown, also after
// a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, endAndRemember, newChat, readDb, say, startChat } from './flows.mjs';

const server = serveApp();

/** The stored assistant turn that answered `question` (found through its session's user turn). */
async function replyTo(page, question) {
  const db = await readDb(page, ['turns']);
  const asked = db.turns.find((t) => t.role === 'user' && t.text === question);
  assert.ok(asked, `the question "${question}" is stored`);
  return db.turns.find((t) => t.sessionId === asked.sessionId && t.role === 'assistant' && t.index === asked.index + 1);
}

test('"not enough" searches again with the model’s keywords, "enough" does not, and "why these" says which, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    // The scripted reflection judges a turn about the commute not enough, and writes keywords.
    await startChat(page, server.url, { delayMs: 1, keywords: ['bike', 'canal'], keywordsWhen: 'commute' });
    await say(page, 'I ride my bike to work every day along the canal');
    await endAndRemember(page);

    // Found what the message asks about: no call before the reply at all (the gate).
    await newChat(page);
    const sure = 'Do I ride my bike to work along the canal?';
    await say(page, sure);
    const covered = await replyTo(page, sure);
    assert.ok(covered.usedMemory?.memoryIds.length > 0);
    assert.equal(covered.usedMemory.reflected, undefined, 'no judgement asked when retrieval is sure');

    // Unsure (found the bike, not the office or the mornings), asked, and judged enough: no second search.
    await newChat(page);
    const direct = 'Which way does my bike take me to the office each morning?';
    await say(page, direct);
    const first = await replyTo(page, direct);
    assert.ok(first.usedMemory?.memoryIds.length > 0, 'the bike memory was retrieved directly');
    assert.equal(first.usedMemory.reflected, 'enough', 'the judgement is stored');
    assert.equal(first.usedMemory.requery, undefined, 'no second search when it is enough');

    // Judged not enough: the model's keywords find the memory.
    await newChat(page);
    const vague = 'How is the daily commute going?';
    await say(page, vague);
    const second = await replyTo(page, vague);
    assert.equal(second.usedMemory?.reflected, 'searched');
    assert.equal(second.usedMemory?.requery, 'bike canal', 'the keywords are stored with the reply');
    const db = await readDb(page, ['memories']);
    const bike = db.memories.find((m) => /canal/.test(m.text));
    assert.ok(second.usedMemory.memoryIds.includes(bike.id), 'and the second search found the bike memory');
    // Stored with what the reflection was shown (here: nothing the first search found).
    assert.deepEqual(second.usedMemory.reflectedOn, []);

    const check = async (p) => {
      for (const chip of await p.getByTestId('remembered').all()) await chip.click();
      for (const summary of await p.getByTestId('remembered-detail').locator('summary').all()) await summary.click();
      const line = p.locator('[data-testid="remembered-requery"][data-state="searched"]');
      await line.waitFor();
      assert.match(await line.textContent(), /not enough to answer, so it searched again for: bike canal/);
      assert.equal(await p.getByTestId('remembered-requery').count(), 1, 'this chat shows its one reply’s line');
    };
    await check(page);
    await shot(page, 'recall-why-requery');
    // The chat judged enough says so too.
    await page.getByTestId('session-item').filter({ hasText: 'Which way' }).first().click();
    await page.getByTestId('remembered').last().click();
    await page.getByTestId('remembered-detail').last().locator('summary').click();
    const enough = page.locator('[data-testid="remembered-requery"][data-state="enough"]');
    await enough.waitFor();
    assert.match(await enough.textContent(), /judged it enough to answer, so it did not search again/);
    await shot(page, 'recall-why-enough');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    const toggle = page.getByRole('button', { name: 'Show past sessions' });
    if (await toggle.isVisible()) await toggle.click();
    await page.getByTestId('session-item').filter({ hasText: 'daily commute' }).first().click();
    await page.getByTestId('remembered').last().waitFor();
    await check(page);
    // On a phone the sentence wraps inside the details.
    await page.setViewportSize({ width: 375, height: 800 });
    await page.locator('[data-testid="remembered-requery"][data-state="searched"]').scrollIntoViewIfNeeded();
    await shot(page, 'recall-why-requery-375');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('self-reflection switched off in Settings: no judgement and no second search, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await startChat(page, server.url, { delayMs: 1, keywords: ['bike', 'canal'], keywordsWhen: 'commute' });
    await say(page, 'I ride my bike to work every day along the canal');
    await endAndRemember(page);

    await page.getByTestId('nav-settings').click();
    const toggle = page.getByTestId('switch-reflection');
    assert.equal(await toggle.isChecked(), true, 'on by default');
    await toggle.uncheck();
    const switchIn = (db) => db.settings.find((x) => x.key === 'app')?.value.memory.reflectiveRequery;
    const stored = async (p) => switchIn(await readDb(p, ['settings']));
    for (let i = 0; (await stored(page)) !== false; i++) {
      assert.ok(i < 100, 'the switch is stored off');
      await page.waitForTimeout(50);
    }
    await toggle.scrollIntoViewIfNeeded();
    await shot(page, 'settings-reflection-off');
    await page.setViewportSize({ width: 375, height: 800 });
    await toggle.scrollIntoViewIfNeeded();
    await shot(page, 'settings-reflection-off-375');
    await page.setViewportSize({ width: 1280, height: 800 });

    const ask = async (p, text, foundNothing) => {
      await p.getByTestId('nav-chat').click();
      await newChat(p);
      await say(p, text);
      const r = await replyTo(p, text);
      // The same turn that searched again with the switch on: now not judged, one search only.
      assert.equal(r.usedMemory?.reflected, undefined, 'not judged');
      assert.equal(r.usedMemory?.requery, undefined, 'no second search');
      if (!foundNothing) return;
      const db = await readDb(p, ['memories']);
      const bike = db.memories.find((m) => /canal/.test(m.text));
      assert.ok(!(r.usedMemory?.memoryIds ?? []).includes(bike.id), 'the keywords found nothing, as none were asked for');
    };
    await ask(page, 'How is the daily commute going?', true);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    h = await launch({ profile });
    page = h.page;
    await startChat(page, server.url, { delayMs: 1, keywords: ['bike', 'canal'], keywordsWhen: 'commute' });
    await page.getByTestId('nav-settings').click();
    assert.equal(await page.getByTestId('switch-reflection').isChecked(), false, 'kept off after a reload');
    assert.equal(await stored(page), false);
    // (Found first now: the earlier question was remembered, and its timeline holds the bike memory.)
    await ask(page, 'And how was the commute this week?', false);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('topic nouns: switched on in Settings, a question finds a memory by its noun in another form, "why these" says so; kept after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    // No keywords for a second search: what the topic side finds is all that is found.
    await startChat(page, server.url, { delayMs: 1, keywords: [] });
    await say(page, 'My child loves the zoo');
    await endAndRemember(page);
    const question = 'What are the children up to?';

    // Off (the default): "children" shares no indexed word with "child". Memory creation is off for
    // this chat, so the question itself is not remembered and cannot be found later.
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('switch-memory-creation').uncheck();
    await page.getByTestId('nav-chat').click();
    await newChat(page);
    await say(page, question);
    const off = await replyTo(page, question);
    assert.deepEqual(off.usedMemory?.memoryIds ?? [], [], 'off: nothing found');
    await page.getByTestId('end-session').click();
    await page.getByTestId('session-status').filter({ hasText: 'not remembered' }).waitFor();

    await page.getByTestId('nav-settings').click();
    await page.getByTestId('switch-memory-creation').check();
    const toggle = page.getByTestId('switch-topics');
    assert.equal(await toggle.isChecked(), false, 'off by default');
    await toggle.check();
    // The tagger loads and every memory's nouns are indexed; the switch says when that is done.
    await page.getByTestId('topics-status').filter({ hasText: 'Topic matching is on.' }).waitFor();
    await page.getByTestId('nav-chat').click();

    // `own`: the zoo memory is ranked on its own (later, the earlier question's memory can bring it
    // in through their timeline instead).
    const asked = async (p, text, own) => {
      await newChat(p);
      await say(p, text);
      const reply = await replyTo(p, text);
      const db = await readDb(p, ['memories']);
      const zoo = db.memories.find((m) => /zoo/.test(m.text));
      assert.ok(reply.usedMemory?.memoryIds.includes(zoo.id), 'on: the zoo memory is found through "child"');
      const scores = reply.usedMemory.scores;
      const score = own ? scores.find((s) => s.unitId === zoo.id) : scores.find((s) => s.topic > 0);
      assert.ok(score?.topic > 0 && score.topicRank >= 1, `the topic side ranked it: ${JSON.stringify(scores)}`);
      const chip = p.getByTestId('remembered').last();
      await chip.click();
      const detail = p.getByTestId('remembered-detail').last();
      await detail.locator('summary').click();
      await detail.getByTestId('remembered-why').filter({ hasText: 'shared topics' }).waitFor();
    };
    await asked(page, 'Tell me what the children like.', true);
    await shot(page, 'recall-why-topics');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    // After a reload the switch is still on, and the index is built with the nouns again.
    h = await launch({ profile });
    page = h.page;
    await startChat(page, server.url, { delayMs: 1, keywords: [] });
    await page.getByTestId('nav-settings').click();
    assert.equal(await page.getByTestId('switch-topics').isChecked(), true, 'kept after a reload');
    await page.getByTestId('nav-chat').click();
    await asked(page, 'How old are the children now?', false);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
