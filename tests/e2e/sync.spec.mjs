// Sync between two devices: two Chromium profiles on one app server, the relay started
// here on 127.0.0.1 with its own folder. Pairing by a code shown on A and typed on B; a chat and its
// memories reach B; an edit on B reaches A; both offline: delete vs edit either way (the delete
// wins) and an edit on each arrive; delete-all on A: B asks, then empties, and does not bring it
// back; unpair B. A chat left open on A is read-only on B, and a message on B starts B's own chat.
// The relay's bytes on disk never hold the canary typed on A. Status words checked for off, synced, offline and error.
// Run twice: on the embedded relay (a file per room) and on PostgreSQL (a private cluster,
// tests/support/pg-cluster.mjs), where the bytes on disk are the database's files and its log.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../relay/relay.mjs';
import { startPostgres } from '../support/pg-cluster.mjs';
import { audit } from './axe.mjs';
import { launch, PATIENCE_MS, serveApp, shot, tempProfile } from './harness.mjs';
import {
  assertNoOffHost,
  deleteOpenMemory,
  editOpenMemory,
  endAndRemember,
  lastReply,
  openMemory,
  readDb,
  say,
  send,
  startChat,
} from './flows.mjs';

const server = serveApp();
const CANARY = 'zebracanary7731';
const relayDir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-'));
after(() => rmSync(relayDir, { recursive: true, force: true }));

/** Reads the page's database until `predicate` holds (`timeout`: a safety net). */
async function pollUntil(page, predicate, what, timeout = PATIENCE_MS) {
  const end = Date.now() + timeout;
  for (;;) {
    const db = await readDb(page, ['sessions', 'turns', 'memories', 'tombstones']);
    if (predicate(db)) return db;
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify({ s: db.sessions.length, m: db.memories.map((m) => m.text) })}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function settings(page, url) {
  await page.goto(`${url}/#/settings`);
  await page.getByTestId('settings-sync').waitFor();
}

async function statusIs(page, phase, timeout = PATIENCE_MS) {
  await page.locator(`[data-testid="sync-status"][data-phase="${phase}"]`).waitFor({ timeout });
  return (await page.getByTestId('sync-status').textContent()).trim();
}

let cluster;
after(() => cluster?.stop());

/** Every file under a folder, read whole (the relay's or the database's bytes on disk). */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name)));
}

const twoDevices = async (store) => {
  const start = async (port) =>
    startRelay({
      host: '127.0.0.1',
      port,
      dir: relayDir,
      postgres: store === 'postgres' ? (cluster ??= await startPostgres({ private: true })).url : undefined,
    });
  const relayBytes = () => Buffer.concat(filesUnder(store === 'files' ? relayDir : cluster.dataDir));
  let relay = await start(0);
  const port = new URL(relay.url).port;
  const profA = tempProfile();
  const profB = tempProfile();
  let A = await launch({ profile: profA });
  let B = await launch({ profile: profB });
  try {
    // Off on both, in words.
    await settings(A.page, server.url);
    assert.equal(await statusIs(A.page, 'off'), 'Sync is off');
    await shot(A.page, 'sync-off');

    // A: a chat with the canary, ended and memorised.
    await startChat(A.page, server.url, { delayMs: 2 });
    await say(A.page, `My cat is called ${CANARY} and she likes the window`);
    await say(A.page, 'I moved to Lisbon last spring');
    await say(A.page, 'My sister Ana lives in Porto now');
    await say(A.page, 'I started learning the cello in May');
    await endAndRemember(A.page);
    const a0 = await pollUntil(A.page, (db) => db.memories.length > 0, 'memories on A');

    // A turns sync on and shows a code; B types it.
    await settings(A.page, server.url);
    await A.page.getByTestId('sync-relay-url').fill(relay.url);
    await A.page.getByTestId('sync-device-name').fill('Laptop');
    await A.page.getByTestId('sync-turn-on').click();
    await statusIs(A.page, 'synced');
    await A.page.getByTestId('sync-show-code').click();
    const code = (await A.page.getByTestId('sync-code').textContent()).trim();
    assert.match(code, /^[0-9A-Z]{4}(-[0-9A-Z]{4}){5}$/);
    await shot(A.page, 'sync-code-shown');
    // The sync section's on-states pass axe, as the views do (a11y.spec covers it off).
    assert.deepEqual(await audit(A.page), [], 'axe: code shown');

    await settings(B.page, server.url);
    await B.page.getByTestId('sync-relay-url').fill(relay.url);
    await B.page.getByTestId('sync-device-name').fill('Phone');
    await B.page.getByTestId('sync-code-input').fill(code);
    await B.page.getByTestId('sync-join').click();
    await statusIs(B.page, 'synced');
    const b0 = await pollUntil(
      B.page,
      (db) => db.memories.length === a0.memories.length && db.sessions.length === 1,
      'the chat and memories on B',
    );
    assert.deepEqual(b0.memories.map((m) => m.text).sort(), a0.memories.map((m) => m.text).sort());
    assert.ok(b0.turns.some((t) => t.text.includes(CANARY)));
    // A's device list gains B.
    await A.page
      .getByTestId('sync-device')
      .filter({ hasText: /^\s*Phone/ })
      .waitFor();
    await B.page
      .getByTestId('sync-device')
      .filter({ hasText: /^\s*Laptop/ })
      .waitFor();
    assert.match(await B.page.getByTestId('sync-detail').textContent(), /With 1 other device/);
    await shot(B.page, 'sync-synced-b');

    // B's views show them.
    await B.page.goto(`${server.url}/#/chat`);
    await B.page
      .getByTestId('session-item')
      .filter({ hasText: /cat|Lisbon/ })
      .first()
      .waitFor();
    const target = a0.memories[0];
    await openMemory(B.page, target.text.replace(/^.*?said: /, '').slice(0, 20));

    // An edit on B reaches A.
    const edited = `Edited on B ${Date.now()}`;
    await editOpenMemory(B.page, edited);
    await pollUntil(A.page, (db) => db.memories.some((m) => m.id === target.id && m.text === edited), 'the edit on A');
    await openMemory(A.page, edited);

    // The relay's disk never holds the canary (nor the edit).
    const bytes = relayBytes();
    assert.ok(bytes.length > 1000, 'the relay stored something');
    assert.equal(bytes.includes(CANARY), false);
    assert.equal(bytes.includes(Buffer.from(CANARY).toString('base64').slice(0, 12)), false);
    assert.equal(bytes.includes('Lisbon'), false);
    assert.equal(bytes.includes(edited), false);

    // Reload each profile: still synced, still there.
    await A.close();
    await B.close();
    A = await launch({ profile: profA });
    B = await launch({ profile: profB });
    await settings(A.page, server.url);
    await settings(B.page, server.url);
    await statusIs(A.page, 'synced');
    await statusIs(B.page, 'synced');
    const bR = await readDb(B.page, ['memories']);
    assert.ok(bR.memories.some((m) => m.text === edited));

    // A chat left open on A is A's (SYNC.md, "Job ownership"): B shows it read-only, says where it
    // is open, and a message typed on B starts a chat of B's own; A's chat gains nothing on either.
    await startChat(A.page, server.url, { delayMs: 2 });
    await say(A.page, 'Planning a trip to Porto next week');
    const porto = (db) => db.sessions.find((s) => s.title.includes('Porto'));
    const onB = await pollUntil(
      B.page,
      (db) => porto(db)?.status === 'open' && db.turns.filter((t) => t.sessionId === porto(db).id).length === 2,
      'A’s open chat on B',
    );
    const aChat = porto(onB);
    const aDevice = (await readDb(A.page, ['sessions'])).sessions.find((s) => s.id === aChat.id).deviceId;
    assert.ok(aDevice && aChat.deviceId === aDevice, 'the chat names the device it was started on');
    await startChat(B.page, server.url, { delayMs: 2 });
    const showPorto = async () => {
      await B.page.getByTestId('session-item').filter({ hasText: 'Porto' }).first().click();
      await B.page.getByTestId('elsewhere-note').waitFor();
    };
    await showPorto();
    assert.equal(
      (await B.page.getByTestId('elsewhere-note').textContent()).replace(/\s+/g, ' ').trim(),
      'Open on Laptop: continue it there, or start a new chat. New chat',
    );
    assert.equal(await B.page.getByTestId('end-session').count(), 0);
    assert.equal(await B.page.getByTestId('composer').getAttribute('placeholder'), 'Message Tealeaf in a new chat');
    for (const [scheme, width] of [
      ['light', 1280],
      ['dark', 1280],
      ['light', 375],
      ['dark', 375],
    ]) {
      await B.page.emulateMedia({ colorScheme: scheme });
      await B.page.setViewportSize({ width, height: 800 });
      assert.deepEqual(await audit(B.page), [], `axe, ${scheme} ${width}px`);
      await shot(B.page, `sync-open-elsewhere-${scheme}-${width}`);
    }
    await B.page.emulateMedia({ colorScheme: 'light' });
    await B.page.setViewportSize({ width: 1280, height: 800 });
    await send(B.page, 'Something else, from the phone');
    // The view moves to the new chat (only its own message in it), whose reply then completes.
    await B.page.getByTestId('elsewhere-note').waitFor({ state: 'detached' });
    await B.page.getByTestId('turn-user').filter({ hasText: 'Planning' }).waitFor({ state: 'detached' });
    await lastReply(B.page);
    const bOwn = await pollUntil(B.page, (db) => db.sessions.some((s) => s.title.startsWith('Something else')), 'B’s own chat');
    const bChat = bOwn.sessions.find((s) => s.title.startsWith('Something else'));
    assert.ok(bChat.deviceId && bChat.deviceId !== aDevice);
    assert.equal(bOwn.turns.filter((t) => t.sessionId === aChat.id).length, 2);
    await pollUntil(A.page, (db) => db.sessions.some((s) => s.id === bChat.id), 'B’s chat on A');
    const aAfterB = await readDb(A.page, ['sessions', 'turns']);
    assert.equal(aAfterB.turns.filter((t) => t.sessionId === aChat.id).length, 2);
    assert.equal(aAfterB.sessions.find((s) => s.id === aChat.id).status, 'open');
    // After a reload of B: still read-only there.
    await B.page.reload();
    await showPorto();

    // B offline (the relay stopped): its words say so; A deletes the memory, B edits it meanwhile.
    // Both offline, the other way round too: B deletes a second memory that A edits, and each
    // edits a third and a fourth; after reconnecting both hold the same.
    assert.ok(a0.memories.length >= 4, `the chat made ${a0.memories.length} memories; the matrix needs 4`);
    const [, second, third, fourth] = a0.memories.map((m) => ({ id: m.id, text: m.text.replace(/^.*?said: /, '').slice(0, 20) }));
    await relay.close();
    await B.page.goto(`${server.url}/#/memory`);
    await openMemory(B.page, edited);
    await editOpenMemory(B.page, `${edited} and again offline`);
    await openMemory(B.page, second.text);
    await deleteOpenMemory(B.page);
    await openMemory(A.page, second.text);
    await editOpenMemory(A.page, 'Edited on A while B deleted it');
    await openMemory(A.page, third.text);
    await editOpenMemory(A.page, 'Edited on A offline');
    await openMemory(B.page, fourth.text);
    await editOpenMemory(B.page, 'Edited on B offline');
    await settings(B.page, server.url);
    assert.equal(await statusIs(B.page, 'offline'), 'Offline: the relay cannot be reached');
    assert.match(await B.page.getByTestId('sync-detail').textContent(), /Changes made here wait to be sent/);
    await shot(B.page, 'sync-offline');
    assert.deepEqual(await audit(B.page), [], 'axe: offline');
    relay = await start(Number(port));
    const converged = (db) =>
      !db.memories.some((m) => m.id === second.id) &&
      db.tombstones.some((t) => t.id === second.id) &&
      db.memories.find((m) => m.id === third.id)?.text === 'Edited on A offline' &&
      db.memories.find((m) => m.id === fourth.id)?.text === 'Edited on B offline';
    await pollUntil(A.page, converged, 'the offline changes on A');
    await pollUntil(B.page, converged, 'the offline changes on B');
    // A deletes the memory once the relay is back, before B reconnects (B waits out its backoff).
    await openMemory(A.page, edited);
    await A.page.locator('aside[aria-label="Memory details"]').getByRole('button', { name: 'Delete', exact: true }).first().click();
    await A.page.locator('aside[aria-label="Memory details"] .confirm').getByRole('button', { name: 'Delete' }).click();
    await pollUntil(A.page, (db) => !db.memories.some((m) => m.id === target.id), 'the delete on A');
    // Converge: the delete wins on both.
    await pollUntil(
      B.page,
      (db) => !db.memories.some((m) => m.id === target.id) && db.tombstones.some((t) => t.id === target.id),
      'the delete on B',
      45_000,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const aAfter = await readDb(A.page, ['memories']);
    assert.equal(
      aAfter.memories.some((m) => m.id === target.id),
      false,
      'B offline edit did not bring it back on A',
    );

    // Delete-all on A: B asks its user, keeps its data until answered (also across a reload),
    // then empties; B does not bring anything back.
    await settings(A.page, server.url);
    // Its words say where the data goes: the paired device is asked too, not "nowhere else".
    const zone = await A.page.getByTestId('delete-all-words').textContent();
    assert.match(zone, /your other paired device is asked to delete theirs too/);
    assert.doesNotMatch(zone, /anywhere else/);
    await A.page.getByTestId('delete-all').click();
    assert.match(await A.page.getByTestId('confirm-dialog').textContent(), /other paired device is asked to delete theirs too/);
    await A.page.getByTestId('confirm-ok').click();
    await A.page.waitForLoadState('load');
    const choice = B.page.getByTestId('sync-reset-choice');
    await choice.waitFor();
    assert.match(await choice.textContent(), /Laptop deleted all its data/);
    const bHeld = await readDb(B.page, ['memories']);
    assert.ok(bHeld.memories.length > 0, 'B keeps its data until its user answers');
    await shot(B.page, 'sync-reset-choice');
    // On a phone, in the dark: the banner's words and both answers fit and pass axe.
    await B.page.setViewportSize({ width: 375, height: 800 });
    await B.page.emulateMedia({ colorScheme: 'dark' });
    assert.deepEqual(await audit(B.page), [], 'axe: delete-all asked, 375 px dark');
    await shot(B.page, 'sync-reset-choice-phone-dark');
    await B.page.setViewportSize({ width: 1280, height: 800 });
    await B.page.emulateMedia({ colorScheme: 'light' });
    await B.page.reload();
    await choice.waitFor();
    assert.equal((await readDb(B.page, ['memories'])).memories.length, bHeld.memories.length);
    // Answered from the Chat view (the banner is on every view): its chat list follows without a reload.
    await B.page.getByTestId('nav-chat').click();
    await B.page.getByTestId('session-item').first().waitFor();
    await B.page.getByTestId('sync-reset-wipe').click();
    assert.match(await B.page.getByTestId('confirm-dialog').textContent(), /Delete everything on this device too/);
    await B.page.getByTestId('confirm-ok').click();
    await pollUntil(B.page, (db) => db.sessions.length === 0 && db.memories.length === 0, 'B emptied by delete-all');
    await choice.waitFor({ state: 'detached' });
    await B.page.waitForFunction(() => document.querySelectorAll('[data-testid="session-item"]').length === 0, null);
    await settings(B.page, server.url);
    await new Promise((r) => setTimeout(r, 2000));
    const aEmpty = await readDb(A.page, ['sessions', 'memories']);
    assert.equal(aEmpty.sessions.length + aEmpty.memories.length, 0);

    // Unpair B from A: B says so.
    await settings(A.page, server.url);
    await A.page
      .getByTestId('sync-device')
      .filter({ hasText: /^\s*Phone/ })
      .getByTestId('sync-unpair')
      .click();
    await A.page.getByTestId('confirm-ok').click();
    await A.page
      .getByTestId('sync-device')
      .filter({ hasText: /^\s*Phone/ })
      .waitFor({ state: 'detached' });
    assert.equal(await statusIs(B.page, 'unpaired'), 'This device was unpaired');
    await shot(B.page, 'sync-unpaired');

    // An error the relay answers (not reachable is "offline"): A on a relay answering 500; on the
    // PostgreSQL run, one refusing with a reason (a full room), in the app's words.
    await relay.close();
    const full = store === 'postgres';
    const bad = createServer((req, res) =>
      full
        ? res
            .writeHead(507, { 'access-control-allow-origin': '*', 'content-type': 'application/json' })
            .end(JSON.stringify({ error: 'full', reason: 'room-full', limit: 256 * 1024 * 1024 }))
        : res.writeHead(500, { 'access-control-allow-origin': '*' }).end('no'),
    );
    await new Promise((ok) => bad.listen(Number(port), '127.0.0.1', ok));
    try {
      await settings(A.page, server.url);
      assert.equal(await statusIs(A.page, 'error'), 'Sync stopped on an error');
      assert.match(
        await A.page.getByTestId('sync-detail').textContent(),
        full ? /^Your relay is full: your sync room holds its limit of 256 MiB\. Changes stay on this device/ : /answered 500/,
      );
      await shot(A.page, full ? 'sync-relay-full' : 'sync-error');
    } finally {
      await new Promise((ok) => bad.close(ok));
    }
    assertNoOffHost(A);
    assertNoOffHost(B);
    assert.deepEqual(A.errors, []);
    assert.deepEqual(B.errors, []);
  } finally {
    await A.dispose();
    await B.dispose();
    await relay.close().catch(() => undefined);
  }
};

const WHAT = 'pair, sync a chat and its memories both ways, delete wins, delete-all, unpair; the relay sees no text';
test(`two devices: ${WHAT}`, () => twoDevices('files'));
test(`two devices on a relay on PostgreSQL: ${WHAT}`, () => twoDevices('postgres'));
