// Sync's fault matrix in the browser: the joining device's tab is killed in the middle of
// its first sync (some of the records written, not all). Relaunched, it resumes from what it saved
// with them (docs/SYNC.md, "Crash safety"): it ends with exactly the first device's records, and its
// next change is not refused as a replay. The Node side of the matrix: tests/unit/sync/*.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../relay/relay.mjs';
import { launch, PATIENCE_MS, serveApp, tempProfile } from './harness.mjs';
import { assertNoOffHost, editOpenMemory, openMemory, readDb, startImport } from './flows.mjs';
import { hubBackup } from './links-backup.mjs';
import { counts } from './sync-devices.mjs';

const server = serveApp();
const LINKS = 4000;
const relayDir = mkdtempSync(join(tmpdir(), 'tealeaf-relay-crash-'));
const file = join(tempProfile(), 'many.json');
after(() => {
  rmSync(relayDir, { recursive: true, force: true });
  rmSync(file, { force: true });
});

async function settings(page) {
  await page.goto(`${server.url}/#/settings`);
  await page.getByTestId('settings-sync').waitFor();
}
const phase = (page, p, timeout = PATIENCE_MS) => page.locator(`[data-testid="sync-status"][data-phase="${p}"]`).waitFor({ timeout });

test('the joining tab killed mid-merge resumes: the same records as the first device, none twice, and its next edit arrives', async () => {
  const relay = await startRelay({ host: '127.0.0.1', port: 0, dir: relayDir });
  const A = await launch();
  const profB = tempProfile();
  let B = await launch({ profile: profB });
  try {
    const backup = hubBackup(LINKS);
    writeFileSync(file, JSON.stringify(backup));
    const total = { memories: backup.data.memories.length, edges: backup.data.edges.length };
    await settings(A.page);
    await startImport(A.page, file);
    await A.page.getByTestId('import-done').waitFor({ timeout: 120_000 });
    assert.deepEqual(await counts(A.page), total);

    await settings(A.page);
    await A.page.getByTestId('sync-relay-url').fill(relay.url);
    await A.page.getByTestId('sync-device-name').fill('Laptop');
    await A.page.getByTestId('sync-turn-on').click();
    await phase(A.page, 'synced');
    await A.page.getByTestId('sync-show-code').click();
    const code = (await A.page.getByTestId('sync-code').textContent()).trim();

    await settings(B.page);
    await B.page.getByTestId('sync-relay-url').fill(relay.url);
    await B.page.getByTestId('sync-device-name').fill('Phone');
    await B.page.getByTestId('sync-code-input').fill(code);
    await B.page.getByTestId('sync-join').click();
    // Killed as soon as some records are in and not all.
    let atKill;
    for (const end = Date.now() + 60_000; ;) {
      const c = await counts(B.page);
      if (c.memories + c.edges > 0) {
        atKill = c;
        break;
      }
      if (Date.now() > end) throw new Error('B received nothing');
      await new Promise((r) => setTimeout(r, 5));
    }
    await B.close();
    assert.ok(atKill.memories + atKill.edges < total.memories + total.edges, `killed after the merge ended: ${JSON.stringify(atKill)}`);

    B = await launch({ profile: profB });
    await settings(B.page);
    const survived = await counts(B.page);
    assert.ok(survived.memories + survived.edges < total.memories + total.edges, `not a partial state: ${JSON.stringify(survived)}`);
    await phase(B.page, 'synced');
    for (const end = Date.now() + 120_000; ;) {
      const c = await counts(B.page);
      if (c.memories === total.memories && c.edges === total.edges) break;
      if (Date.now() > end) throw new Error(`B did not converge: ${JSON.stringify(c)} of ${JSON.stringify(total)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // The same records, field for field (ids are keys, so "none twice" is the count above).
    const a = await readDb(A.page, ['memories', 'edges']);
    const b = await readDb(B.page, ['memories', 'edges']);
    const byId = (xs) => [...xs].sort((x, y) => (x.id < y.id ? -1 : 1));
    assert.deepEqual(byId(b.memories), byId(a.memories));
    assert.deepEqual(byId(b.edges), byId(a.edges));

    // B's next change is numbered past what it sent before the kill: A applies it.
    await openMemory(B.page, 'The hub memory');
    const edited = 'The hub memory, edited on the phone after the crash.';
    await editOpenMemory(B.page, edited);
    for (const end = Date.now() + 30_000; ;) {
      const hub = (await readDb(A.page, ['memories'])).memories.find((m) => m.id === 'hub');
      if (hub?.text === edited) break;
      if (Date.now() > end) throw new Error('the edit made on B after the crash did not reach A');
      await new Promise((r) => setTimeout(r, 100));
    }
    assertNoOffHost(A);
    assertNoOffHost(B);
    assert.deepEqual(B.errors, []);
  } finally {
    await A.dispose();
    await B.dispose();
    await relay.close();
  }
});
