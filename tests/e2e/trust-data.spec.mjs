// The user's data, end to end: export a backup, delete everything (confirmed), import the backup
// back; and a broken backup is refused with a message while the data stays as it was.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { answerDialog, assertNoOffHost, exportBackup, openDemo, readDb, say, startChat, startImport } from './flows.mjs';

const server = serveApp();

const count = async (page) => Number(/(\d+) memories/.exec(await page.getByTestId('memory-count').textContent())[1]);

test('export, delete all my data, import the backup: everything is back', async () => {
  const profile = tempProfile();
  const h = await launch({ profile });
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 1 });
    await say(page, 'My favourite tree is the ginkgo');
    // The demo opens in a database of its own; the backup is of what the page shows (the demo).
    await openDemo(page);
    await page.getByTestId('memory-count').waitFor();
    const memories = await count(page);

    const file = await exportBackup(page, join(profile, 'backup.json'));
    const backup = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(backup.format, 'tealeaf-backup');
    assert.equal(backup.data.memories.length, memories);

    // One in-page dialog: Cancel really cancels; then delete, keeping the models (box unticked).
    await page.getByTestId('delete-all').click();
    assert.match(await answerDialog(page, { ok: false }), /also delete downloaded models/i);
    assert.equal((await readDb(page, ['sessions'])).sessions.length > 0, true, 'Cancel deleted nothing');
    await page.getByTestId('delete-all').click();
    await page.getByTestId('confirm-dialog').waitFor();
    await shot(page, 'settings-delete-all-dialog');
    await Promise.all([page.waitForEvent('load'), answerDialog(page)]);
    // Delete-all from the demo deletes the user's own data too, and leaves the demo.
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('load-demo').waitFor();
    assert.equal(await page.getByTestId('demo-banner').count(), 0);
    await page.getByTestId('nav-chat').click();
    assert.equal(await page.getByTestId('session-item').count(), 0, 'no sessions left (the real ginkgo chat included)');
    await shot(page, 'data-deleted');

    // A broken file is refused, and nothing changes.
    const broken = join(profile, 'broken.json');
    writeFileSync(broken, JSON.stringify({ ...backup, data: { ...backup.data, memories: [{ id: 'x', time: 'soon' }] } }));
    await page.getByTestId('nav-settings').click();
    await startImport(page, broken);
    const err = await page.getByTestId('import-error').textContent();
    assert.match(err, /Nothing was changed/);
    assert.match(err, /memories\[0\]/);
    await shot(page, 'data-import-refused');

    await startImport(page, file);
    await page.getByTestId('import-done').waitFor();
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('memory-count').waitFor();
    assert.equal(await count(page), memories);
    await page.getByTestId('nav-chat').click();
    await page.getByTestId('session-item').filter({ hasText: 'Knee trouble' }).waitFor();
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

/** A valid backup of `n` memories in one session, as the app would write it (~470 bytes each). */
function bigBackup(n) {
  const memories = [];
  for (let i = 0; i < n; i++) {
    memories.push({
      id: `big-m${i}`,
      kind: 'event',
      text: `Memory number ${i} of a long life, about the garden, a trip, a sister and a concert. `.repeat(3),
      time: 1_600_000_000_000 + i * 60_000,
      sourceTurnIds: [],
      sessionId: 'big-s',
      edited: false,
      createdAt: 1_600_000_000_000 + i * 60_000,
    });
  }
  const sessions = [
    { id: 'big-s', title: 'A big backup', startedAt: 1_600_000_000_000, lastActivityAt: 1_600_000_000_000, status: 'memorised' },
  ];
  return {
    format: 'tealeaf-backup',
    version: 1,
    exportedAt: 1,
    data: { sessions, turns: [], memories, edges: [], segments: [], settings: [] },
  };
}

test('a large import shows its progress (phase and percent) and Cancel leaves everything as it was', async () => {
  const profile = tempProfile();
  const file = join(profile, 'big.json');
  writeFileSync(file, JSON.stringify(bigBackup(40_000)));
  after(() => rmSync(profile, { recursive: true, force: true }));
  for (const width of [1280, 375]) {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      // Something of the user's own to keep (imports never go into the demo).
      await startChat(page, server.url, { delayMs: 1 });
      await say(page, 'My favourite tree is the ginkgo');
      const before = await readDb(page, ['sessions', 'memories']);
      assert.equal(before.sessions.length, 1);

      await page.getByTestId('nav-settings').click();
      await startImport(page, file, { mode: 'replace' });
      await answerDialog(page); // "Replace all your data?"
      const progress = page.getByTestId('backup-progress');
      // Wait until the bar shows a phase with a count, then picture it.
      await page
        .locator('[data-testid="backup-progress"]:is([data-phase="checking"], [data-phase="writing"], [data-phase="reading"])')
        .waitFor();
      const phase = await progress.getAttribute('data-phase');
      const percent = Number(await progress.getAttribute('data-percent'));
      assert.ok(percent >= 0 && percent < 100, `percent ${percent}`);
      assert.match(await progress.textContent(), /Importing: (Reading the file|Opening the backup|Checking every record|Saving)/);
      assert.match(await progress.textContent(), /\d+%/);
      await progress.scrollIntoViewIfNeeded();
      await shot(page, `data-import-progress-${width}`);

      await page.getByTestId('backup-cancel').click();
      await page.getByTestId('import-cancelled').waitFor();
      assert.equal(await progress.count(), 0, 'the progress bar goes away');
      assert.equal(await page.getByTestId('import-done').count(), 0);
      const after = await readDb(page, ['sessions', 'memories']);
      assert.deepEqual(after, before, `cancelled during ${phase}: the store is unchanged (replace mode: not even wiped)`);
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});
