// The real model runtime path as far as this machine allows: no WebGPU, a software adapter,
// and a model download that fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost } from './flows.mjs';

const server = serveApp();

test('without WebGPU: a clear page, and the rest of the app works', async () => {
  const h = await launch({ webgpu: false });
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/models`);
    await page.getByTestId('no-webgpu').waitFor();
    const card = await page.getByTestId('gpu-card').textContent();
    assert.match(card, /graphics|GPU|WebGPU/i);
    assert.ok((await page.locator('[data-testid="gpu-card"] li').count()) > 0, 'advice on what to do');
    // The catalog still shows what exists, its sizes and what it needs, folded away below what works
    // here; nothing can be started.
    assert.equal(await page.locator('[data-testid="model-list"] [data-testid="model-unavailable"]').count(), 0);
    await page.getByTestId('unavailable-models').locator('summary').click();
    const models = page.locator('[data-testid="model-list-unavailable"] > li').filter({ has: page.getByTestId('model-unavailable') });
    assert.ok((await models.count()) >= 3, 'the catalog is listed');
    for (const el of await models.all()) {
      const text = await el.textContent();
      assert.match(text, /Download \d+(\.\d)? (MB|GB)/);
      // Spaced as a sentence: "Download 1.2 GB · needs about 2 GB of graphics memory".
      assert.match(text, /(MB|GB)\s·\sneeds about \d+(\.\d)? (MB|GB) of graphics memory/);
      assert.match(text, /Needs WebGPU/);
      assert.equal(await el.locator('button.primary').isDisabled(), true);
    }
    await shot(page, 'models-no-webgpu');
    await page.getByTestId('nav-chat').click();
    await page.getByTestId('no-model-hint').waitFor();
    assert.match(await page.getByTestId('no-model-hint').textContent(), /can't run a WebGPU model.*processor/);
    await shot(page, 'chat-no-webgpu');
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('idle-gap').waitFor();
    await shot(page, 'settings');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('with a software WebGPU adapter: the recommended model is a q4f32 one', async () => {
  const h = await launch({ webgpu: true });
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/models`);
    await page.getByTestId('gpu-ok').waitFor();
    // The adapter is named (vendor and architecture where the browser gives no description).
    const adapter = (await page.getByTestId('gpu-ok').textContent()).trim();
    assert.doesNotMatch(adapter, /^(WebGPU adapter)?$/);
    const rec = page.locator('[data-recommended="true"]');
    await rec.waitFor();
    const id = (await rec.getAttribute('data-testid')).replace(/^model-/, '');
    assert.match(id, /q4f32/, `recommended ${id}`);
    for (const el of await page.locator('[data-testid="model-list"] > li').all()) {
      const mid = (await el.getAttribute('data-testid')).replace(/^model-/, '');
      if (mid !== 'tealeaf-test-scripted') assert.doesNotMatch(mid, /q4f16/, 'no shader-f16 here: no q4f16 models offered');
    }
    await shot(page, 'models-software-adapter');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a failing model download shows a clear error', async () => {
  const h = await launch({ webgpu: true });
  try {
    const { page } = h;
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    // A mirror on this machine that has none of the files: every model request gets a real 404.
    await page.goto(`${server.url}/#/settings`);
    await page.getByTestId('mirror').fill(`${server.url}/mlc`);
    await page.getByTestId('mirror').press('Tab');
    await page.getByTestId('nav-models').click();
    await page.getByTestId('gpu-ok').waitFor();
    const rec = page.locator('[data-recommended="true"]');
    const id = (await rec.getAttribute('data-testid')).replace(/^model-/, '');
    await page.getByTestId(`load-${id}`).click();
    const err = page.getByTestId('model-error');
    await err.waitFor();
    const text = await err.textContent();
    assert.match(text, /download/i);
    assert.match(text, /connection|network|try again|mirror|found/i);
    assert.equal(
      await page
        .getByTestId('model-status')
        .textContent()
        .then((t) => /No model/.test(t)),
      true,
    );
    // The user's download started while start-up was still checking the cache: start-up must not
    // "resume" it as a second, racing download (it did: a "Resuming the download" toast).
    assert.equal(await page.locator('[data-testid^="toast"]').filter({ hasText: 'Resuming' }).count(), 0);
    await shot(page, 'models-download-failed');
    // Retry starts the download again (files already fetched would come from the cache).
    const asked = () => requests.filter((u) => u.includes('/mlc/')).length;
    const before = asked();
    assert.ok(before > 0, 'the first attempt asked the mirror');
    await page.getByTestId('retry-download').click();
    await err.waitFor({ state: 'detached', timeout: 5_000 }).catch(() => {});
    await err.waitFor();
    assert.ok(asked() > before, 'Retry asked the mirror again');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
