// When a chat model is ready, a short self-test tells whether it writes memories well.
// The scripted model under the enforcing stand-in: judging relations as a careful model does, it is
// found good (the Models card says so, the chat shows no notice, a reload does not test it again);
// with every JSON answer faulty (faults rate 1, seed 1) it is found weak or unusable, and the card
// and a notice under the chat's header say so in words (role=status), with Hide remembered after a
// reload. "Test again" is reachable by keyboard. Screenshots at 1280 and 375 px wide.
// The e2e build runs the self-test only where a test asks (localStorage 'tealeaf-test-self-test').
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, held, pickTestModel, setScript, setScriptHolding, TEST_MODEL } from './flows.mjs';
import { audit } from './axe.mjs';

const server = serveApp();

/** Opens the Models view with the self-test on and `script` for the scripted model. */
async function openModels(page, script) {
  await page.goto(`${server.url}/`);
  await page.evaluate(() => localStorage.setItem('tealeaf-test-self-test', 'on'));
  await setScriptHolding(page, { delayMs: 1, ...script });
  await page.goto(`${server.url}/#/models`);
  await page.reload();
  await page.getByTestId(`load-${TEST_MODEL}`).waitFor();
}

/** The check on the model's card once it has a result. */
async function checkDone(page) {
  const check = page.getByTestId(`model-${TEST_MODEL}`).getByTestId('model-check');
  await check.and(page.locator('[data-state="done"]')).waitFor();
  return check;
}

/** JSON calls the scripted model has answered in this page, by schema title. */
const jsonCalls = (page) => page.evaluate(() => (window.tealeafStandin?.calls ?? []).filter((c) => c.kind === 'json').map((c) => c.title));

const text = async (locator) => (await locator.textContent()).replace(/\s+/g, ' ').trim();

test('a model that writes memories well: said on its card, no notice in the chat, not tested again', async () => {
  const h = await launch();
  try {
    const { page } = h;
    // Its first answer held, so the check is seen while it runs (not raced by a timer).
    await openModels(page, { labels: 'judge', holdJson: ['session_memories'] });
    await pickTestModel(page);
    await held(page, 'session_memories');
    const running = page.getByTestId(`model-${TEST_MODEL}`).getByTestId('model-check');
    await running.and(page.locator('[data-state="running"]')).waitFor();
    assert.equal(await text(running.getByRole('status')), 'Checking how well this model writes memories…');
    await shot(page, 'model-check-running-1280');
    await setScript(page, { delayMs: 1, labels: 'judge' });

    const check = await checkDone(page);
    assert.equal(await check.getAttribute('data-verdict'), 'good');
    assert.equal(await text(check.getByTestId('model-check-headline')), 'Scripted test model wrote memories well in a short test.');
    assert.deepEqual(await jsonCalls(page), ['session_memories', 'relation_labels']);
    await check.locator('summary').click();
    assert.match(await text(check.getByTestId('model-check-mode')), /a grammar/);
    await shot(page, 'model-check-good-1280');

    await page.getByTestId('nav-chat').click();
    await page.getByTestId('composer').waitFor();
    assert.equal(await page.getByTestId('model-check-notice').count(), 0, 'no notice for a good model');

    // Another start: the result is remembered, the model is not tested again.
    await page.reload();
    await page.goto(`${server.url}/#/models`);
    await pickTestModel(page);
    const again = await checkDone(page);
    assert.equal(await again.getAttribute('data-verdict'), 'good');
    await page.waitForTimeout(500);
    assert.deepEqual(await jsonCalls(page), [], 'no self-test calls after the reload');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('a weak model: the card and a notice in the chat say so in words; Hide is remembered; Test again by keyboard', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await openModels(page, { labels: 'judge', faults: { rate: 1, seed: 1 } });
    await pickTestModel(page);
    const check = await checkDone(page);
    const verdict = await check.getAttribute('data-verdict');
    assert.ok(verdict === 'weak' || verdict === 'unusable', `verdict ${verdict}`);
    const headline = await text(check.getByTestId('model-check-headline'));
    assert.match(headline, /^Scripted test model (wrote memories poorly|could not write memories) in a short test \(it .+\)\.$/);
    assert.match(
      await text(check.getByTestId('model-check-advice')),
      /^(Memories from your chats may be incomplete or wrong|Tealeaf will remember little)/,
    );
    await check.locator('summary').click();
    assert.ok((await check.getByTestId('model-check-list').locator('li.failed').count()) >= 1);
    assert.deepEqual(await audit(page), []);
    await shot(page, 'model-check-weak-1280');

    await page.getByTestId('nav-chat').click();
    const notice = page.getByTestId('model-check-notice');
    await notice.waitFor();
    assert.equal(await notice.locator('xpath=..').getAttribute('role'), 'status');
    assert.match(await text(notice), new RegExp(headline.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.deepEqual(await audit(page), []);
    await shot(page, 'model-check-notice-1280');
    await page.setViewportSize({ width: 375, height: 740 });
    await shot(page, 'model-check-notice-375');
    const box = await notice.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `the notice fits a phone: ${JSON.stringify(box)}`);
    await page.goto(`${server.url}/#/models`);
    await page.getByTestId(`model-${TEST_MODEL}`).getByTestId('model-check').scrollIntoViewIfNeeded();
    await shot(page, 'model-check-weak-375');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Hide, by keyboard: remembered for this model after a reload.
    await page.getByTestId('nav-chat').click();
    await page.getByTestId('model-check-notice-hide').focus();
    await page.keyboard.press('Enter');
    await notice.waitFor({ state: 'detached' });
    await h.close();
    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/models`);
    await pickTestModel(page);
    await checkDone(page);
    await page.getByTestId('nav-chat').click();
    await page.getByTestId('composer').waitFor();
    await page.waitForTimeout(300);
    assert.equal(await page.getByTestId('model-check-notice').count(), 0, 'hidden after a reload');

    // Test again, by keyboard, with a careful model now: good, and the notice stays away.
    await setScript(page, { delayMs: 1, labels: 'judge' });
    await page.goto(`${server.url}/#/models`);
    const button = page.getByTestId(`model-${TEST_MODEL}`).getByTestId('model-check-again');
    await button.focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      (id) => document.querySelector(`[data-testid="model-${id}"] [data-testid="model-check"]`)?.getAttribute('data-verdict') === 'good',
      TEST_MODEL,
    );
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
