// The "why these" view of a reply says when its first retrieval was weak and a second search ran
// with keywords the model wrote (self-reflection, seed 002): the keywords are stored with the reply
// and shown, also after a reload; a question that shares words with a memory gets no second search.
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

test('a weak first retrieval searches again with the model’s keywords, and "why these" says so, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await startChat(page, server.url, { delayMs: 1, keywords: ['bike', 'canal'] });
    await say(page, 'I ride my bike to work every day along the canal');
    await endAndRemember(page);

    // Shares words with the memory: the first search is enough.
    await newChat(page);
    const direct = 'Which way does my bike take me to work?';
    await say(page, direct);
    const first = await replyTo(page, direct);
    assert.ok(first.usedMemory?.memoryIds.length > 0, 'the bike memory was retrieved directly');
    assert.equal(first.usedMemory.requery, undefined, 'no second search when the words match');

    // No word in common with anything remembered (a new chat: the query reads the last turns too):
    // the model's keywords find the memory.
    await newChat(page);
    const vague = 'How is the daily commute going?';
    await say(page, vague);
    const second = await replyTo(page, vague);
    assert.equal(second.usedMemory?.requery, 'bike canal', 'the keywords are stored with the reply');
    const db = await readDb(page, ['memories']);
    const bike = db.memories.find((m) => /canal/.test(m.text));
    assert.ok(second.usedMemory.memoryIds.includes(bike.id), 'and the second search found the bike memory');

    const check = async (p) => {
      const chip = p.getByTestId('remembered').last();
      await chip.click();
      const detail = p.getByTestId('remembered-detail').last();
      await detail.locator('summary').click();
      const line = detail.getByTestId('remembered-requery');
      await line.waitFor();
      assert.match(await line.textContent(), /matched nothing remembered at first.*searched again for: bike canal/s);
      assert.equal(await p.getByTestId('remembered-requery').count(), 1, 'only the weak turn shows the line');
    };
    await check(page);
    await shot(page, 'recall-why-requery');
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
