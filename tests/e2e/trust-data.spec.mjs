// The user's data, end to end: export a backup, delete everything (confirmed), import the backup
// back; and a broken backup is refused with a message while the data stays as it was.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, shot, startServer, tempProfile } from './harness.mjs';
import { assertNoOffHost, lastReply, loadTestModel, send, setScript } from './flows.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.close(); });

const count = async (page) => Number(/(\d+) memories/.exec(await page.getByTestId('memory-count').textContent())[1]);

test('export, delete all my data, import the backup: everything is back', async () => {
  const profile = tempProfile();
  const h = await launch({ profile });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await loadTestModel(page, server.url);
    await page.goto(`${server.url}/#/chat`);
    await setScript(page, { delayMs: 1 });
    await send(page, 'My favourite tree is the ginkgo');
    await lastReply(page);
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('load-demo').click();
    await page.getByTestId('memory-count').waitFor();
    const memories = await count(page);

    await page.getByTestId('nav-settings').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
    const file = join(profile, 'backup.json');
    await download.saveAs(file);
    const backup = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(backup.format, 'tealeaf-backup');
    assert.equal(backup.data.memories.length, memories);

    // Two confirmations: keep the models (Cancel), then yes, delete (OK).
    const answers = [false, true];
    page.on('dialog', (d) => void (answers.shift() ? d.accept() : d.dismiss()));
    await Promise.all([page.waitForEvent('load'), page.getByTestId('delete-all').click()]);
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('load-demo').waitFor();
    await page.getByTestId('nav-chat').click();
    assert.equal(await page.getByTestId('session-item').count(), 0, 'no sessions left');
    await shot(page, 'data-deleted');

    // A broken file is refused, and nothing changes.
    const broken = join(profile, 'broken.json');
    writeFileSync(broken, JSON.stringify({ ...backup, data: { ...backup.data, memories: [{ id: 'x', time: 'soon' }] } }));
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('import-file').setInputFiles(broken);
    await page.getByTestId('import-run').click();
    const err = await page.getByTestId('import-error').textContent();
    assert.match(err, /Nothing was changed/);
    assert.match(err, /memories\[0\]/);
    await shot(page, 'data-import-refused');

    await page.getByTestId('import-file').setInputFiles(file);
    await page.getByTestId('import-run').click();
    await page.getByTestId('import-done').waitFor();
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('memory-count').waitFor();
    assert.equal(await count(page), memories);
    await page.getByTestId('nav-chat').click();
    await page.getByTestId('session-item').filter({ hasText: 'ginkgo' }).waitFor();
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
