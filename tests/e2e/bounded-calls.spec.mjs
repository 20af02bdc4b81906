// A hostile or broken model server never stops the app, through the
// Models view and the chat against the server double (tests/support/fake-openai-server.mjs):
// a memorising call that never ends is stopped when the user switches model, and the job runs
// again with the new one; a model list that never finishes ends in an error and Connect works
// again; a server that ignores `stream: true` still gives its reply.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, PATIENCE_MS, serveApp } from './harness.mjs';
import { assertNoOffHost, lastReply, pollDb, say } from './flows.mjs';
import { startFakeOpenAiServer } from '../support/fake-openai-server.mjs';

const server = serveApp();
let fake;
before(async () => {
  fake = await startFakeOpenAiServer({ delayMs: 1 });
});
after(async () => {
  await fake?.close();
});

async function useServerModel(page, model) {
  await page.getByTestId('nav-models').click();
  await page.getByTestId('server-url').fill(fake.url);
  await page.getByTestId('server-connect').click();
  await page.getByTestId('server-model').selectOption(model);
  await page.getByTestId('server-use').click();
  await page.getByTestId('model-status').filter({ hasText: model }).waitFor();
}

const summaryCalls = (from) =>
  fake.requests.slice(from).filter((r) => r.body?.response_format?.json_schema?.schema?.title === 'session_memories');

test('a memorising call that never ends is stopped by switching model; the job runs again with the new model, no attempt lost', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/models`);
    await useServerModel(page, 'tiny-chat');
    await page.getByTestId('nav-chat').click();
    assert.equal(await say(page, 'My sister Ana plays the cello'), 'Served locally: My sister Ana plays the cello ✓');

    // The model gets stuck in JSON mode: one space at a time, never ending (within every limit).
    fake.set({ endless: 'trickle', eventDelayMs: 50 });
    const from = fake.requests.length;
    await page.getByTestId('end-session').click();
    for (const end = Date.now() + PATIENCE_MS; summaryCalls(from).length === 0 && Date.now() < end;) await page.waitForTimeout(50);
    assert.equal(summaryCalls(from).length, 1, 'the summarising call is in flight');
    // Stuck: the endless answer holds the job (a check that something does not happen, finishing:
    // a slow machine can make it weaker, not fail it).
    await page.waitForTimeout(1500);
    let db = await pollDb(page, (d) => d.jobs.length === 1, { what: 'the job' });
    assert.notEqual(db.jobs[0].status, 'done', 'stuck on the endless answer');

    // The user switches model: the stuck call stops, the job runs again with the new model.
    fake.set({ endless: false, eventDelayMs: 0 });
    await useServerModel(page, 'tiny-judge');
    db = await pollDb(page, (d) => d.jobs.length === 1 && d.jobs[0].status === 'done', { what: 'the job to finish' });
    assert.equal(db.jobs[0].attempts, 0, 'the stopped call was not counted as a failed attempt');
    assert.equal(db.jobs[0].lastError, undefined);
    assert.ok(db.memories.some((m) => m.text === 'The user said: My sister Ana plays the cello'));
    const calls = summaryCalls(from);
    assert.equal(calls.at(-1).body.model, 'tiny-judge');
    assert.ok(
      calls.every((c) => typeof c.body.max_tokens === 'number'),
      'every call has a token limit',
    );
    await page.getByTestId('nav-chat').click();
    await page.getByTestId('session-status').filter({ hasText: 'remembered' }).waitFor();
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    fake.set({ endless: false, eventDelayMs: 0 });
    await h.dispose();
  }
});

test('a model list that never finishes ends in an error and Connect works again; a reply sent whole (stream ignored) is shown', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/models`);
    fake.set({ modelsStall: true });
    await page.getByTestId('server-url').fill(fake.url);
    const connect = page.getByTestId('server-connect');
    await connect.click();
    await page.getByTestId('server-error').filter({ hasText: 'did not send its list of models within 10 s' }).waitFor();
    assert.equal(await connect.isEnabled(), true, 'Connect can be clicked again');

    fake.set({ modelsStall: false, noStream: true });
    await useServerModel(page, 'tiny-chat');
    await page.getByTestId('nav-chat').click();
    assert.equal(await say(page, 'Not streamed at all'), 'Served locally: Not streamed at all ✓');
    const db = await pollDb(page, (d) => d.turns.some((t) => t.role === 'assistant' && t.status === 'complete'), { what: 'the reply' });
    assert.deepEqual(
      db.turns.filter((t) => t.role === 'assistant').map((t) => t.text),
      ['Served locally: Not streamed at all ✓'],
    );
    await page.reload();
    await page.getByTestId('nav-chat').click();
    assert.equal(await lastReply(page), 'Served locally: Not streamed at all ✓');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    fake.set({ modelsStall: false, noStream: false });
    await h.dispose();
  }
});
