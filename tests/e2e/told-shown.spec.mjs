// "What the model is told, the user sees": every remembered fact that went into a reply's
// prompt, the facts about the person that go with every reply included, is listed under that reply,
// counted as the chip says; checked against what a local model server stand-in actually received,
// and again after a reload.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, say, startImport } from './flows.mjs';
import { startFakeOpenAiServer } from '../support/fake-openai-server.mjs';

const server = serveApp();
let fake;
before(async () => {
  fake = await startFakeOpenAiServer({ delayMs: 2 });
});
after(async () => {
  await fake?.close();
});

const T0 = Date.UTC(2025, 0, 6);
const DAY = 86_400_000;
const mem = (id, kind, text, day) => ({
  id,
  kind,
  text,
  ...(kind === 'event' ? {} : { subject: 'user' }),
  time: T0 + day * DAY,
  sourceTurnIds: [],
  sessionId: 's1',
  edited: false,
  createdAt: T0 + day * DAY,
});
const MEMORIES = [
  mem('t1', 'user-trait', 'You live in Bergen.', 1),
  mem('t2', 'user-trait', 'You work as a nurse at Haukeland hospital.', 2),
  mem('e1', 'event', 'You bought a red road bike called Comet.', 3),
  mem('e2', 'event', 'You rode Comet to the fjord and back.', 4),
  mem('e3', 'event', 'Your sister Ana learned the cello.', 5),
];

function backupFile() {
  const file = join(tmpdir(), `told-shown-${process.pid}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      format: 'tealeaf-backup',
      version: 1,
      exportedAt: T0 + 30 * DAY,
      data: {
        sessions: [
          { id: 's1', title: 'Bikes and Bergen', startedAt: T0, lastActivityAt: T0, endedAt: T0, status: 'memorised', endReason: 'import' },
        ],
        turns: [],
        memories: MEMORIES,
        edges: [{ id: 'edge:e1->e2', from: 'e1', to: 'e2', relation: 'Cause', origin: 'model', createdAt: T0 }],
        segments: [],
        settings: [],
      },
    }),
  );
  return file;
}

/** The memory texts the detail under the last reply lists, and its chip. */
async function shown(page) {
  const reply = page.getByTestId('turn-assistant').last();
  const chip = reply.getByTestId('remembered');
  if ((await chip.getAttribute('aria-expanded')) !== 'true') await chip.click();
  const detail = await reply.getByTestId('remembered-detail').textContent();
  return { chip: await chip.textContent(), detail };
}

test('every remembered fact in a reply prompt is listed under the reply, facts about the person included', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await page.goto(`${server.url}/#/settings`);
    await startImport(page, backupFile());
    await page.getByTestId('import-done').waitFor();
    await page.getByTestId('nav-models').click();
    await page.getByTestId('server-url').fill(fake.url);
    await page.getByTestId('server-connect').click();
    await page.getByTestId('server-use').click();
    await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
    await page.getByTestId('nav-chat').click();

    const before = fake.requests.length;
    await say(page, 'How is my bike Comet doing after the fjord ride?');
    const request = fake.requests.slice(before).find((r) => r.body?.stream && !r.body.response_format);
    // The whole prompt: the facts about the person open it, what was found rides with the message.
    const system = request.body.messages.map((m) => m.content).join('\n');
    const told = MEMORIES.filter((m) => system.includes(m.text.replace(/\.$/, '')));
    assert.ok(
      told.some((m) => m.kind === 'user-trait'),
      'the persona bank went into the prompt',
    );
    assert.ok(
      told.some((m) => m.kind === 'event'),
      'retrieved memories went into the prompt',
    );
    const { chip, detail } = await shown(page);
    for (const m of told) assert.ok(detail.includes(m.text), `"${m.text}" was told to the model but is not shown`);
    for (const m of MEMORIES.filter((x) => !told.includes(x))) assert.ok(!detail.includes(m.text), `"${m.text}" is shown but was not told`);
    const traits = told.filter((m) => m.kind === 'user-trait').length;
    assert.match(chip, new RegExp(`${traits} facts? about you`));
    await shot(page, 'told-shown-1280');
    await page.setViewportSize({ width: 375, height: 800 });
    await shot(page, 'told-shown-375');

    // After a reload: the same list, read from the stored reply.
    await h.close();
    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    await page.getByTestId('session-item').first().click();
    await page.getByTestId('turn-assistant').first().waitFor();
    const again = await shown(page);
    assert.equal(again.chip, chip);
    for (const m of told) assert.ok(again.detail.includes(m.text));
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
