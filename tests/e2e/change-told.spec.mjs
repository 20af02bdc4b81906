// A change told as an event retires what it changes. Through a local model
// server stand-in that records every request (tests/support/fake-openai-server.mjs): "I live in
// Oslo…", memorised as a trait, then "I moved from Oslo to Bergen last week", memorised as an event
// the labeller calls Changed: no later reply prompt says the person lives in Oslo now, also after a
// reload. A change the labeller is unsure of is asked in the memory notice and done as answered;
// "No longer true" takes a date (the change's by default), by keyboard, at 1280 and 375 px.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, endAndRemember, newChat as newChatWide, openMemory, readDb, say, startImport } from './flows.mjs';
import { startFakeOpenAiServer } from '../support/fake-openai-server.mjs';
import { audit } from './axe.mjs';

const OSLO = 'You live in Oslo and you work as a nurse at Ullevål hospital';
const MOVED = 'You moved from Oslo to Bergen last week';
const NURSE = 'You work as a nurse at Haukeland hospital';
const QUIT = 'You quit your job at Haukeland hospital';

/** The summary a careful model writes of these chats: a trait, or an event where the line tells one. */
function summary(text) {
  const out = { events: [], userTraits: [], assistantTraits: [], notes: [], instructions: [], topics: [] };
  for (const [, label, said] of text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)) {
    if (/live in Oslo/.test(said)) out.userTraits.push({ text: OSLO, turns: [label] });
    else if (/moved from Oslo/.test(said)) out.events.push({ text: MOVED, about: 'user', turns: [label] });
    else if (/nurse at Haukeland/.test(said)) out.userTraits.push({ text: NURSE, turns: [label] });
    else if (/quit my job/.test(said)) out.events.push({ text: QUIT, about: 'user', turns: [label] });
    else out.events.push({ text: `You said: ${said}`, about: 'user', turns: [label] });
  }
  return out;
}

/** Changed for the move against Oslo; the quitting only SameTopic (the labeller missed the change). */
function labels(text) {
  const target = /^New memory \([^)]*\): (.*)$/m.exec(text)?.[1] ?? '';
  const candidates = [...text.matchAll(/^Candidate (\d+) \([^)]*\): (.*)$/gm)];
  return {
    labels: candidates.map(([, i, c]) => ({
      candidate: Number(i),
      relation: /moved/.test(target) && /Oslo/.test(c) ? 'Changed' : /quit/.test(target) && /Haukeland/.test(c) ? 'SameTopic' : 'None',
    })),
  };
}

const server = serveApp();
let fake;
before(async () => {
  fake = await startFakeOpenAiServer({ delayMs: 1, answers: { session_memories: summary, relation_labels: labels } });
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

/** A new chat, at any width (on a phone the button is in the drawer). */
async function newChat(page) {
  const drawer = page.getByTestId('open-chats');
  if (await drawer.isVisible()) await drawer.click();
  await newChatWide(page);
}

/**
 * The system prompts of the replies asked since `from` (not the memorising calls, nor a late call
 * about an earlier chat: only requests whose last message is one of the user's words `said`).
 */
const replyPrompts = (from, ...said) =>
  fake.requests
    .slice(from)
    .filter((r) => r.body?.stream && !r.body.response_format)
    .filter((r) => said.length === 0 || said.some((s) => String(r.body.messages.at(-1)?.content ?? '').includes(s)))
    .map((r) => r.body.messages[0].content);

/** What the prompt tells as true now about the person (the persona bank's lines). */
const toldAsNow = (system) => /What you know about the person now:\n((?:- .*\n?)*)/.exec(system)?.[1] ?? '';

test('a change told as an event is never sent as current once memorised, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await page.goto(`${server.url}/`);
    await useServer(page);
    await say(page, 'I live in Oslo and I work as a nurse at Ullevål hospital');
    await endAndRemember(page);

    // Before the move: the trait goes with every reply as true now (the path the test watches).
    await newChat(page);
    let from = fake.requests.length;
    await say(page, 'What should I cook tonight?');
    assert.match(toldAsNow(replyPrompts(from, 'What should I cook tonight?')[0]), /live in Oslo/);

    await say(page, 'I moved from Oslo to Bergen last week');
    await endAndRemember(page);
    // The notice says what the chat changed; the store has the trait ended by the move.
    const notice = page.getByTestId('memory-updated');
    await notice.getByTestId('changed-trait').filter({ hasText: 'Oslo' }).waitFor();
    assert.match(await notice.textContent(), /1 memory is no longer true/);
    let db = await readDb(page, ['memories', 'edges']);
    const oslo = db.memories.find((m) => m.text === OSLO);
    const moved = db.memories.find((m) => m.text === MOVED);
    assert.equal(oslo.supersededBy, moved.id, 'the move retired the trait');
    assert.ok(db.edges.some((e) => e.from === oslo.id && e.to === moved.id && e.relation === 'Changed' && !e.askEnded));
    await shot(page, 'change-told-notice-1280');

    // Every later reply: Oslo is never told as true now.
    await newChat(page);
    from = fake.requests.length;
    await say(page, 'Where should I go for a walk this weekend?');
    await say(page, 'Any tips for my commute to the hospital?');
    const prompts = replyPrompts(from, 'Where should I go for a walk', 'Any tips for my commute');
    assert.equal(prompts.length, 2);
    for (const p of prompts) {
      assert.doesNotMatch(toldAsNow(p), /Oslo/, 'Oslo sent as current');
      // A memory line of it says it is the past (a passage of the old chat is dated as one).
      for (const line of p.split('\n').filter((l) => l.includes(OSLO))) assert.match(line, /no longer true/);
    }

    // After a reload, the same.
    await h.close();
    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/chat`);
    await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
    from = fake.requests.length;
    await say(page, 'Do you remember where I live?');
    const [again] = replyPrompts(from, 'Do you remember where I live?');
    assert.ok(again, 'a reply was asked');
    assert.doesNotMatch(toldAsNow(again), /Oslo/);
    for (const line of again.split('\n').filter((l) => l.includes(OSLO))) assert.match(line, /no longer true/);
    db = await readDb(page, ['memories']);
    assert.equal(db.memories.find((m) => m.text === OSLO).supersededBy, moved.id);
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('a change the labeller is unsure of is asked in the memory notice and done as answered, by keyboard', async () => {
  for (const width of [1280, 375]) {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      await page.goto(`${server.url}/`);
      await useServer(page);
      await say(page, 'I work as a nurse at Haukeland hospital');
      await endAndRemember(page);
      await newChat(page);
      await say(page, 'I quit my job at Haukeland hospital');
      await endAndRemember(page);

      // Labelled SameTopic, yet it reads as a change: nothing retired, the user is asked.
      const question = page.getByTestId('change-question');
      await question.waitFor();
      assert.equal((await question.locator('p').textContent()).trim(), `${QUIT}: is “${NURSE}” no longer true?`);
      let db = await readDb(page, ['memories', 'edges']);
      const nurse = db.memories.find((m) => m.text === NURSE);
      const quit = db.memories.find((m) => m.text === QUIT);
      assert.equal(nurse.supersededBy, undefined);
      assert.ok(db.edges.some((e) => e.from === nurse.id && e.to === quit.id && e.askEnded === true));
      // Until answered the trait is still told as true now (the user decides, not a small model).
      await newChat(page);
      let from = fake.requests.length;
      await say(page, 'What should I do this evening?');
      assert.match(toldAsNow(replyPrompts(from, 'What should I do this evening?')[0]), /nurse at Haukeland/);

      // Back to the chat that told it; answered by keyboard.
      const drawer = page.getByTestId('open-chats');
      if (await drawer.isVisible()) await drawer.click();
      await page
        .getByTestId('session-item')
        .filter({ hasText: /quit my job/ })
        .first()
        .click();
      await question.waitFor();
      await question.scrollIntoViewIfNeeded();
      await shot(page, `change-question-${width}`);
      assert.deepEqual(await audit(page), [], 'axe: the question in the notice');
      if (width === 1280) {
        await question.getByTestId('answer-ended').focus();
        await page.keyboard.press('Enter');
        await question.waitFor({ state: 'detached' });
      } else {
        // The older memory's detail panel asks the same; answered there.
        await openMemory(page, NURSE);
        const ask = page.locator('aside[aria-label="Memory details"]').getByTestId('detail-ask');
        await ask.waitFor();
        assert.match(await ask.textContent(), /You quit your job at Haukeland hospital: is this no longer true\?/);
        await shot(page, `change-question-detail-${width}`);
        await ask.getByRole('button', { name: 'No longer true' }).focus();
        await page.keyboard.press('Enter');
        await ask.waitFor({ state: 'detached' });
        await page.getByTestId('nav-chat').click();
      }
      db = await readDb(page, ['memories', 'edges']);
      const ended = db.memories.find((m) => m.text === NURSE);
      assert.equal(ended.supersededBy, quit.id);
      assert.equal(ended.endedAt, quit.time, 'ended at the change, not today');
      assert.ok(
        db.edges.some((e) => e.from === nurse.id && e.to === quit.id && e.relation === 'Changed' && e.origin === 'user' && !e.askEnded),
      );
      await newChat(page);
      from = fake.requests.length;
      await say(page, 'And tomorrow?');
      assert.doesNotMatch(toldAsNow(replyPrompts(from, 'And tomorrow?')[0]), /nurse at Haukeland/);
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});

const T0 = Date.UTC(2025, 0, 6, 9);
const DAY = 86_400_000;
const mem = (id, kind, text, day) => ({
  id,
  kind,
  text,
  subject: 'user',
  time: T0 + day * DAY,
  sourceTurnIds: [],
  sessionId: 's1',
  edited: false,
  createdAt: T0 + day * DAY,
});

function backupFile() {
  const file = join(tmpdir(), `change-told-${process.pid}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      format: 'tealeaf-backup',
      version: 1,
      exportedAt: T0 + 30 * DAY,
      data: {
        sessions: [{ id: 's1', title: 'Oslo', startedAt: T0, lastActivityAt: T0, endedAt: T0, status: 'memorised', endReason: 'import' }],
        turns: [],
        // Linked by a change the user had put back as current: "No longer true" offers the move's day.
        memories: [mem('oslo', 'user-trait', OSLO, 1), mem('moved', 'event', MOVED, 8), mem('tea', 'user-trait', 'You love green tea', 2)],
        edges: [{ id: 'edge:oslo->moved', from: 'oslo', to: 'moved', relation: 'Changed', origin: 'user', createdAt: T0 }],
        segments: [],
        settings: [],
      },
    }),
  );
  return file;
}

const day = (t) => {
  const d = new Date(t);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

test('"No longer true" takes a date, the change\'s by default, in the detail and persona panels, by keyboard', async () => {
  for (const width of [1280, 375]) {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      await page.goto(`${server.url}/#/settings`);
      await startImport(page, backupFile());
      await page.getByTestId('import-done').waitFor();
      await page.getByTestId('nav-memory').click();
      await page.getByRole('tab', { name: /persona/i }).click();

      // Persona: the date offered is the move's day; confirmed by keyboard, ended at the move.
      const oslo = page.getByTestId('trait').filter({ hasText: 'live in Oslo' }).first();
      await oslo.getByRole('button', { name: 'No longer true' }).focus();
      await page.keyboard.press('Enter');
      const form = page.getByTestId('end-date');
      await form.waitFor();
      const field = form.locator('input[type="date"]');
      assert.equal(await field.evaluate((el) => el === document.activeElement), true, 'the date has the focus');
      assert.equal(await field.inputValue(), day(T0 + 8 * DAY));
      assert.equal(await field.getAttribute('min'), day(T0 + DAY));
      await form.scrollIntoViewIfNeeded();
      await shot(page, `end-date-persona-${width}`);
      assert.deepEqual(await audit(page), [], 'axe: the date field in Persona');
      await page.keyboard.press('Enter');
      await form.waitFor({ state: 'detached' });
      let db = await readDb(page, ['memories']);
      assert.equal(db.memories.find((m) => m.id === 'oslo').endedAt, T0 + 8 * DAY);
      assert.equal(db.memories.find((m) => m.id === 'oslo').supersededBy, 'moved');

      // Detail panel: a trait no change ended; a day before it formed is refused, another day is kept.
      await page.getByTestId('trait').filter({ hasText: 'green tea' }).first().locator('button.text').click();
      const panel = page.locator('aside[aria-label="Memory details"]');
      await panel.getByTestId('toggle-past').focus();
      await page.keyboard.press('Enter');
      const detailField = panel.getByTestId('end-date').locator('input[type="date"]');
      await detailField.waitFor();
      assert.equal(await detailField.inputValue(), day(Date.now()), 'no change links it: today');
      await detailField.fill(day(T0));
      assert.equal(await panel.getByTestId('end-date-confirm').isDisabled(), true, 'before it formed');
      await detailField.fill(day(T0 + 5 * DAY));
      await shot(page, `end-date-detail-${width}`);
      await detailField.press('Enter');
      await panel.getByTestId('past-tag').waitFor();
      db = await readDb(page, ['memories']);
      const ended = db.memories.find((m) => m.id === 'tea').endedAt;
      assert.equal(day(ended), day(T0 + 5 * DAY));
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});
