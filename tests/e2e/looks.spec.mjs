// Looks: dark mode follows the system and a switch in Settings, across reloads; wide
// tables in replies scroll sideways on a phone instead of breaking words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, loadTestModel, say, setScript } from './flows.mjs';

const server = serveApp();

const background = (page) =>
  page.evaluate(() => getComputedStyle(document.body).backgroundColor || getComputedStyle(document.documentElement).backgroundColor);
const pageBg = (page) => page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--bg').trim());

test('dark mode follows the system until the user chooses, and the choice survives a reload', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${server.url}/#/settings`);
    await page.getByTestId('theme').waitFor();
    assert.equal(await pageBg(page), '#131816', 'dark system: dark page');
    assert.equal(await page.getByTestId('theme-system').isChecked(), true);

    await page.getByTestId('theme-light').check();
    assert.equal(await pageBg(page), '#f7f6f2', 'light chosen on a dark system');
    await page.reload();
    await page.getByTestId('theme').waitFor();
    assert.equal(await pageBg(page), '#f7f6f2', 'still light after a reload');
    assert.equal(await page.getByTestId('theme-light').isChecked(), true);

    await page.emulateMedia({ colorScheme: 'light' });
    assert.equal(await pageBg(page), '#f7f6f2', 'a chosen theme ignores the system');
    await page.getByTestId('theme-dark').check();
    assert.equal(await pageBg(page), '#131816', 'dark chosen on a light system');
    await shot(page, 'settings-dark-1280');
    await page.getByTestId('theme-system').check();
    assert.equal(await pageBg(page), '#f7f6f2', 'back to the light system');
    await page.emulateMedia({ colorScheme: 'dark' });
    // The device's change arrives as an event: wait for it (it fails if the page never follows).
    await page.waitForFunction(() => getComputedStyle(document.documentElement).getPropertyValue('--bg').trim() === '#131816', null);
    assert.notEqual(await background(page), '');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a wide table in a reply scrolls sideways on a phone, words whole, and the box can be focused', async () => {
  const h = await launch({ viewport: { width: 375, height: 800 } });
  try {
    const { page } = h;
    await loadTestModel(page, server.url);
    const table =
      '| Day | Training plan | Distance | Notes |\n|---|---|---|---|\n| Monday | Easy recovery jog around the park | 5 kilometres | Keep the heart rate low and steady |\n| Tuesday | Intervals on the running track | 8 kilometres | Six repeats of eight hundred metres |';
    await setScript(page, { replies: [{ when: 'plan', say: `Here is the plan:\n\n${table}` }], delayMs: 1 });
    await page.getByTestId('nav-chat').click();
    await say(page, 'Give me a training plan');
    const box = page.locator('[data-testid="reply-body"] .table-scroll');
    await box.waitFor();
    const m = await box.evaluate((el) => ({
      scrolls: el.scrollWidth > el.clientWidth,
      boxWidth: el.getBoundingClientRect().width,
      tabIndex: el.tabIndex,
      label: el.getAttribute('aria-label'),
      // Each cell on one line: no word broken over lines.
      tallest: Math.max(...[...el.querySelectorAll('td')].map((td) => td.getBoundingClientRect().height)),
      lineHeight: parseFloat(getComputedStyle(el.querySelector('td')).lineHeight) || 20,
    }));
    assert.ok(m.scrolls, 'the table is wider than the box: it scrolls');
    assert.ok(m.boxWidth <= 375, `the box fits the screen (${m.boxWidth})`);
    assert.equal(m.tabIndex, 0);
    assert.match(m.label, /Table/);
    assert.ok(m.tallest < m.lineHeight * 2, `cells stay on one line (${m.tallest} px)`);
    assert.equal(
      await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      true,
      'the page itself does not scroll sideways',
    );
    await box.scrollIntoViewIfNeeded();
    await shot(page, 'reply-table-375');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('phone: the chats drawer closes on Escape, on a tap outside and with its close button; replies are announced', async () => {
  const h = await launch({ viewport: { width: 375, height: 800 } });
  try {
    const { page } = h;
    await loadTestModel(page, server.url);
    await page.getByTestId('nav-chat').click();
    const drawer = page.getByTestId('chats-drawer');
    const open = page.getByTestId('open-chats');
    for (const close of ['escape', 'backdrop', 'button']) {
      await open.click();
      await drawer.waitFor({ state: 'visible' });
      assert.equal(await open.getAttribute('aria-expanded'), 'true');
      if (close === 'escape') await page.keyboard.press('Escape');
      else if (close === 'backdrop')
        await page.mouse.click(360, 400); // right of the drawer
      else await page.getByTestId('close-chats').click();
      await drawer.waitFor({ state: 'hidden' });
      assert.equal(await open.getAttribute('aria-expanded'), 'false', `closed by ${close}`);
    }
    await open.click();
    await drawer.waitFor({ state: 'visible' });
    await shot(page, 'chats-drawer-375');
    await page.keyboard.press('Escape');
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('data-testid')),
      'open-chats',
      'focus back on the ☰ button',
    );

    // A written reply is announced once, saying who speaks; each message says who speaks too.
    const reply = await say(page, 'Hello there');
    await page.waitForFunction(() => document.querySelector('[data-testid="reply-announcer"]')?.textContent?.startsWith('Tealeaf said:'));
    assert.equal(await page.getByTestId('reply-announcer').textContent(), `Tealeaf said: ${reply}`);
    assert.equal(await page.getByTestId('turn-user').last().getAttribute('aria-label'), 'You said');
    assert.equal(await page.getByTestId('turn-assistant').last().getAttribute('aria-label'), 'Tealeaf said');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
