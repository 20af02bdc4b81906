// The first five minutes: the chat's first-run card ranks what can chat on this device
// (a model server already running here first, then the browser's model, WebGPU where it works,
// the processor), one click puts it to use and stays in the chat; the chat header's model picker
// says the engine, the model and its state and switches models (the next reply is stored with the
// new model), also after a reload. Disabled buttons look disabled in the dark theme too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, lastReply, readDb, say, send } from './flows.mjs';
import { startFakeOpenAiServer } from '../support/fake-openai-server.mjs';

const server = serveApp();
let fake;
before(async () => {
  fake = await startFakeOpenAiServer({ delayMs: 1 });
});
after(async () => {
  await fake?.close();
});

/** The e2e build looks for model servers where a test says (its fake on a free port). */
const lookAt = (servers) => `localStorage.setItem('tealeaf-test-local-servers', ${JSON.stringify(JSON.stringify(servers))});`;

async function appSettings(page) {
  const { settings } = await readDb(page, ['settings']);
  return settings.find((s) => s.key === 'app')?.value ?? {};
}

async function turnsOf(page) {
  const { turns } = await readDb(page, ['turns']);
  return turns.filter((t) => t.role === 'assistant').sort((a, b) => a.time - b.time || a.index - b.index);
}

const picker = (page) => page.getByTestId('model-picker');
async function pickerSays(page, model, state = 'Ready') {
  await page.waitForFunction(
    ([m, s]) => {
      const b = document.querySelector('[data-testid="model-picker"]');
      return (
        b?.querySelector('[data-testid="model-picker-model"]')?.textContent === m &&
        b?.querySelector('[data-testid="model-picker-state"]')?.textContent === s
      );
    },
    [model, state],
  );
}

test('a model server running here is ranked first; one click uses it from the chat; replies come from it, also after a reload', async () => {
  for (const width of [1280, 375]) {
    const h = await launch({ viewport: { width, height: 800 }, init: lookAt([{ name: 'Ollama', url: fake.url }]) });
    try {
      const { page } = h;
      await page.goto(`${server.url}/`);
      const first = page.getByTestId('first-run-choice').first();
      await page.locator('[data-testid="first-run-choice"][data-engine="server"]').waitFor();
      assert.equal(await first.getAttribute('data-engine'), 'server', 'the server is ranked first');
      assert.match(await first.textContent(), /Ollama on this computer.*2 models: nothing to download/s);
      const engines = await page.getByTestId('first-run-choice').evaluateAll((els) => els.map((e) => e.getAttribute('data-engine')));
      // No WebGPU in this browser: a WebGPU model is not offered; the processor's is, after the server.
      assert.deepEqual(engines, ['server', 'cpu']);
      assert.equal(await picker(page).getAttribute('data-state'), 'none');
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        await shot(page, `first-run-server-${width}-${scheme}`);
      }
      await page.emulateMedia({ colorScheme: 'light' });

      // One click: connected, its first model in use, still in the chat.
      await first.getByTestId('first-run-use').click();
      await pickerSays(page, 'tiny-chat');
      assert.equal(await picker(page).getAttribute('data-engine'), 'server');
      assert.equal(new URL(page.url()).hash, '#/chat');
      assert.equal(await page.getByTestId('no-model-hint').count(), 0);
      const before = fake.requests.length;
      assert.equal(await say(page, 'My sister Ana plays the cello'), 'Served locally: My sister Ana plays the cello ✓');
      assert.equal(fake.requests.slice(before).find((r) => r.body?.stream)?.body.model, 'tiny-chat');
      assert.equal((await turnsOf(page)).at(-1).modelId, 'tiny-chat');
      const s = await appSettings(page);
      assert.equal(s.chatModelId, 'local-server');
      assert.equal(s.serverModel, 'tiny-chat');
      assert.equal(s.serverUrl, fake.url);

      // After a reload: the same engine and model, without asking.
      await page.reload();
      await pickerSays(page, 'tiny-chat');
      assert.equal(await say(page, 'Ana has a concert on Friday'), 'Served locally: Ana has a concert on Friday ✓');
      assert.equal((await turnsOf(page)).at(-1).modelId, 'tiny-chat');
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});

const portOpen = (port) =>
  new Promise((ok) => {
    const s = netConnect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), ok(true)));
    s.once('error', () => ok(false));
  });

test('no server and no WebGPU: the usual ports are asked quietly, the card leads with the processor model and its size', async (t) => {
  const busy = [];
  for (const port of [11434, 1234, 8080]) if (await portOpen(port)) busy.push(port);
  if (busy.length) return t.skip(`something listens on ${busy.join(', ')} on this machine: a server may be found there`);
  const h = await launch();
  try {
    const { page } = h;
    const asked = [];
    page.on('request', (r) => /\/v1\/models$/.test(r.url()) && asked.push(new URL(r.url()).origin));
    await page.goto(`${server.url}/`);
    await page.getByTestId('first-run-choice').first().waitFor();
    await page.getByTestId('first-run-looking').waitFor({ state: 'detached' });
    // The product's addresses, not a test's (the e2e build looks there unless told otherwise).
    for (const origin of ['http://127.0.0.1:11434', 'http://127.0.0.1:1234', 'http://127.0.0.1:8080'])
      assert.ok(asked.includes(origin), `${origin} was asked (${asked.join(', ')})`);
    const first = page.getByTestId('first-run-choice').first();
    assert.equal(await first.getAttribute('data-engine'), 'cpu');
    const words = await first.textContent();
    // The test build's processor model is 0.8 MB: its size and speed are said, the button names the download.
    assert.match(
      words,
      /Tiny test chat model.*Runs on the processor, no WebGPU needed; by its size, quick even on an old laptop\. A 1 MB download/s,
    );
    assert.equal((await first.getByTestId('first-run-use').textContent()).trim(), 'Download 1 MB');
    assert.match(await page.getByTestId('no-model-hint').textContent(), /can't run a WebGPU model here; the processor/);
    // Quietly: nothing answering is no error.
    assert.equal(await page.getByTestId('toast-error').count(), 0);
    assert.equal(await page.locator('[data-testid="no-model-hint"] [role="alert"]').count(), 0);
    await shot(page, 'first-run-cpu-1280');

    // One click: the processor model downloads and loads, shown in the chat, and answers.
    await first.getByTestId('first-run-use').click();
    await pickerSays(page, 'Tiny test chat model', 'Ready');
    assert.equal(await picker(page).getAttribute('data-engine'), 'cpu');
    assert.equal(new URL(page.url()).hash, '#/chat');
    await send(page, 'Hello');
    await lastReply(page);
    assert.equal((await turnsOf(page)).at(-1).modelId, 'tealeaf-test/tiny-causal-lm');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('the header picker switches model by keyboard and by pointer; the next reply is stored with the new model, also after a reload', async () => {
  const h = await launch({ init: lookAt([{ name: 'LM Studio', url: fake.url }]) });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await page.locator('[data-testid="first-run-choice"][data-engine="server"] [data-testid="first-run-use"]').click();
    await pickerSays(page, 'tiny-chat');
    await say(page, 'First message');
    assert.equal((await turnsOf(page)).at(-1).modelId, 'tiny-chat');

    // Keyboard: the button opens a listbox; the arrows move, Enter chooses; focus comes back.
    await picker(page).focus();
    await page.keyboard.press('Enter');
    const list = page.getByRole('listbox', { name: 'Chat models that work here' });
    await list.waitFor();
    assert.equal(await picker(page).getAttribute('aria-expanded'), 'true');
    const options = await page
      .getByRole('option')
      .evaluateAll((els) => els.map((e) => [e.getAttribute('data-key'), e.getAttribute('aria-selected')]));
    assert.deepEqual(options.slice(0, 2), [
      [`server:${fake.url}:tiny-chat`, 'true'],
      [`server:${fake.url}:tiny-judge`, 'false'],
    ]);
    assert.ok(
      options.some(([k]) => k === 'tealeaf-test-scripted'),
      'a model that needs no download is offered',
    );
    assert.ok(!options.some(([k]) => k === 'tealeaf-test/tiny-causal-lm'), 'a model still to download is not (the Models page has it)');
    await shot(page, 'picker-open-1280-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'picker-open-1280-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await list.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'model-picker');
    await pickerSays(page, 'tiny-judge');
    const before = fake.requests.length;
    assert.equal(await say(page, 'Second message'), 'Served locally: Second message ✓');
    assert.equal(fake.requests.slice(before).find((r) => r.body?.stream)?.body.model, 'tiny-judge');
    const turns = await turnsOf(page);
    assert.deepEqual(
      turns.map((t) => t.modelId),
      ['tiny-chat', 'tiny-judge'],
      'each reply keeps the model that wrote it',
    );
    assert.equal((await appSettings(page)).serverModel, 'tiny-judge');

    await page.reload();
    await pickerSays(page, 'tiny-judge');
    assert.equal(await say(page, 'Third message'), 'Served locally: Third message ✓');
    assert.equal((await turnsOf(page)).at(-1).modelId, 'tiny-judge');
    // Escape closes without a change.
    await picker(page).click();
    await list.waitFor();
    await page.keyboard.press('Escape');
    await list.waitFor({ state: 'detached' });
    await pickerSays(page, 'tiny-judge');

    // Pointer: another engine (the scripted test model: no download).
    await picker(page).click();
    await page.locator('[data-testid="model-option"][data-key="tealeaf-test-scripted"]').click();
    await pickerSays(page, 'Scripted test model');
    assert.equal(await picker(page).getAttribute('data-engine'), 'test');
    assert.equal(await say(page, 'Fourth message'), 'You said: Fourth message');
    assert.equal((await turnsOf(page)).at(-1).modelId, 'tealeaf-test-scripted');

    // Back to the server.
    await picker(page).click();
    await page.locator(`[data-testid="model-option"][data-key="server:${fake.url}:tiny-chat"]`).click();
    await pickerSays(page, 'tiny-chat');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('the picker at 375 px: compact, light and dark; a server that stops is "Not reachable" until it answers again', async () => {
  let own = await startFakeOpenAiServer();
  const h = await launch({ viewport: { width: 375, height: 800 }, init: lookAt([{ name: 'Ollama', url: own.url }]) });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await page.locator('[data-testid="first-run-choice"][data-engine="server"] [data-testid="first-run-use"]').click();
    await pickerSays(page, 'tiny-chat');
    await say(page, 'Hello from a phone');
    const box = await picker(page).boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 375, `the picker fits the screen (${JSON.stringify(box)})`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= 375), true, 'no sideways scroll');
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, `picker-375-${scheme}`);
      await picker(page).click();
      await page.getByRole('listbox').waitFor();
      const list = await page.getByTestId('model-picker-popup').boundingBox();
      assert.ok(list.x >= 0 && list.x + list.width <= 375, `the list fits the screen (${JSON.stringify(list)})`);
      await shot(page, `picker-open-375-${scheme}`);
      await page.keyboard.press('Escape');
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // The server stops: the next reply fails and the picker says so; once it runs again, Reconnect.
    const port = Number(new URL(own.url).port);
    await own.close();
    await send(page, 'Are you there?');
    await pickerSays(page, 'tiny-chat', 'Not reachable');
    assert.equal(await picker(page).getAttribute('data-state'), 'unreachable');
    own = await startFakeOpenAiServer({ port });
    await page.getByTestId('reconnect').click();
    await pickerSays(page, 'tiny-chat', 'Ready');
    assertNoOffHost(h);
  } finally {
    await h.dispose();
    await own.close();
  }
});

test('the Models page leads with what works here; disabled buttons look disabled in the dark theme', async () => {
  for (const width of [1280, 375]) {
    const h = await launch({ viewport: { width, height: 800 }, init: lookAt([{ name: 'Ollama', url: fake.url }]) });
    try {
      const { page } = h;
      await page.goto(`${server.url}/#/models`);
      await page.getByTestId('server-found').waitFor();
      // The found server comes before the chat models; models that need WebGPU are folded away last.
      const order = await page.evaluate(() =>
        ['server-card', 'model-list', 'unavailable-models'].map((id) => {
          const el = document.querySelector(`[data-testid="${id}"]`);
          return el ? el.getBoundingClientRect().top + window.scrollY : -1;
        }),
      );
      assert.ok(order[0] >= 0 && order[0] < order[1] && order[1] < order[2], `server, models, unavailable: ${order}`);
      assert.equal(await page.getByTestId('unavailable-models').evaluate((d) => d.open), false, 'folded away');
      const usable = await page.locator('[data-testid="model-list"] [data-testid="model-unavailable"]').count();
      assert.equal(usable, 0, 'the list above has only models that can run here');
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.evaluate(() => window.scrollTo(0, 0));
        await shot(page, `models-first-${width}-${scheme}`);
      }

      // Dark: a disabled Download does not look like the enabled ones.
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.getByTestId('unavailable-models').locator('summary').click();
      const look = (sel) =>
        page
          .locator(sel)
          .first()
          .evaluate((b) => {
            const s = getComputedStyle(b);
            return { bg: s.backgroundColor, color: s.color, opacity: s.opacity, disabled: b.disabled };
          });
      const disabled = await look('[data-testid="model-list-unavailable"] button.primary');
      const enabled = await look('[data-testid="model-list"] button.primary');
      assert.equal(disabled.disabled, true);
      assert.equal(enabled.disabled, false);
      assert.notEqual(disabled.bg, enabled.bg, 'a disabled primary button has no accent fill');
      assert.notEqual(disabled.color, enabled.color);
      await page.locator('[data-testid="model-list-unavailable"] li').first().scrollIntoViewIfNeeded();
      await shot(page, `models-disabled-${width}-dark`);

      // The found server: one click, then the chat.
      await page.getByTestId('server-found-use').click();
      await pickerSays(page, 'tiny-chat');
      assert.equal(new URL(page.url()).hash, '#/chat');
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});
