// Deleting deletes in sync too, in Chromium profiles: a chat deleted on the laptop is gone from every
// profile's IndexedDB, the `sync` rows included (before: its words stayed in the `doc:u:*` rows),
// from what the relay would hand any device (its messages opened with the key: the relay dropped
// what came before the laptop's snapshot), and a third profile paired afterwards never holds it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../relay/relay.mjs';
import { launch, PATIENCE_MS, serveApp, tempProfile } from './harness.mjs';
import { answerDialog, assertNoOffHost, readDb, startImport } from './flows.mjs';
import { keyHolder, pair, settings, statusIs, syncKeyOf, whereInDb } from './sync-devices.mjs';

const server = serveApp();
const relayDir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-delete-'));
const file = join(tempProfile(), 'chats.json');
after(() => {
  rmSync(relayDir, { recursive: true, force: true });
  rmSync(file, { force: true });
});

const CANARY = 'zebracanary9912';
const T0 = Date.UTC(2024, 0, 1);
const chat = (id, title, texts) => ({
  session: { id, title, startedAt: T0, lastActivityAt: T0, endedAt: T0, status: 'memorised', endReason: 'import' },
  turns: texts.map((text, index) => ({
    id: `${id}/t${index}`,
    sessionId: id,
    index,
    role: index % 2 ? 'assistant' : 'user',
    text,
    time: T0 + index,
    status: 'complete',
  })),
});

async function until(what, ok, timeout = PATIENCE_MS) {
  const end = Date.now() + timeout;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a deleted chat is gone from every profile’s database, from the relay, and from a device paired later', async () => {
  const relay = await startRelay({ host: '127.0.0.1', port: 0, dir: relayDir });
  const A = await launch();
  const B = await launch();
  let C;
  try {
    const secret = chat('secret', 'The secret chat', [`My PIN is ${CANARY}`, 'Noted.']);
    const kept = chat('kept', 'A chat about tea', ['I like green tea', 'Green tea it is.']);
    writeFileSync(
      file,
      JSON.stringify({
        format: 'tealeaf-backup',
        version: 1,
        exportedAt: T0,
        data: {
          sessions: [secret.session, kept.session],
          turns: [...secret.turns, ...kept.turns],
          memories: [],
          edges: [],
          segments: [],
          settings: [],
        },
      }),
    );
    await settings(A.page, server.url);
    await startImport(A.page, file);
    await A.page.getByTestId('import-done').waitFor();
    await pair(A, B, server.url, relay.url);
    await until('the chats on B', async () => (await readDb(B.page, ['sessions'])).sessions.length === 2);
    assert.ok((await whereInDb(B.page, CANARY)).length > 0, 'the check finds the words while they are there');

    // A deletes the chat.
    await A.page.goto(`${server.url}/#/chat`);
    const row = A.page.getByTestId('session-row').filter({ hasText: 'The secret chat' });
    await row.getByTestId('delete-chat').click();
    await answerDialog(A.page);
    await until('B deletes it', async () => !(await readDb(B.page, ['sessions'])).sessions.some((s) => s.id === 'secret'));
    for (const [name, page] of [
      ['A', A.page],
      ['B', B.page],
    ])
      await until(`no words left in ${name}'s database`, async () => (await whereInDb(page, CANARY)).length === 0);
    const room = await keyHolder(await syncKeyOf(A.page), relay.url);
    await until('the relay compacted', async () => !(await room.plaintexts()).includes(CANARY));
    assert.ok((await room.plaintexts()).includes('green tea'), 'the relay still holds what was not deleted');

    // A third profile pairs through A afterwards: it gets the chat kept, never the deleted one.
    C = await launch();
    await settings(A.page, server.url);
    await A.page.getByTestId('sync-show-code').click();
    const code = (await A.page.getByTestId('sync-code').textContent()).trim();
    await settings(C.page, server.url);
    await C.page.getByTestId('sync-relay-url').fill(relay.url);
    await C.page.getByTestId('sync-device-name').fill('Tablet');
    await C.page.getByTestId('sync-code-input').fill(code);
    await C.page.getByTestId('sync-join').click();
    await statusIs(C.page, 'synced');
    await until('the kept chat on C', async () => (await readDb(C.page, ['sessions'])).sessions.some((s) => s.id === 'kept'));
    assert.deepEqual(await whereInDb(C.page, CANARY), []);
    for (const h of [A, B, C]) {
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    }
  } finally {
    await A.dispose();
    await B.dispose();
    await C?.dispose();
    await relay.close();
  }
});
