// The settings are one state shared by every tab. Two pages of one browser
// profile: the memory switches turned off in tab A hold in tab B (its chats, its replies, its
// running job) at once, without a reload, and a later settings write in B does not turn them on
// again. Each checks the stored data and the view, also after a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, PATIENCE_MS, serveApp, shot } from './harness.mjs';
import {
  assertNoOffHost,
  endAndRemember,
  held,
  loadTestModel,
  newChat,
  pickTestModel,
  readDb,
  say,
  setScript,
  setScriptHolding,
  startChat,
} from './flows.mjs';

const server = serveApp();

/** JSON calls recorded by the scripted model in (shared) localStorage, by schema title. */
async function recordedCalls(page) {
  return page.evaluate(() => {
    const out = {};
    for (let i = 0; i < localStorage.length; i++) {
      const m = /^tealeaf-test-call:([^:]+):/.exec(localStorage.key(i) ?? '');
      if (m) out[m[1]] = (out[m[1]] ?? 0) + 1;
    }
    return out;
  });
}

/** Polls `check` (async) until it holds; the error names what was awaited (`timeout`: a safety net). */
async function until(check, what, timeout = PATIENCE_MS) {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The stored app settings (the record every tab reads). */
async function storedSettings(page) {
  const { settings } = await readDb(page, ['settings']);
  return settings.find((s) => s.key === 'app')?.value ?? {};
}

/** The user switches one memory switch off in Settings. */
async function switchOff(page, name) {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId(`switch-memory-${name}`).uncheck();
  const key = name === 'use' ? 'memoryUse' : 'memoryCreation';
  await until(async () => (await storedSettings(page))[key] === false, `memory ${name} off in storage`);
}

/** Both switches as the Settings view of `page` shows them. */
async function switchesShown(page) {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('switch-memory-use').waitFor();
  return {
    use: await page.getByTestId('switch-memory-use').isChecked(),
    creation: await page.getByTestId('switch-memory-creation').isChecked(),
  };
}

/** Two tabs of one profile, both open on the app; B's errors are collected too. */
async function twoTabs() {
  const h = await launch();
  const a = h.page;
  const b = await h.context.newPage();
  b.on('pageerror', (e) => h.errors.push(String(e)));
  return { h, a, b };
}

test('memory creation off in tab A: a chat ended in tab B afterwards is not memorised, also after a reload', async () => {
  const { h, a, b } = await twoTabs();
  try {
    await startChat(b, server.url, { delayMs: 1, recordCalls: true });
    await a.goto(`${server.url}/`);
    await switchOff(a, 'creation');

    await say(b, 'My sister Jo moved to Glasgow in May');
    await b.getByTestId('end-session').click();
    // Ended: a job would have been queued with the end, in the same write.
    const ended = async () =>
      (await readDb(b, ['sessions'])).sessions.some((s) => s.title.startsWith('My sister Jo') && s.status === 'ended');
    await until(ended, 'the chat ended');
    let db = await readDb(b, ['sessions', 'jobs', 'memories']);
    const jo = db.sessions.find((s) => s.title.startsWith('My sister Jo'));
    assert.equal(jo.status, 'ended');
    assert.deepEqual(db.jobs, [], 'no memorising job queued');
    assert.deepEqual(db.memories, []);
    assert.equal((await recordedCalls(b)).session_memories, undefined, 'no summarising call');
    await b
      .getByTestId('session-status')
      .filter({ hasText: /not remembered/ })
      .waitFor();
    await shot(b, 'tabs-settings-creation-off-b');
    // B never reloaded: its Settings view follows A's switch.
    assert.deepEqual(await switchesShown(b), { use: true, creation: false });

    await b.reload();
    await b.getByTestId('nav-chat').click();
    await b
      .getByTestId('session-item')
      .filter({ hasText: 'My sister Jo' })
      .filter({ hasText: /not remembered/ })
      .waitFor();
    db = await readDb(b, ['sessions', 'jobs', 'memories']);
    assert.equal(db.sessions.find((s) => s.id === jo.id).status, 'ended');
    assert.deepEqual([db.jobs, db.memories], [[], []]);
    assert.equal((await storedSettings(b)).memoryCreation, false);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('memory creation off in tab A while tab B memorises: B starts no further step, also after a reload', async () => {
  const { h, a, b } = await twoTabs();
  try {
    // The summarising call is held (scripted-model.ts, holdJson): the switch goes off in A while
    // B's job waits on it, however long that takes, and only then does the call answer.
    await startChat(b, server.url, { delayMs: 1, recordCalls: true });
    await setScriptHolding(b, { delayMs: 1, recordCalls: true, holdJson: ['session_memories'] });
    await a.goto(`${server.url}/`);
    await say(b, 'I adopted a puppy named Biscuit last week');
    await b.getByTestId('end-session').click();
    await held(b, 'session_memories');
    await switchOff(a, 'creation');
    await setScript(b, { delayMs: 1, recordCalls: true });
    // The call has answered; time for a later step to start, had it been going to (a check that
    // something does not happen: a slow machine can make it weaker, not fail it).
    await b.waitForTimeout(2_000);
    let db = await readDb(b, ['sessions', 'jobs', 'memories', 'segments']);
    assert.equal(db.jobs.length, 1);
    assert.equal(db.jobs[0].step, 'summarise', 'the job waits at the step it was in');
    assert.notEqual(db.jobs[0].status, 'done');
    assert.deepEqual([db.memories, db.segments], [[], []]);
    assert.equal(db.sessions[0].status, 'ended');
    const calls = await recordedCalls(b);
    assert.deepEqual(calls, { session_memories: 1 }, 'no further model call');
    assert.equal(await b.getByTestId('memory-updated').count(), 0);

    await b.reload();
    await loadTestModel(b, server.url);
    await b.waitForTimeout(1500);
    db = await readDb(b, ['sessions', 'jobs', 'memories']);
    assert.equal(db.jobs[0].step, 'summarise');
    assert.deepEqual(db.memories, []);
    assert.equal(db.sessions[0].status, 'ended');
    assert.deepEqual(await recordedCalls(b), { session_memories: 1 });
    assert.equal((await switchesShown(b)).creation, false);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test("memory use off in tab A: tab B's next reply remembers nothing, also after a reload", async () => {
  const { h, a, b } = await twoTabs();
  try {
    // Something to remember, then B opens and loads its model.
    await startChat(a, server.url, { delayMs: 1 });
    await say(a, 'My cat Miso sleeps on the piano');
    await endAndRemember(a);
    await startChat(b, server.url, { delayMs: 1 });
    // With memory use on, B's reply does remember (the fixture can tell the difference).
    await say(b, 'Where does Miso sleep on the piano?');
    await b.getByTestId('remembered').last().waitFor();

    await switchOff(a, 'use');
    await b.getByTestId('nav-chat').click();
    await newChat(b);
    await say(b, 'Does Miso still sleep on the piano?');
    assert.equal(await b.getByTestId('remembered').count(), 0, 'no "remembered" line');
    const db = await readDb(b, ['turns', 'sessions']);
    const asked = db.sessions.find((s) => s.title.startsWith('Does Miso'));
    const reply = db.turns.find((t) => t.sessionId === asked.id && t.role === 'assistant');
    assert.equal(reply.usedMemory, undefined, 'nothing retrieved');
    assert.doesNotMatch(reply.text, /I remembered something/);
    await shot(b, 'tabs-settings-use-off-b');

    await b.reload();
    await b.getByTestId('nav-chat').click();
    await b.getByTestId('turn-assistant').filter({ hasText: 'Does Miso still sleep' }).waitFor();
    assert.equal(await b.getByTestId('remembered').count(), 0, 'no "remembered" line after a reload');
    assert.deepEqual(await switchesShown(b), { use: false, creation: true });
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a settings write in tab B after A switched memory off keeps the switches off, in storage and in A after a reload', async () => {
  const { h, a, b } = await twoTabs();
  try {
    await a.goto(`${server.url}/`);
    await b.goto(`${server.url}/`);
    await setScript(a, { delayMs: 1 });
    await b.getByTestId('nav-chat').waitFor();
    await switchOff(a, 'creation');
    await switchOff(a, 'use');
    // B, open since before the switch-off, loads a model: a write of chatModelId.
    await b.getByTestId('nav-models').click();
    await pickTestModel(b);
    await until(async () => (await storedSettings(b)).chatModelId === 'tealeaf-test-scripted', "B's model choice stored");
    const stored = await storedSettings(b);
    assert.equal(stored.memoryCreation, false);
    assert.equal(stored.memoryUse, false);
    assert.deepEqual(await switchesShown(b), { use: false, creation: false });

    await a.reload();
    assert.deepEqual(await switchesShown(a), { use: false, creation: false });
    await shot(a, 'tabs-settings-after-stale-write-a');
    await b.reload();
    assert.deepEqual(await switchesShown(b), { use: false, creation: false });
    assert.equal((await storedSettings(a)).chatModelId, 'tealeaf-test-scripted');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
