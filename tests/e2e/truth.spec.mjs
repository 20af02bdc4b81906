// What the user decides about their memory holds in every stored record, shown text,
// prompt and export. A deleted chat's facts leave the notes other replies were given; a temporary
// chat neither uses nor makes memories; an export of the demo holds the demo only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import {
  answerDialog,
  assertNoOffHost,
  endAndRemember,
  exportBackup,
  lastReply,
  loadTestModel,
  newChat,
  openDemo,
  readDb,
  say,
  setScript,
  startChat,
} from './flows.mjs';

const server = serveApp();
const SECRET = 'epilepsy';
const row = (page, title) => page.getByTestId('session-row').filter({ hasText: title });

/** Every place the secret is in the store, as "store: id". */
function whereSecret(db) {
  const out = [];
  for (const [store, records] of Object.entries(db)) {
    for (const r of records) if (JSON.stringify(r).includes(SECRET)) out.push(`${store}: ${r.id ?? r.key}`);
  }
  return out;
}

test("a chat deleted with its memories leaves no trace in other replies' notes, the view or an export", async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    // The refined note repeats what the memory said, as a model's note does.
    await startChat(page, server.url, { delayMs: 1, note: `Earlier the user told you their doctor diagnosed ${SECRET}.` });
    // A chat that stays: what the reply drew on from it must stay too (dropping everything is wrong).
    await say(page, 'My doctor is Dr Reed at the Elm Street clinic');
    await endAndRemember(page);
    await newChat(page);
    await say(page, `My doctor diagnosed ${SECRET} last spring`);
    await endAndRemember(page);
    await newChat(page);
    // Asked so that what is found leaves it open: the call before the reply runs and writes its note.
    await say(page, 'What did my doctor tell me about my health?');
    await page.getByTestId('remembered').click();
    await page.getByTestId('remembered-detail').filter({ hasText: SECRET }).waitFor();
    let db = await readDb(page);
    const asked = db.sessions.find((s) => s.title.startsWith('What did my doctor'));
    const reply = db.turns.find((t) => t.sessionId === asked.id && t.role === 'assistant');
    // The fixture holds the case: the other chat's reply stores a note with the secret.
    assert.match(JSON.stringify(reply.usedMemory), new RegExp(SECRET));

    const gone = db.sessions.find((s) => s.title.startsWith('My doctor diagnosed'));
    await row(page, 'My doctor diagnosed').getByTestId('delete-chat').click();
    await answerDialog(page, { check: true });
    await row(page, 'My doctor diagnosed').waitFor({ state: 'detached' });
    db = await readDb(page);
    assert.deepEqual(whereSecret(db), [], 'no stored record holds the deleted fact');
    assert.deepEqual(
      db.memories.map((m) => m.text),
      ['The user said: My doctor is Dr Reed at the Elm Street clinic'],
      'the deleted chat took its memories; the other stays',
    );
    const after = db.turns.find((t) => t.id === reply.id);
    assert.deepEqual(after.usedMemory.memoryIds, [db.memories[0].id], 'the reply still drew on the memory that stays');
    assert.ok(after.drewOn.includes(db.memories[0].id));
    assert.ok(!after.drewOn.some((id) => id.includes(gone.id)), 'nothing of the deleted chat is named');
    // The view follows at once: the reply shows no note and no "(deleted memory)" line.
    await page.getByTestId('remembered-detail').filter({ hasText: SECRET }).waitFor({ state: 'detached' });
    assert.doesNotMatch(await page.getByTestId('conversation').textContent(), /deleted memory/);
    await shot(page, 'truth-deleted-fact-1280');
    const file = await exportBackup(page, join(profile, 'after-delete.json'));
    assert.doesNotMatch(readFileSync(file, 'utf8'), new RegExp(SECRET), 'the export holds no deleted fact');
    await h.close();

    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    await row(page, 'What did my doctor').getByTestId('session-item').click();
    await lastReply(page);
    await page.getByTestId('remembered').click();
    await page.getByTestId('remembered-detail').filter({ hasText: 'Dr Reed' }).waitFor();
    assert.doesNotMatch(await page.getByTestId('conversation').textContent(), new RegExp(`${SECRET}|deleted memory`));
    await shot(page, 'truth-deleted-fact-reload-1280');
    assert.deepEqual(whereSecret(await readDb(page)), []);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a temporary chat neither uses nor makes memories, as its empty state says', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    await say(page, 'I am moving to Oslo in June');
    await endAndRemember(page);
    // A normal chat remembers it (so the temporary chat below could have).
    await newChat(page);
    await say(page, 'When am I moving to Oslo?');
    await page.getByTestId('remembered').waitFor();

    await page.getByTestId('temporary-chat').click();
    await page.getByTestId('temporary-note').waitFor();
    assert.match(await page.getByTestId('temporary-note').textContent(), /remember/);
    await say(page, 'When am I moving to Oslo?');
    assert.equal(await page.getByTestId('remembered').count(), 0, 'no "remembered" line under the reply: nothing was retrieved');
    await shot(page, 'truth-temporary-1280');
    await page.getByTestId('close-temporary').click();
    const db = await readDb(page, ['sessions', 'memories', 'jobs']);
    assert.equal(db.sessions.length, 2, 'the temporary chat was not stored');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test("an export of the demo holds the demo only, none of the user's settings", async () => {
  const profile = tempProfile();
  const h = await launch({ profile });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await loadTestModel(page, server.url);
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('system-prompt').fill('You are Captain Zebra, my private persona.');
    await page.getByTestId('system-prompt').blur();
    await openDemo(page, { button: 'load-demo' });
    const file = await exportBackup(page, join(profile, 'demo.json'));
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /Captain Zebra/);
    const backup = JSON.parse(text);
    assert.deepEqual(backup.data.settings, [], 'no settings record in a demo export');
    assert.ok(backup.data.memories.length > 0, 'the demo itself is there');
    // The demo's own prompt does not carry the user's persona either.
    await loadTestModel(page, server.url);
    await page.getByTestId('nav-chat').click();
    await setScript(page, { delayMs: 1 });
    assert.match(await say(page, 'Hello [echo settings]'), /^persona: You are Tealeaf/);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
