// "Bring your history": a ChatGPT and a Claude conversations.json imported through the
// Memory view become ended chats with their real dates (in the store and in the chats list), are
// found by chat search, are memorised by the background jobs (scripted model), survive a reload;
// a bad file shows what to do and changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { launch, shot, startServer, tempProfile } from './harness.mjs';
import { answerDialog, assertNoOffHost, editOpenMemory, loadTestModel, openMemory, pollDb, readDb, setScript } from './flows.mjs';

const CHATGPT = resolve(import.meta.dirname, '../fixtures/chatgpt-conversations.json');
const CLAUDE = resolve(import.meta.dirname, '../fixtures/claude-conversations.json');

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

async function importHistory(page, file, expect) {
  await page.getByTestId('import-history').first().setInputFiles(file);
  await page.getByTestId('import-result').filter({ hasText: expect }).waitFor();
  await page.getByTestId('memory-busy').waitFor({ state: 'detached' });
}

const counts = (db) => ({ sessions: db.sessions.length, turns: db.turns.length, jobs: db.jobs.length, memories: db.memories.length });

async function search(page, query) {
  await page.getByTestId('chat-search').fill(query);
  await page.getByTestId('search-snippet').filter({ hasText: query }).first().waitFor();
  const titles = await page.getByTestId('session-item').allTextContents();
  await page.getByTestId('chat-search').fill('');
  return titles;
}

test('ChatGPT and Claude history: dated chats, search, memorised in the background, kept after reload; a bad file changes nothing', async () => {
  const profile = tempProfile();
  let h = await launch({ profile, viewport: { width: 375, height: 800 } });
  try {
    const { page } = h;
    await loadTestModel(page, server.url);
    await setScript(page, { delayMs: 2 });
    // Paused first: the import says where to switch memorising on, and the chats wait.
    await page.goto(`${server.url}/#/settings`);
    await page.getByTestId('switch-memory-creation').uncheck();
    await page.goto(`${server.url}/#/memory`);
    await page.getByTestId('load-demo').waitFor();
    await shot(page, 'history-empty-375');

    await importHistory(page, CHATGPT, 'Imported 3 chats from ChatGPT');
    const note = await page.getByTestId('import-result').textContent();
    assert.match(note, /1 chat without messages was left out/);
    assert.match(note, /once “Make new memories from chats” is switched on again in Settings/);
    await shot(page, 'history-result-375');
    let db = await readDb(page);
    assert.deepEqual(counts(db), { sessions: 3, turns: 10, jobs: 3, memories: 0 });
    const lisbon = db.sessions.find((s) => s.title === 'Trip to Lisbon with Ana');
    assert.ok(lisbon.id.startsWith('chatgpt-'), lisbon.id);
    assert.deepEqual(
      [lisbon.status, lisbon.endReason, lisbon.startedAt, lisbon.lastActivityAt],
      ['ended', 'import', Date.UTC(2023, 2, 14, 9, 30, 0, 250), Date.UTC(2023, 2, 14, 9, 42)],
    );
    const lisbonTurns = db.turns.filter((t) => t.sessionId === lisbon.id).sort((a, b) => a.index - b.index);
    // The regenerated reply the user last saw; not the one it replaced.
    assert.equal(lisbonTurns[1].text, 'Lisbon in May is lovely: warm days and few crowds.');
    assert.equal(lisbonTurns[1].time, Date.UTC(2023, 2, 14, 9, 32));

    // On again: the jobs run, oldest chat first.
    await page.goto(`${server.url}/#/settings`);
    await page.getByTestId('switch-memory-creation').check();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${server.url}/#/memory`);
    await importHistory(page, CLAUDE, 'Imported 2 chats from Claude');
    assert.match(await page.getByTestId('import-result').textContent(), /being memorised in the background.*To pause, switch off/);
    db = await pollDb(page, (d) => d.jobs.length === 5 && d.jobs.every((j) => j.status === 'done'), { what: 'memorised history' });
    assert.ok(
      db.sessions.every((s) => s.status === 'memorised'),
      'every imported chat memorised',
    );
    const texts = db.memories.map((m) => m.text);
    assert.ok(
      texts.some((t) => t.includes('Clint Yeastwood')),
      texts.join(' | '),
    );
    assert.ok(texts.some((t) => t.includes('Mrs Okafor')));
    assert.equal(new Set(texts).size, texts.length, 'no memory twice');
    // The explorer filled as the jobs finished; the note stays above it.
    await page
      .getByTestId('memory-count')
      .filter({ hasText: `${texts.length} memories` })
      .waitFor();
    await page.getByTestId('import-result').waitFor();
    await shot(page, 'history-result-1280');
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, 'history-explorer-375');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Importing the same file again adds nothing.
    await importHistory(page, CHATGPT, 'Nothing new to import from ChatGPT (3 chats were already there');
    assert.deepEqual(counts(await readDb(page)), counts(db));

    // The chats list: every chat with its year; search finds words of a message.
    await page.goto(`${server.url}/#/chat`);
    const row = (title) => page.getByTestId('session-item').filter({ hasText: title });
    await row('Trip to Lisbon with Ana').waitFor();
    assert.match(await row('Trip to Lisbon with Ana').textContent(), /Mar 14, 2023/);
    assert.match(await row('Learning the cello').textContent(), /Jan 10, 2024/);
    assert.match(await row('My tomato plants').textContent(), /2023/);
    assert.deepEqual(
      (await search(page, 'Yeastwood')).map((t) => t.includes('Sourdough starter')),
      [true],
    );
    assert.equal((await search(page, 'pastel de nata')).length, 1);
    await row('Learning the cello').click();
    await page.getByTestId('conversation').filter({ hasText: 'Practise twenty minutes a day.' }).waitFor();
    await shot(page, 'history-chat-1280');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    // After a reload: the same chats and memories, and a bad file changes nothing.
    h = await launch({ profile });
    const p = h.page;
    await p.goto(`${server.url}/#/chat`);
    await p.getByTestId('session-item').filter({ hasText: 'Trip to Lisbon with Ana' }).waitFor();
    assert.equal(await p.getByTestId('session-item').count(), 5);
    const before = await readDb(p);
    assert.deepEqual(counts(before), counts(db));
    await p.goto(`${server.url}/#/memory`);
    await p.getByTestId('memory-count').waitFor();
    const broken = JSON.parse(JSON.stringify([{ id: 'x', title: 'Broken', mapping: { a: { parent: null, children: 'none' } } }]));
    await p
      .getByTestId('import-history')
      .first()
      .setInputFiles({ name: 'conversations.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(broken)) });
    const error = p.getByTestId('import-result').filter({ hasText: 'Could not import conversations.json' });
    await error.waitFor();
    assert.match(await error.textContent(), /ChatGPT export, but one chat could not be read.*Nothing was imported.*Export your data/);
    assert.equal(await error.getAttribute('role'), 'alert');
    await p
      .getByTestId('import-history')
      .first()
      .setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('{"notes": []}') });
    await p.getByTestId('import-result').filter({ hasText: 'not a ChatGPT or Claude export' }).waitFor();
    await shot(p, 'history-error-1280');
    assert.deepEqual(counts(await readDb(p)), counts(before));
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

// Exports are cumulative, so importing the same file again is normal. It must
// not undo what the user did since: a chat deleted stays deleted (and is named in the result), a
// memory corrected keeps the correction. On the old code the chat came back and was memorised again
// under the same memory ids, and the corrected text became the model's text with edited: false.
test('importing the same Claude export again brings back no deleted chat and keeps a corrected memory, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile, viewport: { width: 1280, height: 800 } });
  const corrected = 'My cello teacher is Mrs Okafor-Byrne.';
  try {
    const { page } = h;
    await loadTestModel(page, server.url);
    await page.goto(`${server.url}/#/memory`);
    await importHistory(page, CLAUDE, 'Imported 2 chats from Claude');
    const db = await pollDb(page, (d) => d.jobs.length === 2 && d.jobs.every((j) => j.status === 'done'), { what: 'memorised history' });
    const cello = db.sessions.find((s) => s.title === 'Learning the cello');
    const okafor = db.memories.find((m) => m.sessionId === cello.id && m.text.includes('Mrs Okafor'));
    assert.ok(okafor, db.memories.map((m) => m.text).join(' | '));

    // The user corrects the memory, then deletes the chat and keeps its memories.
    await openMemory(page, 'Mrs Okafor');
    await editOpenMemory(page, corrected);
    await page.goto(`${server.url}/#/chat`);
    const row = page.getByTestId('session-row').filter({ hasText: 'Learning the cello' });
    await row.getByTestId('delete-chat').click();
    await answerDialog(page); // box unticked: the memories stay
    await row.waitFor({ state: 'detached' });

    // The same file again.
    await page.goto(`${server.url}/#/memory`);
    await importHistory(page, CLAUDE, 'Nothing new to import from Claude');
    const note = await page.getByTestId('import-result').textContent();
    assert.match(note, /1 chat was already there; 1 chat you deleted was not brought back/);
    await shot(page, 'history-reimport-1280');
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, 'history-reimport-375');
    await page.setViewportSize({ width: 1280, height: 800 });
    // Any job the import could have queued has had its chance to run.
    await page.waitForTimeout(500);
    const check = async (p) => {
      const d = await readDb(p, ['sessions', 'turns', 'memories', 'jobs', 'tombstones']);
      assert.equal(
        d.sessions.find((s) => s.id === cello.id),
        undefined,
        'the deleted chat stays deleted',
      );
      assert.deepEqual(
        d.turns.filter((t) => t.sessionId === cello.id),
        [],
      );
      assert.deepEqual(
        d.jobs.filter((j) => j.sessionId === cello.id),
        [],
      );
      const m = d.memories.find((x) => x.id === okafor.id);
      assert.equal(m.text, corrected);
      assert.equal(m.edited, true);
      assert.deepEqual(
        d.tombstones.map((t) => [t.kind, t.id]),
        [['session', cello.id]],
      );
      return d;
    };
    await check(page);
    await h.close();

    // After a reload: still so, in the store and in the views.
    h = await launch({ profile, viewport: { width: 1280, height: 800 } });
    const p = h.page;
    await p.goto(`${server.url}/#/chat`);
    await p.getByTestId('session-row').filter({ hasText: 'My tomato plants' }).waitFor();
    assert.equal(await p.getByTestId('session-row').filter({ hasText: 'Learning the cello' }).count(), 0);
    await check(p);
    await loadTestModel(p, server.url);
    await p.goto(`${server.url}/#/memory`);
    await importHistory(p, CLAUDE, 'Nothing new to import from Claude');
    await openMemory(p, 'Okafor-Byrne');
    await check(p);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('both imports work from the keyboard alone, on the empty page and in the explorer toolbar', async () => {
  const LOCOMO = resolve(import.meta.dirname, '../fixtures/locomo-mini.json');
  const h = await launch({ viewport: { width: 1280, height: 800 } });
  try {
    const { page } = h;
    // Playwright catches file choosers only once a listener is on; set now, it is on before any Enter.
    page.on('filechooser', () => {});
    await page.goto(`${server.url}/#/memory`);
    await page.getByTestId('load-demo').waitFor();
    /** Tabs until the button named `name` has focus, presses Enter and picks `file` in the chooser. */
    const chooseByKeyboard = async (name, file) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        const label = await page.evaluate(() => document.activeElement?.textContent?.trim());
        if (label === name) break;
      }
      assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), name, `${name} reached with Tab`);
      const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Enter')]);
      await chooser.setFiles(file);
    };
    await chooseByKeyboard('Import a LoCoMo conversation', LOCOMO);
    await page.getByTestId('memory-count').waitFor();
    await page.getByTestId('memory-busy').waitFor({ state: 'detached' });
    const afterLocomo = counts(await readDb(page));
    assert.ok(afterLocomo.sessions > 0 && afterLocomo.memories > 0, JSON.stringify(afterLocomo));

    await page.locator('h1, h2').first().click();
    await chooseByKeyboard('Import ChatGPT or Claude history…', CHATGPT);
    await page.getByTestId('import-result').filter({ hasText: 'Imported 3 chats from ChatGPT' }).waitFor();
    assert.equal(counts(await readDb(page)).sessions, afterLocomo.sessions + 3);
    // The toolbar's LoCoMo import is a button too.
    await page.locator('h1, h2').first().click();
    await chooseByKeyboard('Import LoCoMo…', LOCOMO);
    await page.getByTestId('memory-busy').waitFor({ state: 'detached' });
    await page
      .getByText(/already there/)
      .first()
      .waitFor();
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
