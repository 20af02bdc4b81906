// The CPU engine for real, in a browser without WebGPU: transformers.js text generation on ONNX
// Runtime's WASM backend in its worker, running the generated tiny chat model (random weights,
// gibberish) served from 127.0.0.1. Mechanics only: the CPU model is recommended and loads, a
// reply streams and draws on memories, Stop stops it, a malformed model file gets a clear error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, startServer } from './harness.mjs';
import { assertNoOffHost, lastReply, loadTestEmbedder, loadTestModel, say, send, setScript } from './flows.mjs';

const CPU_MODEL = 'tealeaf-test/tiny-causal-lm';
const BROKEN_MODEL = 'tealeaf-test/broken-causal-lm';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

/** Lengths the streaming reply's text went through, sampled every animation frame until it ends. */
async function watchReply(page, index) {
  return page.evaluate(
    (i) =>
      new Promise((resolve) => {
        const lengths = [];
        const tick = () => {
          const el = document.querySelectorAll('[data-testid="turn-assistant"]')[i];
          const len = el?.querySelector('[data-testid="reply-body"]')?.textContent?.trim().length ?? 0;
          if (el && len !== lengths.at(-1)) lengths.push(len);
          if (el && el.getAttribute('data-status') !== 'streaming' && len > 0) resolve(lengths);
          else requestAnimationFrame(tick);
        };
        tick();
      }),
    index,
  );
}

test('without WebGPU: the CPU model is recommended, streams a reply, stops, and recalls memories', async () => {
  const h = await launch({ webgpu: false });
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/models`);
    await page.getByTestId('no-webgpu').waitFor();
    const advice = await page.getByTestId('engine-advice').textContent();
    assert.match(advice, /processor \(CPU\) recommended/);
    assert.match(advice, /WebGPU is not available/);
    const rec = page.locator('[data-recommended="true"]');
    assert.equal(await rec.getAttribute('data-testid'), `model-${CPU_MODEL}`);
    assert.match(await rec.textContent(), /runs on the processor/);
    assert.match(await rec.textContent(), /of memory, no WebGPU/);
    assert.equal(await page.getByTestId(`load-${CPU_MODEL}`).isDisabled(), false);
    await shot(page, 'models-cpu-engine');

    // Memories first, written by the scripted model (the tiny model's JSON is gibberish, so it
    // cannot summarise); then the engine is switched to the CPU model, which must recall them.
    await loadTestModel(page, server.url);
    await loadTestEmbedder(page);
    await page.getByTestId('nav-chat').click();
    await setScript(page, { delayMs: 2 });
    await say(page, 'I adopted a puppy named Biscuit last week');
    await say(page, 'Biscuit loves chasing the red ball in the park');
    await page.getByTestId('end-session').click();
    await page.getByTestId('session-status').filter({ hasText: 'remembered' }).waitFor();

    await page.getByTestId('nav-models').click();
    await page.getByTestId(`load-${CPU_MODEL}`).click();
    await page
      .getByTestId('model-status')
      .filter({ hasText: /Tiny test chat model/ })
      .waitFor();

    await page.getByTestId('nav-chat').click();
    await page.getByTestId('new-chat').click();
    await send(page, 'How is Biscuit doing with the ball?');
    await page.getByTestId('turn-assistant').first().waitFor();
    const lengths = await watchReply(page, 0);
    const first = await lastReply(page);
    assert.ok(first.length > 20, `a reply arrived (${first.length} chars)`);
    assert.ok(lengths.filter((n) => n > 0).length >= 3, `the reply grew in steps: ${lengths.join(',')}`);
    // The reply drew on the memories of the first chat.
    const chip = page.getByTestId('remembered').last();
    await chip.waitFor();
    await chip.click();
    assert.match(await page.getByTestId('remembered-detail').last().textContent(), /Biscuit/);
    await shot(page, 'chat-cpu-reply');

    // Stop mid-reply: the reply keeps what had arrived and is marked stopped. The random-weight
    // model samples its end token at random, so a reply can end by itself before the click lands;
    // and on a busy machine the worker can finish the whole reply while the page is still drawing
    // it, so the click lands on a reply that is already whole (marked stopped, at full length).
    // Either way the user asks again, as a user would; a reply cut short must come within four.
    let stopped;
    let replies = 1;
    const tries = [];
    // The longest whole reply seen: the first, or any that ended by itself below.
    let whole = first.length;
    for (let attempt = 0; attempt < 4 && stopped === undefined; attempt++) {
      // Stop is clicked in the page the moment the streaming reply shows its first words: a click
      // from the test after it saw them came too late on a quiet machine, where the tiny model
      // writes its whole reply in a few frames (four replies in a row ended whole).
      await page.evaluate(() => {
        const observer = new MutationObserver(() => {
          const all = document.querySelectorAll('[data-testid="turn-assistant"]');
          const last = all[all.length - 1];
          const body = last?.querySelector('[data-testid="reply-body"]')?.textContent ?? '';
          if (last?.getAttribute('data-status') !== 'streaming' || !/\S{3}/.test(body)) return;
          observer.disconnect();
          document.querySelector('[data-testid="stop"]')?.click();
        });
        observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
        window.__stopWhenWritten = observer;
      });
      await send(page, 'Tell me a long story about Biscuit');
      const reply = page.getByTestId('turn-assistant').nth(replies++);
      await reply.locator('[data-testid="reply-body"]').filter({ hasText: /\S{3}/ }).waitFor();
      await reply.and(page.locator('[data-status="stopped"], [data-status="complete"]')).waitFor();
      await page.evaluate(() => window.__stopWhenWritten?.disconnect());
      const status = await reply.getAttribute('data-status');
      const text = await lastReply(page, { status });
      tries.push(`${status} at ${text.length} chars`);
      if (status === 'stopped' && text.length < whole) stopped = text;
      if (status === 'complete') whole = Math.max(whole, text.length);
    }
    assert.ok(stopped !== undefined, `Stop cut one of four replies short of a whole one (${whole} chars): ${tries.join('; ')}`);
    assert.ok(stopped.length > 0, 'the stopped reply keeps what had arrived');

    // The engine still answers after a stop.
    await send(page, 'How are you today?');
    await page.getByTestId('turn-assistant').nth(replies).waitFor();
    assert.ok((await lastReply(page)).length > 0);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('a malformed model file: a clear error, and the CPU engine still loads a good model', async () => {
  const h = await launch({ webgpu: false });
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/models`);
    await page.getByTestId(`load-${BROKEN_MODEL}`).click();
    const err = page.getByTestId('model-error');
    await err.waitFor();
    const text = await err.textContent();
    assert.match(text, /damaged/);
    assert.match(text, /Download it again/);
    assert.match(text, /protobuf parsing failed/i);
    await page.getByTestId('retry-download').waitFor();
    await shot(page, 'models-cpu-bad-file');
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByTestId(`load-${CPU_MODEL}`).click();
    await page
      .getByTestId('model-status')
      .filter({ hasText: /Tiny test chat model/ })
      .waitFor();
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
