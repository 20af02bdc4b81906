// The relay's history is checked, in two Chromium profiles. A relay restarted empty: both devices
// notice, say so, and go on syncing (before: every device held a cursor past the relay's last
// message, ignored it, and said "Synced" while nothing arrived). A relay that drops and withholds
// messages for the phone: the phone names the missing message in Settings while the relay holds
// it back, and gets everything once it hands out the other devices' answers; a replayed message
// is refused and named (before: one dropped message blocked every later one, unseen).
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
import { lyingRelay } from './lying-relay.mjs';
import { deviceIdOf, keyHolder, pair, settings, statusIs, syncKeyOf } from './sync-devices.mjs';

const server = serveApp();
const dirs = [];
const file = join(tempProfile(), 'hub.json');
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  rmSync(file, { force: true });
});
const relayDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tealeaf-relay-history-'));
  dirs.push(d);
  return d;
};

async function until(what, ok, timeout = PATIENCE_MS) {
  const end = Date.now() + timeout;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const hasText = async (page, id, text) => (await readDb(page, ['memories'])).memories.find((m) => m.id === id)?.text === text;

async function twoWithMemories(relayUrlA, relayUrlB) {
  const A = await launch();
  const B = await launch();
  writeFileSync(file, JSON.stringify(hubBackup(4)));
  await settings(A.page, server.url);
  await startImport(A.page, file);
  await A.page.getByTestId('import-done').waitFor();
  await pair(A, B, server.url, relayUrlA, relayUrlB);
  await until('the memories on B', async () => (await readDb(B.page, ['memories'])).memories.length === 6);
  return { A, B };
}

async function looked(page, name) {
  for (const [scheme, width] of [
    ['light', 1280],
    ['dark', 375],
  ]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: 900 });
    await page.getByTestId('sync-status').scrollIntoViewIfNeeded();
    assert.deepEqual(await audit(page), [], `axe: ${name}, ${scheme} ${width}px`);
    await shot(page, `${name}-${scheme}-${width}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
}

test('a relay restarted empty: both devices say so, send what they hold again, and sync goes on', async () => {
  let relay = await startRelay({ host: '127.0.0.1', port: 0, dir: relayDir() });
  const port = Number(new URL(relay.url).port);
  const { A, B } = await twoWithMemories(relay.url, relay.url);
  try {
    await relay.close();
    relay = await startRelay({ host: '127.0.0.1', port, dir: relayDir() });
    await openMemory(A.page, 'The hub memory');
    const edited = 'The hub memory, edited after the relay came back empty.';
    await editOpenMemory(A.page, edited);
    await until('the edit on B', () => hasText(B.page, 'hub', edited));
    await openMemory(B.page, 'An unlinked memory');
    await editOpenMemory(B.page, 'Edited on the phone after the relay came back.');
    await until('the edit on A', () => hasText(A.page, 'lonely', 'Edited on the phone after the relay came back.'));
    for (const h of [A, B]) {
      await settings(h.page, server.url);
      await statusIs(h.page, 'synced');
      assert.match(
        await h.page.getByTestId('sync-detail').textContent(),
        /the relay had lost messages \(it had \d+, this device had read \d+\)/,
      );
    }
    await looked(B.page, 'sync-relay-went-back');
    for (const h of [A, B]) {
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    }
  } finally {
    await A.dispose();
    await B.dispose();
    await relay.close();
  }
});

test('a relay that drops and holds back the laptop’s messages for the phone: named, then everything arrives; a replay is refused', async () => {
  const relay = await startRelay({ host: '127.0.0.1', port: 0, dir: relayDir() });
  const liar = await lyingRelay(relay.url);
  const { A, B } = await twoWithMemories(relay.url, liar.url);
  try {
    const room = await keyHolder(await syncKeyOf(A.page), relay.url);
    const laptop = await deviceIdOf(A.page);
    const last = async () => (await room.messages()).at(-1)?.seq ?? 0;
    liar.lies.holdBack = { device: laptop, after: await last() };
    await openMemory(A.page, 'The hub memory');
    await editOpenMemory(A.page, 'First edit: the relay drops it.');
    await until('sent', async () => (await room.messages()).length > 0 && (await last()) > liar.lies.holdBack.after);
    const dropped = await last();
    await openMemory(A.page, 'An unlinked memory');
    await editOpenMemory(A.page, 'Second edit: handed out.');
    await until('sent', async () => (await last()) > dropped);
    // The relay drops the first edit for good, hands out the second, and holds back what follows.
    liar.lies.drop.add(dropped);
    liar.lies.holdBack = { device: laptop, after: await last() };
    await settings(B.page, server.url);
    await B.page.getByTestId('sync-status').filter({ hasText: 'Synced, but messages are missing' }).waitFor();
    assert.match(
      await B.page.getByTestId('sync-detail').textContent(),
      /1 message from Laptop is missing: the relay dropped or is holding it back/,
    );
    await looked(B.page, 'sync-relay-missing');

    // The relay hands out the laptop's answer (the dropped message itself stays dropped): everything arrives.
    liar.lies.holdBack = undefined;
    await until(
      'both edits on B',
      async () =>
        (await hasText(B.page, 'hub', 'First edit: the relay drops it.')) && (await hasText(B.page, 'lonely', 'Second edit: handed out.')),
    );
    await B.page
      .getByTestId('sync-status')
      .filter({ hasText: /^Synced$/ })
      .waitFor();

    // A message of the laptop's posted again: refused, and said.
    const copy = (await room.messages()).find((m) => m.seq === dropped + 1);
    await room.post(copy.bytes);
    await until('the refusal said', async () =>
      /1 message was refused: replayed \(sent again by the relay\)/.test(await B.page.getByTestId('sync-detail').textContent()),
    );
    await looked(B.page, 'sync-relay-refused');
    for (const h of [A, B]) {
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    }
  } finally {
    await A.dispose();
    await B.dispose();
    await liar.close();
    await relay.close();
  }
});
