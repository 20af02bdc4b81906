// An accessibility check of every view with axe-core, at desktop and phone widths, in the light and
// the dark scheme: no serious or
// critical violation. Views are shown with data in them (the demo's memories, a chat
// with a reply, the detail panel open) so their real content is checked, not empty shells.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit } from './axe.mjs';
import { launch, serveApp } from './harness.mjs';
import { assertNoOffHost, loadTestModel, pickTestModel, say, send, setScript } from './flows.mjs';

const server = serveApp();

test('every view passes axe-core without serious or critical violations, at 1280 and 375 px, light and dark', async () => {
  const problems = [];
  const checked = new Set();
  for (const [width, scheme] of [
    [1280, 'light'],
    [375, 'light'],
    [1280, 'dark'],
    [375, 'dark'],
  ]) {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      await page.emulateMedia({ colorScheme: scheme });
      const check = async (view) => {
        for (const p of await audit(page)) problems.push(`${width}px ${scheme} ${view}: ${p}`);
        // One level-one heading per view (axe rates its absence moderate, below the bar).
        const h1 = await page.locator('h1').count();
        if (h1 !== 1) problems.push(`${width}px ${scheme} ${view}: ${h1} level-one headings`);
        checked.add(`${width}:${scheme}:${view}`);
      };
      // The first-run card, before any model.
      await page.goto(`${server.url}/`);
      await page.getByTestId('first-run-choice').first().waitFor();
      await check('chat, first-run card');
      await loadTestModel(page, server.url);
      await check('models');
      await page.getByTestId('nav-chat').click();
      await page.getByTestId('composer').waitFor();
      await check('chat, empty');
      // A reply before its first word: the writing dots (a script slow enough that none arrives).
      await setScript(page, { delayMs: 600_000 });
      await send(page, 'Are you there?');
      await page.locator('.typing').waitFor();
      await check('chat, writing');
      await page.getByTestId('stop').click();
      await page.getByTestId('send').waitFor();
      assert.equal(await page.getByTestId('turn-assistant').last().getAttribute('data-status'), 'stopped');
      await setScript(page, {});
      await say(page, 'I adopted a cat named Miso');
      await check('chat, with a reply');
      await page.getByTestId('model-picker').click();
      await page.getByRole('listbox').waitFor();
      await check('chat, model picker open');
      await page.keyboard.press('Escape');
      await page.getByTestId('nav-memory').click();
      await page.getByTestId('load-demo').click();
      await page.getByTestId('memory-count').waitFor();
      for (const tab of ['Timeline', 'Graph', 'Persona', 'List']) {
        await page.getByRole('tab', { name: tab }).click();
        await page.waitForTimeout(400);
        await check(`memory, ${tab}`);
      }
      await page.getByRole('tab', { name: 'Persona' }).click();
      await page.locator('.trait button.text').first().click();
      await page.locator('aside[aria-label="Memory details"]').waitFor();
      await check('memory, detail panel');
      // Evaluate on the demo's memories: one question, one condition, a case opened.
      await page.getByTestId('nav-evaluate').click();
      await page.getByTestId('eval-questions').or(page.getByTestId('eval-blocked')).waitFor();
      // The demo opened in a reloaded page: the model may need loading there first.
      if (await page.getByTestId('eval-blocked').isVisible()) {
        await page.getByTestId('nav-models').click();
        await pickTestModel(page);
        await page.getByTestId('nav-evaluate').click();
      }
      await page.getByTestId('eval-questions').fill('1');
      for (const c of ['no-memory', 'no-refinement', 'plain-topk', 'no-requery', 'no-persona-bank'])
        await page.getByTestId(`eval-condition-${c}`).uncheck();
      await page.getByTestId('eval-run').click();
      await page.getByTestId('eval-case').first().locator('summary').click();
      await check('evaluate, results');
      await page.getByTestId('nav-settings').click();
      await page.getByTestId('idle-gap').waitFor();
      await check('settings');
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
  console.log(`[a11y] views checked: ${checked.size}`);
  assert.equal(checked.size, 52, 'thirteen views at two widths, light and dark');
  assert.deepEqual(problems, []);
});

test('control: the audit reports a violation when there is one', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/settings`);
    await page.getByTestId('idle-gap').waitFor();
    // A button with no name and low-contrast text, added by hand.
    await page.evaluate(() => {
      const b = document.createElement('button');
      b.innerHTML = '<svg width="10" height="10"></svg>';
      document.body.append(b);
      const p = document.createElement('p');
      p.textContent = 'barely visible';
      p.style.cssText = 'color:#eee;background:#fff';
      document.body.append(p);
    });
    const found = await audit(page);
    assert.ok(
      found.some((f) => f.startsWith('button-name')),
      found.join('\n'),
    );
    assert.ok(
      found.some((f) => f.startsWith('color-contrast')),
      found.join('\n'),
    );
  } finally {
    await h.dispose();
  }
});
