// Every status word is true. A chat's memory state is said the same way in the
// chat list, the chat's header badge, the app header's job badge, the ended-chat line and the memory
// notice, for every state (open, queued/memorising, waiting for a model, waiting with memory creation
// off, failed with "Try again now", not remembered, remembered, nothing worth remembering), checked
// against the store and again after a reload. And the engine: a model server that stops answering
// shows "not reachable" with a reconnect that works once it is back, and its error is shown once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, PATIENCE_MS, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, loadTestModel, newChat, pollDb, readDb, say, send, setScript, setScriptHolding, startChat } from './flows.mjs';
import { startFakeOpenAiServer } from '../support/fake-openai-server.mjs';

const server = serveApp();
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const exactly = (s) => new RegExp(`^\\s*${esc(s)}\\s*$`);

/** A screenshot at 1280 px and one at 375 px of the same state. */
async function shots(page, name) {
  const size = page.viewportSize();
  for (const [width, height] of [
    [1280, 800],
    [375, 740],
  ]) {
    await page.setViewportSize({ width, height });
    await page.waitForTimeout(150);
    await shot(page, `${name}-${width}`);
  }
  await page.setViewportSize(size);
}

/** Shows the chat whose title starts with `title` (through the drawer on a phone). */
async function openChat(page, title) {
  await page.getByTestId('nav-chat').click();
  const toggle = page.getByRole('button', { name: 'Show past sessions' });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByTestId('session-item').filter({ hasText: title }).first().click();
  await page.locator('.heading strong').filter({ hasText: title }).waitFor();
}

/** The status word of the chat shown, in the chat list (after the date). */
async function listWord(page, title) {
  const item = page.locator('[data-testid="session-item"][aria-current="true"]');
  assert.match(await item.locator('.title').textContent(), new RegExp(`^${esc(title)}`));
  return (await item.locator('.meta').textContent()).split(' · ').at(-1).trim();
}

/**
 * The chat `title` is shown; waits until its header badge says `want.label`, then checks every
 * place against the one state: the list, the app header's job badge (`want.job`, null: none), the
 * ended line and the notice under the chat.
 */
async function expectWords(page, title, want, what, { timeout = PATIENCE_MS } = {}) {
  await page
    .getByTestId('session-status')
    .filter({ hasText: exactly(want.label) })
    .waitFor({ timeout })
    .catch(async (e) => {
      const shown = await page
        .getByTestId('session-status')
        .textContent()
        .catch(() => '(none)');
      throw new Error(`${what}: the chat's badge says "${shown}", not "${want.label}" (${e.message.split('\n')[0]})`);
    });
  assert.equal(await listWord(page, title), want.label, `${what}: the chat list`);
  const job = page.getByTestId('job-badge');
  if (want.job === null) assert.equal(await job.count(), 0, `${what}: no job badge in the header`);
  else {
    assert.equal(await job.count(), 1, `${what}: a job badge in the header`);
    assert.equal((await job.textContent()).trim(), want.job ?? want.label, `${what}: the header's job badge`);
  }
  const ended = page.getByTestId('ended-note');
  if (want.ended === null) assert.equal(await ended.count(), 0, `${what}: no ended line`);
  else assert.match((await ended.textContent()).replace(/\s+/g, ' ').trim(), want.ended, `${what}: the ended line`);
  const notice = page.getByTestId('memory-progress').or(page.getByTestId('memory-updated'));
  if (want.notice === null) assert.equal(await notice.count(), 0, `${what}: no notice`);
  else assert.match((await notice.textContent()).replace(/\s+/g, ' ').trim(), want.notice, `${what}: the notice`);
}

const sessionOf = (db, title) => db.sessions.find((s) => s.title.startsWith(title));
const jobOf = (db, title) => db.jobs.find((j) => j.sessionId === sessionOf(db, title)?.id);
const memoriesOf = (db, title) => db.memories.filter((m) => m.sessionId === sessionOf(db, title)?.id);

const WORDS = {
  open: { label: 'open', job: null, ended: null, notice: null },
  remembered: {
    label: 'remembered',
    job: null,
    ended:
      /^This chat has ended and is remembered\. Sending a message starts a new chat that follows on from this one: its replies see these messages\./,
    notice: /Memory updated\. Tealeaf learned 1 new memory/,
  },
  nothing: {
    label: 'nothing to remember',
    job: null,
    ended: /^This chat has ended and was memorised: nothing in it needed remembering\./,
    notice: /^Memory updated\. Nothing from this chat needed remembering\.$/,
  },
  notRemembered: {
    label: 'not remembered',
    job: null,
    ended: /^This chat has ended and is not remembered: making new memories was switched off when it ended\./,
    notice: /^This chat ended while making new memories was switched off, so Tealeaf did not remember it\.$/,
  },
  memorising: {
    label: 'memorising 1/4',
    ended: /^This chat has ended and is being remembered\./,
    notice: /^Memorising this chat: step 1 of 4, summarising the chat\.$/,
  },
  waitingOff: {
    label: 'waiting: memory off',
    ended: /^This chat has ended and waits to be remembered: making new memories is switched off\./,
    notice: /^Waiting to memorise this chat: making new memories is switched off in Settings\. It is memorised once you switch it on\.$/,
  },
  waitingModel: {
    label: 'waiting for a model',
    ended: /^This chat has ended and will be remembered once a model is loaded\./,
    notice: /^Waiting to memorise this chat: memorising needs a loaded model\. Load one in Models\.$/,
  },
  failed: {
    label: 'memorising failed',
    ended: /^This chat has ended; memorising it failed\./,
    notice:
      /^Memorising this chat failed: The scripted model could not write JSON\. Try again now Tealeaf also tries again the next time it opens\.$/,
  },
};

async function setCreation(page, on) {
  await page.getByTestId('nav-settings').click();
  const box = page.getByTestId('switch-memory-creation');
  if (on) await box.check();
  else await box.uncheck();
  await page.getByTestId('nav-chat').click();
}

test('remembered, and memorised with nothing worth remembering, say so everywhere; also after a restart', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await startChat(page, server.url, { delayMs: 1 });

    // Open.
    await say(page, 'I keep bees on the roof');
    await expectWords(page, 'I keep bees', WORDS.open, 'open');

    // Remembered: one memory made from it.
    await page.getByTestId('end-session').click();
    await expectWords(page, 'I keep bees', WORDS.remembered, 'remembered');
    let db = await readDb(page);
    const first = sessionOf(db, 'I keep bees');
    assert.equal(first.status, 'memorised');
    assert.equal(memoriesOf(db, 'I keep bees').length, 1);

    // The same words again make no new memory (a duplicate): memorised, but nothing to remember.
    // "memorised" alone would call it remembered.
    await newChat(page);
    await say(page, 'I keep bees on the roof');
    await page.getByTestId('end-session').click();
    await expectWords(page, 'I keep bees', WORDS.nothing, 'nothing to remember');
    db = await readDb(page);
    const dup = db.sessions.find((s) => s.title.startsWith('I keep bees') && s.id !== first.id);
    assert.equal(dup.status, 'memorised');
    assert.equal(db.memories.filter((m) => m.sessionId === dup.id).length, 0);
    await shots(page, 'status-nothing-to-remember');
    await h.close();

    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    await page.getByTestId('session-item').first().waitFor();
    // Both in the list, each with its own word (the memories are read after the list).
    await page.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="session-item"] .meta')].some((m) => m.textContent.endsWith('nothing to remember')),
    );
    const words = (await page.getByTestId('session-item').filter({ hasText: 'I keep bees' }).locator('.meta').allTextContents()).map((m) =>
      m.split(' · ').at(-1).trim(),
    );
    assert.deepEqual(words.sort(), ['nothing to remember', 'remembered']);
    await page.getByTestId('session-item').first().click();
    await expectWords(page, 'I keep bees', WORDS.nothing, 'nothing to remember, after a restart');
    await page.getByTestId('session-item').nth(1).click();
    await expectWords(page, 'I keep bees', WORDS.remembered, 'remembered, after a restart');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a chat that ended with memory creation off is "not remembered" everywhere, never "will be remembered"; also after a reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    await setCreation(page, false);
    await say(page, 'My aunt lives in Porto');
    await page.getByTestId('end-session').click();
    await expectWords(page, 'My aunt', WORDS.notRemembered, 'not remembered');
    let db = await readDb(page);
    assert.equal(sessionOf(db, 'My aunt').status, 'ended');
    assert.equal(jobOf(db, 'My aunt'), undefined, 'no job');
    await shots(page, 'status-not-remembered');

    // Switched on again: it stays not remembered (it ended while off).
    await setCreation(page, true);
    await page.reload();
    await openChat(page, 'My aunt');
    await expectWords(page, 'My aunt', WORDS.notRemembered, 'not remembered, after a reload');
    db = await readDb(page);
    assert.equal(jobOf(db, 'My aunt'), undefined, 'still no job');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('memorising, waiting with memory creation off, and waiting for a model: true words, also after a reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    // A summary held until the test lets it answer: the job stays in step 1.
    await startChat(page, server.url, { delayMs: 1 });
    await setScriptHolding(page, { delayMs: 1, holdJson: ['session_memories'] });
    await say(page, 'I am learning the oboe');
    await page.getByTestId('end-session').click();
    await expectWords(page, 'I am learning', WORDS.memorising, 'memorising');
    await shots(page, 'status-memorising');

    // Memory creation off while it runs: it waits, and says why.
    await setCreation(page, false);
    await expectWords(page, 'I am learning', WORDS.waitingOff, 'waiting: memory off');
    let db = await readDb(page);
    assert.equal(jobOf(db, 'I am learning').status, 'pending');
    assert.equal(sessionOf(db, 'I am learning').status, 'ended');
    await shots(page, 'status-waiting-memory-off');
    await page.reload();
    await openChat(page, 'I am learning');
    await expectWords(page, 'I am learning', WORDS.waitingOff, 'waiting: memory off, after a reload');

    // Creation on, but no model after the reload: waiting for a model (not "memorising…" beside "No model").
    await setCreation(page, true);
    await expectWords(page, 'I am learning', WORDS.waitingModel, 'waiting for a model');
    assert.match(await page.getByTestId('model-status').textContent(), /No model/);
    await shots(page, 'status-waiting-for-a-model');
    await page.reload();
    await openChat(page, 'I am learning');
    await expectWords(page, 'I am learning', WORDS.waitingModel, 'waiting for a model, after a reload');
    db = await readDb(page);
    assert.equal(jobOf(db, 'I am learning').status, 'pending');

    // A model: memorised step by step (its summary held while that is read), then remembered.
    await setScriptHolding(page, { delayMs: 1, holdJson: ['session_memories'] });
    await loadTestModel(page, server.url);
    await openChat(page, 'I am learning');
    await expectWords(page, 'I am learning', WORDS.memorising, 'memorising after the reload');
    await setScript(page, { delayMs: 1 });
    await expectWords(page, 'I am learning', WORDS.remembered, 'remembered after the reload');
    db = await readDb(page);
    assert.equal(sessionOf(db, 'I am learning').status, 'memorised');
    assert.deepEqual(
      memoriesOf(db, 'I am learning').map((m) => m.text),
      ['The user said: I am learning the oboe'],
    );
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('memorising that failed says why once, offers "Try again now", and a retry that works remembers the chat; also after a reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    await say(page, 'My bike is green');
    await setScript(page, { delayMs: 1, failJson: 'The scripted model could not write JSON' });
    await page.getByTestId('end-session').click();
    await expectWords(page, 'My bike', WORDS.failed, 'failed');
    let db = await readDb(page);
    assert.equal(jobOf(db, 'My bike').status, 'failed');
    assert.equal(jobOf(db, 'My bike').lastError, 'The scripted model could not write JSON');
    await page.waitForTimeout(300); // a toast would be up by now
    assert.equal(await page.getByTestId('toast-error').count(), 0, 'no toast repeats it');
    const body = await page.locator('body').textContent();
    assert.equal(body.split('could not write JSON').length - 1, 1, 'the reason is shown once');
    await shots(page, 'status-failed');

    // After a reload a failed job gets a fresh round: with no model it waits (true), then fails again.
    await page.reload();
    await openChat(page, 'My bike');
    await expectWords(page, 'My bike', WORDS.waitingModel, 'failed, after a reload without a model');
    await loadTestModel(page, server.url);
    await openChat(page, 'My bike');
    await expectWords(page, 'My bike', WORDS.failed, 'failed again after the reload');

    // Try again now, with a model that works: remembered, in the store and the view.
    await setScript(page, { delayMs: 1 });
    await page.getByTestId('retry-memorising').click();
    await expectWords(page, 'My bike', WORDS.remembered, 'remembered after Try again now');
    db = await pollDb(page, (d) => jobOf(d, 'My bike')?.status === 'done', { what: 'the retried job' });
    assert.equal(sessionOf(db, 'My bike').status, 'memorised');
    assert.deepEqual(
      memoriesOf(db, 'My bike').map((m) => m.text),
      ['The user said: My bike is green'],
    );
    await page.reload();
    await openChat(page, 'My bike');
    await expectWords(page, 'My bike', WORDS.remembered, 'remembered, after a reload');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a model server that stops answering is "not reachable", its error is shown once, and Reconnect works once it is back', async () => {
  let fake = await startFakeOpenAiServer({ delayMs: 1 });
  const port = Number(new URL(fake.url).port);
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await page.goto(`${server.url}/#/models`);
    await page.getByTestId('server-url').fill(fake.url);
    await page.getByTestId('server-connect').click();
    await page.getByTestId('server-model').waitFor();
    await page.getByTestId('server-use').click();
    const status = page.getByTestId('model-status');
    await status.filter({ hasText: 'tiny-chat' }).waitFor();
    await page.getByTestId('nav-chat').click();
    assert.equal(await say(page, 'My sister Ana plays the cello'), 'Served locally: My sister Ana plays the cello ✓');

    // The server stops.
    await fake.close();
    await send(page, 'Are you still there?');
    const failed = page.locator('[data-testid="turn-assistant"][data-status="error"]');
    await failed.waitFor();
    const said = `The model server at ${fake.url} did not answer. Is it still running?`;
    assert.equal((await failed.getByTestId('turn-status').textContent()).replace(/\s+/g, ' ').trim(), `${said} Reconnect`);
    await status.filter({ hasText: 'Model server not reachable' }).waitFor();
    assert.doesNotMatch(await status.textContent(), /tiny-chat/);
    assert.match(await page.getByTestId('model-dot').getAttribute('class'), /^dot bad\b/, 'the dot is not green');
    assert.equal(await page.getByTestId('reconnect').count(), 1);
    assert.equal(
      await page.getByTestId('composer').getAttribute('placeholder'),
      'The model server is not reachable; memory commands still work',
    );

    // Ending the chat: its memorising waits for the server (not three boxes of one error).
    await page.getByTestId('end-session').click();
    await page
      .getByTestId('session-status')
      .filter({ hasText: exactly('waiting for the model server') })
      .waitFor();
    assert.match(
      (await page.getByTestId('memory-progress').textContent()).trim(),
      /^Waiting to memorise this chat until the model server answers again\.$/,
    );
    assert.match(
      (await page.getByTestId('ended-note').textContent()).replace(/\s+/g, ' '),
      /^This chat has ended and will be remembered once the model server answers again\./,
    );
    await page.waitForTimeout(1_000); // time for retries, toasts and boxes to appear, were there any
    const body = (await page.locator('body').textContent()).replace(/\s+/g, ' ');
    assert.equal(body.split('did not answer').length - 1, 1, `the error is shown once: ${body}`);
    assert.doesNotMatch(body, /\?\./, 'no "?." in any sentence');
    assert.equal(await page.getByTestId('toast-error').count(), 0);
    let db = await readDb(page);
    const job = db.jobs.find((j) => j.sessionId === db.sessions[0].id);
    assert.equal(job.status, 'pending', 'the job waits; it did not fail');
    assert.equal(job.attempts, 0, 'no attempt was spent on a server that is gone');
    await shots(page, 'status-server-not-reachable');

    // Reloaded while the server is still down: not reachable at once, never green.
    await page.reload();
    await status.filter({ hasText: 'Model server not reachable' }).waitFor();
    assert.match(await page.getByTestId('model-dot').getAttribute('class'), /^dot bad\b/);
    await openChat(page, 'My sister Ana');
    await page
      .getByTestId('session-status')
      .filter({ hasText: exactly('waiting for the model server') })
      .waitFor();

    // Reconnect while it is still down: still not reachable, and the job still waits untouched.
    await page.getByTestId('reconnect').click();
    await page.waitForTimeout(500);
    await status.filter({ hasText: 'Model server not reachable' }).waitFor();
    db = await readDb(page, ['jobs']);
    assert.deepEqual(
      db.jobs.map((j) => [j.status, j.attempts]),
      [['pending', 0]],
    );

    // The server is back on the same address: Reconnect, the chat is memorised and replies work.
    fake = await startFakeOpenAiServer({ delayMs: 1, port });
    // This time through the failed reply's own Reconnect (the header's was tried above).
    await page.getByTestId('reply-reconnect').click();
    await status.filter({ hasText: 'tiny-chat' }).waitFor();
    assert.match(await page.getByTestId('model-dot').getAttribute('class'), /^dot ok\b/);
    await page
      .getByTestId('session-status')
      .filter({ hasText: exactly('remembered') })
      .waitFor();
    db = await pollDb(page, (d) => d.jobs.length === 1 && d.jobs[0].status === 'done', { what: 'the memorised chat' });
    assert.ok(db.memories.some((m) => m.text === 'The user said: My sister Ana plays the cello'));
    await newChat(page);
    assert.equal(await say(page, 'Back again?'), 'Served locally: Back again? ✓');
    await shots(page, 'status-server-back');
    await h.close();

    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await fake.close();
    await h.dispose();
  }
});
