// TeaFarm in the app: the Evaluate view writes counterfactual questions from the
// memorised sessions, asks them in simulated conversations under each condition, and shows the
// verdicts. It can be cancelled and continued, and it leaves the stores and the chat list exactly
// as they were: evaluation questions never reach the user's chats or memories.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, endAndRemember, loadTestModel, newChat, readDb, say, setScript } from './flows.mjs';

const server = serveApp();
const STORES = ['sessions', 'turns', 'memories', 'edges', 'segments', 'jobs'];
const CONDITIONS = 6;

async function sidebarTitles(page) {
  await page.getByTestId('nav-chat').click();
  const toggle = page.getByRole('button', { name: 'Show past sessions' });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByTestId('session-item').first().waitFor();
  return page.getByTestId('session-item').allTextContents();
}

test('Evaluate runs TeaFarm on the memorised sessions, can be cancelled and continued, and changes nothing stored', async () => {
  const h = await launch();
  try {
    const { page } = h;
    // No model yet, then no memories: the view says what to do.
    await page.goto(`${server.url}/#/evaluate`);
    await page.getByTestId('eval-blocked').filter({ hasText: 'Load a chat model' }).waitFor();
    await loadTestModel(page, server.url);
    await page.getByTestId('nav-evaluate').click();
    await page.getByTestId('eval-blocked').filter({ hasText: 'Nothing remembered yet' }).waitFor();

    await page.getByTestId('nav-chat').click();
    await setScript(page, { delayMs: 1 });
    await say(page, 'I ride my bike to work along the canal');
    await say(page, 'I started learning the cello this spring');
    await endAndRemember(page);
    await newChat(page);
    await say(page, 'My sister Ana moved to Porto last month');
    await endAndRemember(page);

    const before = await readDb(page, STORES);
    assert.ok(before.memories.length >= 3, 'the sessions were memorised');
    const titlesBefore = await sidebarTitles(page);

    // Slow replies, so the run can be cancelled half way.
    await setScript(page, { delayMs: 40 });
    await page.getByTestId('nav-evaluate').click();
    await page.getByTestId('eval-questions').fill('2');
    await shot(page, 'teafarm-1280-start');
    await page.getByTestId('eval-run').click();
    await page.getByTestId('eval-progress').waitFor();
    await page
      .getByTestId('eval-count')
      .filter({ hasText: /^[1-9]\d* of 12 cases done/ })
      .waitFor();
    await shot(page, 'teafarm-1280-progress');
    const progressText = await page.getByTestId('eval-progress').textContent();
    assert.match(progressText, /question \d/);
    await page.getByTestId('eval-cancel').click();
    await page.getByTestId('eval-cancelled').waitFor();
    const partial = await page.getByTestId('eval-case').count();
    assert.ok(partial >= 1 && partial < 2 * CONDITIONS, `a partial result (${partial} cases)`);

    // Continue: the finished cases are kept, the rest run.
    await setScript(page, { delayMs: 1 });
    await page.getByTestId('eval-run').click();
    await page.getByTestId('eval-run').waitFor();
    await page.getByTestId('eval-results').waitFor();
    assert.equal(await page.getByTestId('eval-cancelled').count(), 0);
    assert.equal(await page.getByTestId('eval-question').count(), 2);
    const cases = page.getByTestId('eval-case');
    assert.equal(await cases.count(), 2 * CONDITIONS, 'every question under every condition');
    const scores = page.getByTestId('eval-score');
    assert.equal(await scores.count(), CONDITIONS);
    for (const text of await scores.allTextContents()) assert.match(text, /\d+% ?\d+ of 2 corrected/);
    assert.equal(await page.locator('[data-testid="eval-case"][data-verdict="error"]').count(), 0);
    assert.ok((await page.getByTestId('eval-results').textContent()).includes('Kept from an earlier run'), 'the resumed run reused cases');

    // A case opens from the keyboard, showing the reply and the verdict.
    const first = cases.first();
    await first.locator('summary').focus();
    await page.keyboard.press('Enter');
    assert.equal(await first.evaluate((d) => d.open), true);
    assert.match(await first.getByTestId('eval-reply').textContent(), /You said: Since that is all over now/);
    assert.match(await first.getByTestId('eval-reason').textContent(), /Verdict: (Corrected|Fooled)/);
    assert.ok((await page.getByTestId('eval-answer').first().textContent()).length > 0);
    await shot(page, 'teafarm-1280');
    await page.setViewportSize({ width: 375, height: 800 });
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0, 'no sideways overflow');
    await first.scrollIntoViewIfNeeded();
    await shot(page, 'teafarm-375');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Nothing stored changed, and no chat holds an evaluation question.
    assert.deepEqual(await readDb(page, STORES), before);
    const titlesAfter = await sidebarTitles(page);
    assert.deepEqual(titlesAfter, titlesBefore);
    assert.ok(!titlesAfter.some((t) => /all over now/.test(t)));
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
