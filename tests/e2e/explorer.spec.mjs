// Memory explorer: import a LoCoMo-format conversation, select a memory, follow a link, edit one,
// delete one (with undo offered), reload: the changes persist.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, deleteOpenMemory, importLocomo } from './flows.mjs';

const FIXTURE = resolve(import.meta.dirname, '../fixtures/locomo-mini.json');
const REAL = resolve(import.meta.dirname, '../../../shared/data/locomo/26.json');

const server = serveApp();

async function memoryCount(page) {
  const t = await page.getByTestId('memory-count').textContent();
  return Number(/(\d+) memor(?:y|ies)/.exec(t)[1]);
}

const detailTitle = (page) => page.locator('aside[aria-label="Memory details"] h3').first();

test('import, select, follow a link, edit, delete, reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/memory`);
    await page.getByTestId('load-demo').waitFor();
    await shot(page, 'explorer-empty');
    await importLocomo(page, server.url, FIXTURE);
    const n = await memoryCount(page);
    assert.ok(n >= 5, `imported ${n} memories`);
    await shot(page, 'explorer-timeline');

    await page.getByRole('tab', { name: /list/i }).click();
    const first = page.locator('.tl button.item').first();
    const firstText = (await first.locator('.text').textContent()).trim();
    await first.click();
    await assert.doesNotReject(detailTitle(page).waitFor());
    assert.equal((await detailTitle(page).textContent()).trim(), firstText);
    await shot(page, 'explorer-selected');

    // Follow a link to the memory at its other end.
    const link = page.locator('aside[aria-label="Memory details"] .edges button.link-text').first();
    await link.waitFor();
    await link.click();
    await page.waitForFunction(
      (t) => document.querySelector('aside[aria-label="Memory details"] h3')?.textContent?.trim() !== t,
      firstText,
    );
    await shot(page, 'explorer-followed-link');

    // Edit the memory now shown.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.locator('aside[aria-label="Memory details"] textarea').fill('Edited by the e2e test: a memory fixed by hand');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForFunction(() =>
      document.querySelector('aside[aria-label="Memory details"] h3')?.textContent?.includes('Edited by the e2e test'),
    );

    // Delete the first memory.
    await page.locator('.tl button.item').filter({ hasText: firstText }).first().click();
    await deleteOpenMemory(page);
    await page.getByTestId('undo-bar').waitFor();
    assert.equal(await memoryCount(page), n - 1);
    await shot(page, 'explorer-deleted-undo');
    assertNoOffHost(h);
    await h.close();

    h = await launch({ profile });
    await h.page.goto(`${server.url}/#/memory`);
    await h.page.getByTestId('memory-count').waitFor();
    assert.equal(await memoryCount(h.page), n - 1);
    await h.page.getByRole('tab', { name: /list/i }).click();
    const texts = await h.page.locator('.tl button.item .text').allTextContents();
    assert.ok(
      texts.some((t) => t.includes('Edited by the e2e test')),
      'edit persisted',
    );
    assert.ok(!texts.some((t) => t.trim() === firstText), 'delete persisted');
    await shot(h.page, 'explorer-after-reload');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('the built-in demo loads in one click', async () => {
  const h = await launch();
  try {
    await h.page.goto(`${server.url}/#/memory`);
    await h.page.getByTestId('load-demo').click();
    await h.page.getByTestId('memory-count').waitFor();
    assert.ok((await memoryCount(h.page)) >= 15);
    await shot(h.page, 'explorer-demo');
    await h.page.getByRole('tab', { name: /persona/i }).click();
    await shot(h.page, 'explorer-demo-persona');
    await h.page.getByRole('tab', { name: /graph/i }).click();
    await shot(h.page, 'explorer-demo-graph');

    // A memory's source opens the conversation at that turn.
    await h.page.getByRole('tab', { name: /list/i }).click();
    await h.page.locator('.tl button.item').first().click();
    const source = h.page.locator('aside[aria-label="Memory details"] ul.sources button.source').first();
    const quote = (await source.locator('.quote').textContent()).replace(/[“”…]/g, '').trim().slice(0, 30);
    await source.click();
    const flashed = h.page.locator('article.flash');
    await flashed.waitFor();
    assert.ok((await flashed.textContent()).includes(quote), `the flashed turn holds "${quote}"`);
    await shot(h.page, 'explorer-open-source-turn');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test(
  'the real LoCoMo conversation 26 imports (skipped where ../shared is absent)',
  { skip: !existsSync(REAL) && 'no ../shared/data/locomo/26.json here' },
  async () => {
    const h = await launch();
    try {
      await importLocomo(h.page, server.url, REAL);
      assert.ok((await memoryCount(h.page)) > 100);
      await shot(h.page, 'explorer-locomo-26');
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  },
);
