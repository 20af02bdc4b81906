// "Keep this device's data" survives a crash, in two Chromium profiles: the laptop deletes everything; the phone, asked,
// keeps its data (3,002 memories, 3,000 links), and its browser is closed a few milliseconds
// after the click, at several moments. Each time it opens again with every record (before: the
// store was wiped in one transaction and the kept records written in a later one, so a close in
// between left 0 of 3,002), asks again if the answer was not kept, and in the end the laptop has
// the phone's data back.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../relay/relay.mjs';
import { launch, serveApp, tempProfile } from './harness.mjs';
import { assertNoOffHost, startImport } from './flows.mjs';
import { hubBackup } from './links-backup.mjs';
import { counts, pair, settings, statusIs } from './sync-devices.mjs';

const server = serveApp();
const relayDir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-keep-'));
const file = join(tempProfile(), 'hub.json');
after(() => {
  rmSync(relayDir, { recursive: true, force: true });
  rmSync(file, { force: true });
});

test('“Keep this device’s data” with the browser closed mid-way: nothing lost, and it reaches the laptop', async () => {
  const relay = await startRelay({ host: '127.0.0.1', port: 0, dir: relayDir });
  const A = await launch();
  const profB = tempProfile();
  let B = await launch({ profile: profB });
  try {
    const backup = hubBackup(3000);
    writeFileSync(file, JSON.stringify(backup));
    const total = { memories: backup.data.memories.length, edges: backup.data.edges.length };
    assert.equal(total.memories, 3002);
    await settings(B.page, server.url);
    await startImport(B.page, file);
    await B.page.getByTestId('import-done').waitFor({ timeout: 120_000 });
    await pair(A, B, server.url, relay.url);
    for (const end = Date.now() + 120_000; ;) {
      const c = await counts(A.page);
      if (c.memories === total.memories && c.edges === total.edges) break;
      if (Date.now() > end) throw new Error(`the laptop did not get the phone's data: ${JSON.stringify(c)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await statusIs(B.page, 'synced');

    // The laptop deletes everything; the phone is asked.
    await settings(A.page, server.url);
    await A.page.getByTestId('delete-all').click();
    await A.page.getByTestId('confirm-ok').click();
    await A.page.waitForLoadState('load');
    const choice = () => B.page.getByTestId('sync-reset-choice');
    await choice().waitFor();

    // Keep, then the browser closed after `ms`; opened again, every record is there.
    const kills = [];
    for (const ms of [0, 15, 40, 80, 150, 300, 600]) {
      if ((await choice().count()) === 0) break;
      await B.page.getByTestId('sync-reset-keep').click();
      await new Promise((r) => setTimeout(r, ms));
      await B.close();
      B = await launch({ profile: profB });
      await B.page.goto(`${server.url}/#/settings`);
      await B.page.getByTestId('settings-sync').waitFor();
      const c = await counts(B.page);
      kills.push({ ms, ...c });
      assert.deepEqual(c, total, `closed ${ms} ms after Keep: ${JSON.stringify(c)}`);
      await B.page.locator('[data-testid="sync-reset-choice"], [data-testid="sync-status"][data-phase="synced"]').first().waitFor();
    }
    console.log(
      `[keep] closed after Keep: ${kills.map((k) => `${k.ms} ms`).join(', ')}; each time ${total.memories} memories and ${total.edges} links left`,
    );
    if ((await choice().count()) > 0) await B.page.getByTestId('sync-reset-keep').click();
    for (const end = Date.now() + 120_000; ;) {
      const c = await counts(A.page);
      if (c.memories === total.memories && c.edges === total.edges) break;
      if (Date.now() > end) throw new Error(`the laptop did not get the kept data: ${JSON.stringify(c)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(await counts(B.page), total);
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
