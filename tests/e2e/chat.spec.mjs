// A full chat with the scripted test model: send, stream, stop, regenerate, end the session,
// reload: everything persisted. Also: a tab closed mid-reply keeps what had arrived.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, lastReply, loadTestModel, readDb, say, send, setScript, startChat } from './flows.mjs';

const server = serveApp();

test('send, stream, stop, regenerate, end session, reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await page.getByTestId('no-model-hint').waitFor();
    await shot(page, 'chat-empty');
    await loadTestModel(page, server.url);
    await shot(page, 'models-test-model-loaded');
    await page.goto(`${server.url}/#/chat`);

    const long = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    await setScript(page, { delayMs: 40, replies: [{ when: 'long story', say: long }] });

    await send(page, 'Hello there');
    // Streaming: the reply grows before it completes.
    await page.getByTestId('reply-body').first().waitFor();
    assert.equal(await lastReply(page), 'You said: Hello there');
    await shot(page, 'chat-first-reply');

    await send(page, 'Tell me a long story');
    await page.waitForFunction(() =>
      (document.querySelector('[data-testid="turn-assistant"]:last-of-type [data-testid="reply-body"]')?.textContent ?? '').includes(
        'word3',
      ),
    );
    await page.getByTestId('stop').click();
    const partial = await lastReply(page, { status: 'stopped' });
    assert.ok(partial.startsWith('word0 word1'), partial);
    assert.ok(partial.length < long.length, 'stop cut the reply short');
    assert.match(await page.getByTestId('turn-status').last().textContent(), /Stopped/);
    await shot(page, 'chat-stopped');

    await setScript(page, { delayMs: 5, replies: [{ when: 'long story', say: 'Once upon a time, briefly.' }] });
    await page.getByTestId('regenerate').last().click();
    assert.equal(await lastReply(page), 'Once upon a time, briefly.');
    assert.equal(await page.getByTestId('turn-assistant').count(), 2, 'regenerate replaced the reply');

    await page.getByTestId('end-session').click();
    await page
      .getByTestId('session-status')
      .filter({ hasText: /memoris|remembered/ })
      .waitFor();
    await shot(page, 'chat-session-ended');
    assertNoOffHost(h);
    await h.close();

    // Reopen the same profile: the session and every turn are still there.
    h = await launch({ profile });
    await h.page.goto(`${server.url}/#/chat`);
    const item = h.page.getByTestId('session-item').filter({ hasText: 'Hello there' });
    await item.waitFor();
    await item.click();
    const bodies = await h.page.getByTestId('reply-body').allTextContents();
    assert.deepEqual(
      bodies.map((b) => b.trim()),
      ['You said: Hello there', 'Once upon a time, briefly.'],
    );
    const users = await h.page.getByTestId('turn-user').allTextContents();
    assert.deepEqual(
      users.map((u) => u.trim()),
      ['Hello there', 'Tell me a long story'],
    );
    await shot(h.page, 'chat-after-reload');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('a tab closed mid-reply keeps what had arrived, marked interrupted', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    const long = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
    await startChat(h.page, server.url, { delayMs: 30, replies: [{ when: 'go on', say: long }] });
    await send(h.page, 'Please go on');
    await h.page.waitForFunction(() =>
      (document.querySelector('[data-testid="turn-assistant"] [data-testid="reply-body"]')?.textContent ?? '').includes('w20'),
    );
    await h.page.waitForTimeout(400); // at least one periodic save after w20
    await h.close();

    h = await launch({ profile });
    await h.page.goto(`${server.url}/#/chat`);
    const item = h.page.getByTestId('session-item').first();
    await item.waitFor();
    await item.click();
    const turn = h.page.getByTestId('turn-assistant').last();
    await turn.waitFor();
    assert.equal(await turn.getAttribute('data-status'), 'interrupted');
    const text = (await turn.getByTestId('reply-body').textContent()).trim();
    assert.ok(text.startsWith('w0 w1 w2') && text.includes('w20'), text.slice(0, 80));
    assert.ok(!text.includes('w199'));
    assert.match(await turn.getByTestId('turn-status').textContent(), /tab closed/);
    await shot(h.page, 'chat-interrupted');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

// A message longer than one message may be is refused in the composer, with a note saying
// why and what to do; nothing is sent or stored, and the text stays to be cut down.
test('a message over 990,000 characters is refused in the composer; the text stays; nothing is stored', async () => {
  const h = await launch({ viewport: { width: 1280, height: 800 } });
  try {
    const { page } = h;
    await startChat(page, server.url, {});
    const composer = page.getByTestId('composer');
    await composer.fill('x'.repeat(990_001));
    const note = page.getByTestId('composer-too-long');
    await note.waitFor();
    assert.match(await note.textContent(), /990,001 characters; Tealeaf keeps at most 990,000 in one message\. Split it/);
    assert.equal(await page.getByTestId('send').isDisabled(), true);
    assert.equal(await composer.getAttribute('aria-invalid'), 'true');
    await composer.press('Enter');
    await shot(page, 'composer-too-long-1280');
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, 'composer-too-long-375');
    assert.equal((await composer.inputValue()).length, 990_001, 'the text stays');
    const db = await readDb(page, ['sessions', 'turns']);
    assert.deepEqual([db.sessions.length, db.turns.length], [0, 0]);
    // Cut down to the limit: the note goes and the message is sent and kept. No model reads that
    // much in one go: the reply says so, and what to do, instead of sending it.
    await composer.fill('x'.repeat(990_000));
    await note.waitFor({ state: 'detached' });
    await page.getByTestId('send').click();
    // (A reply with no text never reads as settled to lastReply: wait for the failed turn itself.)
    const failed = page.getByTestId('turn-assistant').last().and(page.locator('[data-status="error"]'));
    await failed.waitFor();
    assert.match(
      await failed.getByTestId('turn-status').textContent(),
      /too long for the model in use.*Shorten the message, or choose a model with a larger window/,
    );
    const stored = await readDb(page, ['turns']);
    assert.equal(stored.turns.find((t) => t.role === 'user').text.length, 990_000);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('Enter with no model keeps the message and says why; a memory command still goes; the note follows the state', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/chat`);
    await page.getByTestId('composer').fill('hello, is anyone there?');
    await page.getByTestId('composer').press('Enter');
    const note = page.getByTestId('send-blocked');
    assert.match(await note.textContent(), /no model is loaded/);
    assert.equal(await page.getByTestId('composer').inputValue(), 'hello, is anyone there?');
    let db = await readDb(page, ['turns']);
    assert.equal(db.turns.length, 0, 'nothing stored');
    // Typing clears the note; a memory command goes without a model.
    await page.getByTestId('composer').fill('remember that my cello teacher is called Rosa');
    assert.equal(await note.count(), 0);
    await page.getByTestId('composer').press('Enter');
    await page.getByTestId('conversation').getByText('Remembered: “Your cello teacher is called Rosa.”').waitFor();
    db = await readDb(page, ['memories']);
    assert.ok(db.memories.some((m) => /Rosa/.test(m.text)));
    // With a model loaded, the same kind of message is sent and the note never shows.
    await loadTestModel(page, server.url);
    await page.goto(`${server.url}/#/chat`);
    await setScript(page, { delayMs: 2, replies: [{ when: 'anyone', say: 'Yes, here.' }] });
    assert.equal(await say(page, 'hello, is anyone there?'), 'Yes, here.');
    assert.equal(await page.getByTestId('send-blocked').count(), 0);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test("a reply that reaches the model's length limit says so; Go on asks for the rest", async () => {
  const h = await launch();
  try {
    const { page } = h;
    // 1,500 words: more than the 1,024 tokens the default model may write in one reply.
    await startChat(page, server.url, { delayMs: 1, replyWords: 1500 });
    await say(page, 'Tell me about everything');
    const cut = page.getByTestId('reply-cut');
    await cut.waitFor();
    assert.match(await cut.textContent(), /stopped at the model's length limit/);
    const last = await page.evaluate(() => window.tealeafStandin.calls.filter((c) => c.kind === 'chat').at(-1));
    assert.equal(last.cut, true, 'the stand-in cut the reply at its limit');
    await shot(page, 'chat-reply-cut');
    await setScript(page, { delayMs: 5, replies: [{ when: 'Go on.', say: 'And that is the rest.' }] });
    const before = await page.getByTestId('turn-assistant').count();
    await page.getByTestId('go-on').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('turn-assistant').nth(before).waitFor();
    assert.equal(await lastReply(page), 'And that is the rest.');
    // The cut reply keeps its note; only the last reply offers to go on, and this one finished.
    assert.equal(await cut.count(), 1);
    assert.equal(await page.getByTestId('go-on').count(), 0);
    assert.match(await page.getByTestId('turn-user').last().textContent(), /^\s*Go on\.\s+Edit\s*$/);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
