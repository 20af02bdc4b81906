// Malformed synced records, in two Chromium profiles: records another device sends that this version
// cannot use (a text that is a number, a memory with no id, a chat with no title, a link with a
// relation from a newer version) are left out, named in Settings, and sync goes on: a later edit
// still arrives, the app starts after a reload, and the Memory view still shows the memories.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../relay/relay.mjs';
import { audit } from './axe.mjs';
import { launch, PATIENCE_MS, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, editOpenMemory, openMemory, readDb, startImport } from './flows.mjs';
import { hubBackup } from './links-backup.mjs';
import { keyHolder, pair, settings, syncKeyOf } from './sync-devices.mjs';

const server = serveApp();
const relayDir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-malformed-'));
const file = join(tempProfile(), 'hub.json');
after(() => {
  rmSync(relayDir, { recursive: true, force: true });
  rmSync(file, { force: true });
});

async function poll(page, predicate, what, timeout = PATIENCE_MS) {
  const end = Date.now() + timeout;
  for (;;) {
    const db = await readDb(page, ['sessions', 'memories', 'edges']);
    if (predicate(db)) return db;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('records this version cannot use are left out and named; sync, start-up and the Memory view go on', async () => {
  const relay = await startRelay({ host: '127.0.0.1', port: 0, dir: relayDir });
  const profB = tempProfile();
  const A = await launch();
  let B = await launch({ profile: profB });
  try {
    const backup = hubBackup(4);
    writeFileSync(file, JSON.stringify(backup));
    await settings(A.page, server.url);
    await startImport(A.page, file);
    await A.page.getByTestId('import-done').waitFor();
    await pair(A, B, server.url, relay.url);
    await poll(B.page, (db) => db.memories.length === backup.data.memories.length, 'the first sync');

    // A device holding the key writes what this version cannot use, over a record too.
    const stolen = await keyHolder(await syncKeyOf(B.page), relay.url);
    await stolen.read();
    const base = backup.data.memories[0];
    const firstEdge = backup.data.edges[0];
    await stolen.write({
      'e0/memories': {
        'bad-text': { ...base, id: 'bad-text', text: 5 },
        'no-id': { ...base, id: undefined, text: 'a memory with no id' },
        'fine-one': { ...base, id: 'fine-one', text: 'A fine memory in the same message.' },
      },
      'e0/sessions': { 'bad-title': { ...backup.data.sessions[0], id: 'bad-title', title: null } },
      'e0/edges': { [firstEdge.id]: { ...firstEdge, relation: 'Inspires' } },
    });

    // A later edit on A still reaches B.
    await openMemory(A.page, 'The hub memory');
    const edited = 'The hub memory, edited after the bad message.';
    await editOpenMemory(A.page, edited);
    for (const page of [A.page, B.page]) {
      const db = await poll(page, (d) => d.memories.some((m) => m.text === edited), 'the later edit');
      assert.ok(db.memories.some((m) => m.id === 'fine-one'));
      assert.equal(db.memories.filter((m) => typeof m.text !== 'string' || !m.id).length, 0);
      assert.ok(!db.sessions.some((s) => s.id === 'bad-title'));
      assert.equal(db.edges.find((e) => e.id === firstEdge.id)?.relation, firstEdge.relation);
    }

    // Named in Settings, with the sender and the reason.
    await settings(B.page, server.url);
    const held = B.page.getByTestId('sync-held');
    await held.waitFor();
    assert.match(await B.page.getByTestId('sync-detail').textContent(), /4 records from another device were left out/);
    await held.locator('summary').click();
    const rows = (await B.page.getByTestId('sync-held-record').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
    assert.deepEqual(rows.sort(), [
      'chat bad-title from a device not in your list: title: expected a string, got null',
      `link ${firstEdge.id} from a device not in your list: relation: expected one of "Changed", "Cause", "Reason", "HinderedBy", "React", "Want", "SameTopic", got the string "Inspires"`,
      'memory bad-text from a device not in your list: text: expected a string, got number 5',
      'memory no-id from a device not in your list: id: missing (undefined is not a JSON value)',
    ]);
    for (const [scheme, width] of [
      ['light', 1280],
      ['dark', 375],
    ]) {
      await B.page.emulateMedia({ colorScheme: scheme });
      await B.page.setViewportSize({ width, height: 900 });
      await held.scrollIntoViewIfNeeded();
      assert.deepEqual(await audit(B.page), [], `axe: the held records, ${scheme} ${width}px`);
      await shot(B.page, `sync-held-${scheme}-${width}`);
    }
    await B.page.emulateMedia({ colorScheme: 'light' });
    await B.page.setViewportSize({ width: 1280, height: 800 });

    // B starts again, and its Memory view shows the memories with their links.
    await B.close();
    B = await launch({ profile: profB });
    await B.page.goto(`${server.url}/`);
    await B.page.getByTestId('nav-chat').waitFor();
    assert.equal(await B.page.getByText('Tealeaf could not start').count(), 0);
    await openMemory(B.page, edited);
    await B.page.locator('aside[aria-label="Memory details"]').getByText('Before the hub, memory 1').first().waitFor();
    assertNoOffHost(A);
    assertNoOffHost(B);
    assert.deepEqual(A.errors, []);
    assert.deepEqual(B.errors, []);
  } finally {
    await A.dispose();
    await B.dispose();
    await relay.close();
  }
});
