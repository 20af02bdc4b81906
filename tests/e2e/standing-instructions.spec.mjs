// Standing instructions are applied. Through a local model server stand-in that
// records every request (tests/support/fake-openai-server.mjs): "Please keep your answers short.",
// memorised as a standing instruction by the summary, and "remember to always answer in metric
// units", kept by the memory command, reach every later reply's prompt, also after a reload; they
// are listed, edited and deleted (with Undo) in Persona, by keyboard, at 1280 and 375 px; a deleted
// one is never sent again, also after a reload.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, endAndRemember, newChat as newChatWide, pollDb, readDb, say, startImport } from './flows.mjs';
import { startFakeOpenAiServer } from '../support/fake-openai-server.mjs';
import { audit } from './axe.mjs';

const SHORT = 'Keep your answers short.';
const METRIC = 'Always answer in metric units.';

/** A summary that tells the standing instruction apart, as Phase 0 asks (its own list, judged worth remembering). */
function summary(text) {
  const out = { events: [], userTraits: [], assistantTraits: [], notes: [], instructions: [], remember: [], topics: [] };
  for (const [, label, said] of text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)) {
    if (/keep your answers short/i.test(said)) {
      out.instructions.push({ text: SHORT, turns: [label] });
      out.remember.push(label);
    } else out.events.push({ text: `You said: ${said}`, about: 'user', turns: [label] });
  }
  return out;
}

const server = serveApp();
let fake;
before(async () => {
  fake = await startFakeOpenAiServer({ delayMs: 1, answers: { session_memories: summary } });
});
after(async () => {
  await fake?.close();
});

async function useServer(page) {
  await page.getByTestId('nav-models').click();
  await page.getByTestId('server-url').fill(fake.url);
  await page.getByTestId('server-connect').click();
  await page.getByTestId('server-use').click();
  await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
  await page.getByTestId('nav-chat').click();
}

async function newChat(page) {
  const drawer = page.getByTestId('open-chats');
  if (await drawer.isVisible()) await drawer.click();
  await newChatWide(page);
}

/** The system prompts of the replies asked since `from` (not the memorising calls). */
const replyPrompts = (from) =>
  fake.requests
    .slice(from)
    .filter((r) => r.body?.stream && !r.body.response_format)
    .map((r) => r.body.messages[0].content);

/** The instructions block of a system prompt, as its lines. */
const instructionsIn = (system) =>
  (/follow these instructions in every reply[^\n]*\n((?:- .*\n?)*)/.exec(system)?.[1] ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/^- /, ''));

test('a standing instruction reaches every later reply, also after a reload, and stops once deleted', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await page.goto(`${server.url}/`);
    await useServer(page);
    let from = fake.requests.length;
    await say(page, 'Please keep your answers short.');
    // Not before it is memorised: then it is a message of this chat, not an instruction.
    assert.deepEqual(instructionsIn(replyPrompts(from)[0]), []);
    await endAndRemember(page);
    let db = await readDb(page, ['memories']);
    assert.deepEqual(
      db.memories.filter((m) => m.kind === 'instruction').map((m) => m.text),
      [SHORT],
    );

    // Every later reply, whatever it asks, in new chats and the same one.
    await newChat(page);
    from = fake.requests.length;
    for (const text of ['What is the capital of Norway?', 'Tell me a long story about dragons', 'How far is the moon?'])
      await say(page, text);
    // The command keeps another at once, with no model call.
    const before = fake.requests.length;
    assert.match(
      await say(page, 'remember to always answer in metric units'),
      /followed in every reply: “Always answer in metric units\.”/,
    );
    assert.equal(fake.requests.length, before, 'no model call for the command');
    await say(page, 'How tall is Mount Everest?');
    const prompts = replyPrompts(from);
    assert.equal(prompts.length, 4);
    for (const p of prompts.slice(0, 3)) assert.deepEqual(instructionsIn(p), [SHORT]);
    assert.deepEqual(instructionsIn(prompts[3]), [SHORT, METRIC]);

    // After a reload.
    await h.close();
    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
    from = fake.requests.length;
    await say(page, 'Good morning!');
    assert.deepEqual(instructionsIn(replyPrompts(from)[0]), [SHORT, METRIC]);

    // Persona lists them; deleted by keyboard, Undo brings it back, deleted again.
    await page.getByTestId('nav-memory').click();
    await page.getByRole('tab', { name: /persona/i }).click();
    const list = page.getByTestId('persona-instructions');
    await list.getByTestId('instruction').nth(1).waitFor();
    assert.deepEqual(
      (await list.getByTestId('instruction').locator('button.text').allTextContents()).map((t) => t.trim()),
      [SHORT, METRIC],
    );
    const short = list.getByTestId('instruction').filter({ hasText: SHORT });
    await short.getByTestId('instruction-delete').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('undo-bar').waitFor();
    await page.getByTestId('undo').focus();
    await page.keyboard.press('Enter');
    await short.waitFor();
    await short.getByTestId('instruction-delete').focus();
    await page.keyboard.press('Enter');
    await short.waitFor({ state: 'detached' });
    db = await pollDb(page, (d) => !d.memories.some((m) => m.text === SHORT), { what: 'the instruction to be deleted' });

    await page.getByTestId('nav-chat').click();
    await newChat(page);
    from = fake.requests.length;
    await say(page, 'What should I read next?');
    assert.deepEqual(instructionsIn(replyPrompts(from)[0]), [METRIC]);
    for (const p of replyPrompts(from)) assert.ok(!p.includes(SHORT.replace(/\.$/, '')), 'the deleted instruction was sent');

    await h.close();
    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
    from = fake.requests.length;
    await say(page, 'And after a reload?');
    assert.deepEqual(instructionsIn(replyPrompts(from)[0]), [METRIC]);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('instructions are edited by keyboard in Persona, and the edit is what replies are sent (1280 and 375 px)', async () => {
  for (const width of [1280, 375]) {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      await page.goto(`${server.url}/`);
      await useServer(page);
      await say(page, 'remember: keep your answers short');
      await page.getByTestId('nav-memory').click();
      await page.getByRole('tab', { name: /persona/i }).click();
      const item = page.getByTestId('instruction').first();
      await item.waitFor();
      await shot(page, `persona-instructions-${width}`);
      assert.deepEqual(await audit(page), [], 'axe: the instructions in Persona');
      await item.getByRole('button', { name: `Edit: ${SHORT}` }).focus();
      await page.keyboard.press('Enter');
      const box = item.locator('textarea');
      assert.equal(await box.evaluate((el) => el === document.activeElement || el.value.length > 0), true);
      await box.focus();
      await page.keyboard.press('Control+A');
      await page.keyboard.type('Keep your answers under three sentences.');
      await shot(page, `persona-instruction-edit-${width}`);
      await page.keyboard.press('Enter');
      await item.locator('button.text').filter({ hasText: 'under three sentences' }).waitFor();
      await page.getByTestId('nav-chat').click();
      await newChat(page);
      const from = fake.requests.length;
      await say(page, 'Hello there');
      assert.deepEqual(instructionsIn(replyPrompts(from)[0]), ['Keep your answers under three sentences.']);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `overflows by ${overflow}px`);
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});

test('"answers should always be short" is an instruction; the card moves it to the facts and back by keyboard, and the next request follows', async () => {
  const h = await launch({ viewport: { width: 375, height: 800 } });
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await useServer(page);
    await say(page, 'remember that answers should always be short');
    const kind = page.getByTestId('command-kind');
    assert.equal(await kind.getAttribute('data-kind'), 'instruction');
    let from = fake.requests.length;
    await say(page, 'Tell me about tea');
    assert.deepEqual(instructionsIn(replyPrompts(from).at(-1)), ['Answers should always be short.']);

    // The card's one click, by keyboard: a fact now, and no request holds it as an instruction.
    await page.getByTestId('command-kind-flip').focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="command-kind"][data-kind="fact"]').waitFor();
    await shot(page, 'remember-kind-fact-375');
    assert.deepEqual(await audit(page), [], 'axe: the card with its kind');
    from = fake.requests.length;
    await say(page, 'And about coffee?');
    assert.deepEqual(instructionsIn(replyPrompts(from).at(-1)), []);

    await page.getByTestId('command-kind-flip').focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="command-kind"][data-kind="instruction"]').waitFor();
    from = fake.requests.length;
    await say(page, 'And cocoa?');
    assert.deepEqual(instructionsIn(replyPrompts(from).at(-1)), ['Answers should always be short.']);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('more instructions than the reply prompt has room for: Persona says which are not sent', async () => {
  const T0 = Date.UTC(2025, 0, 6, 9);
  const file = join(tmpdir(), `standing-instructions-${process.pid}.json`);
  const memories = Array.from({ length: 30 }, (_, i) => ({
    id: `i${i}`,
    kind: 'instruction',
    text: `Rule ${i + 1}: in every answer, mention the weather in Bergen in one full and friendly sentence.`,
    subject: 'user',
    time: T0 + i * 60_000,
    sourceTurnIds: [],
    sessionId: 's1',
    edited: true,
    createdAt: T0 + i * 60_000,
  }));
  writeFileSync(
    file,
    JSON.stringify({
      format: 'tealeaf-backup',
      version: 1,
      exportedAt: T0 + 86_400_000,
      data: {
        sessions: [{ id: 's1', title: 'Rules', startedAt: T0, lastActivityAt: T0, endedAt: T0, status: 'memorised', endReason: 'import' }],
        turns: [],
        memories,
        edges: [],
        segments: [],
        settings: [],
      },
    }),
  );
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/settings`);
    await startImport(page, file);
    await page.getByTestId('import-done').waitFor();
    await useServer(page);
    const from = fake.requests.length;
    await say(page, 'Hello');
    const sent = instructionsIn(replyPrompts(from)[0]);
    assert.ok(sent.length > 0 && sent.length < 30, `${sent.length} of 30 sent`);
    // The newest are sent, in the order given.
    assert.equal(sent.at(-1), memories[29].text);
    await page.getByTestId('nav-memory').click();
    await page.getByRole('tab', { name: /persona/i }).click();
    const warning = page.getByTestId('instructions-too-many');
    await warning.waitFor();
    assert.match(await warning.textContent(), new RegExp(`${30 - sent.length} instructions do not fit`));
    assert.equal(await page.getByTestId('instruction-not-sent').count(), 30 - sent.length);
    await shot(page, 'persona-instructions-too-many-1280');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
