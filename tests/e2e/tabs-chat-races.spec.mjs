// Chats across tabs while a reply streams: another tab renames the chat, or deletes it.
// The rename stays when the reply finishes; a deleted chat is not brought back, neither by the
// reply's last save nor by the next message sent in the tab that was streaming.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp } from './harness.mjs';
import { answerDialog, assertNoOffHost, lastReply, loadTestModel, pollDb, readDb, say, send, setScript } from './flows.mjs';

const server = serveApp();

const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
const row = (page, title) => page.getByTestId('session-row').filter({ hasText: title });

/** Two tabs of one profile with the scripted model; tab A has a chat whose next reply streams slowly. */
async function twoTabs(h) {
  const a = h.page;
  await a.goto(`${server.url}/`);
  await loadTestModel(a, server.url);
  await a.goto(`${server.url}/#/chat`);
  await setScript(a, { delayMs: 1, replies: [{ when: 'slowly', say: LONG }] });
  await say(a, 'Notes about the allotment');
  const b = await h.context.newPage();
  await b.goto(`${server.url}/`);
  await loadTestModel(b, server.url);
  await b.goto(`${server.url}/#/chat`);
  await row(b, 'Notes about the allotment').waitFor();
  // Slow enough for tab B to act mid-reply (localStorage is shared by both tabs).
  await setScript(a, { delayMs: 120, replies: [{ when: 'slowly', say: LONG }] });
  await send(a, 'Tell me slowly about compost');
  await a.locator('[data-testid="turn-assistant"][data-status="streaming"]').waitFor();
  return { a, b };
}

test('another tab renames the chat while its reply streams: the reply finishes, the new name stays', async () => {
  const h = await launch();
  try {
    const { a, b } = await twoTabs(h);
    await row(b, 'Notes about the allotment').getByTestId('rename-chat').click();
    await b.getByTestId('rename-input').fill('Allotment diary');
    await b.keyboard.press('Enter');
    await row(b, 'Allotment diary').waitFor();
    const reply = await lastReply(a);
    assert.equal(reply, LONG, 'the reply streamed to its end');
    const db = await readDb(a, ['sessions', 'turns']);
    assert.deepEqual(
      db.sessions.map((s) => s.title),
      ['Allotment diary'],
      'the store keeps the new name',
    );
    assert.ok(
      db.turns.some((t) => t.role === 'assistant' && t.text === LONG && t.status === 'complete'),
      'and the whole reply',
    );
    await row(a, 'Allotment diary').waitFor();
    await a.locator('.heading strong').filter({ hasText: 'Allotment diary' }).waitFor();
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('another tab deletes the chat while its reply streams: it stays deleted, also after the next message there', async () => {
  const h = await launch();
  try {
    const { a, b } = await twoTabs(h);
    await row(b, 'Notes about the allotment').getByTestId('delete-chat').click();
    await answerDialog(b);
    await row(b, 'Notes about the allotment').waitFor({ state: 'detached' });
    // The reply in tab A ends (stopped or complete); its last save must not bring the chat back.
    await a.waitForFunction(() => !document.querySelector('[data-testid="turn-assistant"][data-status="streaming"]'), null);
    await a.waitForTimeout(500);
    let db = await readDb(a, ['sessions', 'turns']);
    assert.deepEqual(db.sessions, [], 'no session after the reply ended');
    assert.deepEqual(db.turns, [], 'and none of its turns');
    // Tab A no longer shows the deleted chat, and says why: the next message starts a new one.
    await row(a, 'Notes about the allotment').waitFor({ state: 'detached' });
    await a.getByText('This chat was deleted in another tab.').waitFor();
    assert.equal(await a.getByTestId('turn-user').count(), 0, 'tab A shows an empty chat');
    await setScript(a, { delayMs: 1 });
    await send(a, 'A fresh start');
    db = await pollDb(a, (d) => d.turns.some((t) => t.role === 'assistant' && t.status === 'complete'), { what: 'the reply' });
    assert.deepEqual(
      db.sessions.map((s) => s.title),
      ['A fresh start'],
      'a new chat, not the deleted one',
    );
    assert.deepEqual(
      db.turns.map((t) => t.text).filter((t) => /allotment|compost/i.test(t)),
      [],
      'nothing of the deleted chat came back',
    );
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
