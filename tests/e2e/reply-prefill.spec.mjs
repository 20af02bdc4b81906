// Replies that start at once: in a 40-turn chat with memory in play, under the default engine's
// stand-in (web-llm's rule: it keeps what it read when a request extends the previous one
// exactly; 4,096 tokens), most replies read only what is new before their first word, counted by
// the stand-in itself (window.tealeafStandin.calls, tests/support/standin/kv-cache.ts), not by the
// app. After a reload the first reply reads its prompt once, and the next extends it again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, startServer, tempProfile } from './harness.mjs';
import { assertNoOffHost, endAndRemember, newChat, say, startChat, setScript } from './flows.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const FACTS = [
  'My dog Pepper is afraid of thunderstorms.',
  'I am training for the Oslo half marathon in September.',
  'My sister Ingrid lives in Bergen.',
  'I grow tomatoes on my small balcony.',
  'I am learning to play the cello on Tuesdays.',
  'I am allergic to peanuts.',
];
const TOPICS = [
  'Pepper and the storm',
  'my marathon training',
  'visiting Ingrid',
  'the tomatoes',
  'the cello lesson',
  'a snack without peanuts',
];
const SCRIPT = { delayMs: 0, jsonDelayMs: 0, replyWords: 200 };

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const replyCalls = (page) => page.evaluate(() => window.tealeafStandin.calls.filter((c) => c.kind === 'chat').map((c) => ({ ...c })));

test('a 40-turn chat with memory reads only what is new on most replies, also after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    await startChat(page, server.url, SCRIPT);
    for (const f of FACTS) await say(page, f);
    await endAndRemember(page);
    await newChat(page);
    const from = (await replyCalls(page)).length;
    for (let i = 0; i < 40; i++) await say(page, `Today I was thinking about ${TOPICS[i % TOPICS.length]}, turn ${i + 1}.`);
    const calls = (await replyCalls(page)).slice(from);
    assert.equal(calls.length, 40, 'one reply call per message');
    const later = calls.slice(7);
    const readAnew = median(later.map((c) => c.readAnew));
    const extended = later.filter((c) => c.cachedTokens > 0).length / later.length;
    console.log(
      `# 40 turns: read anew median ${readAnew} of a median prompt of ${median(later.map((c) => c.promptTokens))}; ${extended.toFixed(2)} extended`,
    );
    assert.ok(readAnew <= 600, `median read anew ${readAnew} tokens`);
    assert.ok(extended >= 0.75, `extended ${extended}`);
    // Memory was in play: the scripted model says so when a message carried what was found.
    const replies = await page.getByTestId('reply-body').allTextContents();
    assert.ok(replies.filter((r) => r.includes('I remembered something about this')).length >= 20, 'memory rode with the messages');

    // A reload: the engine starts empty, the first reply reads once, the next extends it.
    await h.close();
    h = await launch({ profile });
    page = h.page;
    await startChat(page, server.url, SCRIPT);
    await page.getByTestId('session-item').first().click();
    await page.getByTestId('turn-assistant').first().waitFor();
    await setScript(page, SCRIPT);
    await say(page, 'Back again, about the tomatoes.');
    await say(page, 'And the cello lesson went well.');
    const after = await replyCalls(page);
    assert.equal(after.at(-2).cachedTokens, 0, 'the first reply after a reload reads everything');
    assert.ok(after.at(-1).cachedTokens > 0, `the next reply extends it: ${JSON.stringify(after.at(-1))}`);
    assertNoOffHost(h);
  } finally {
    await h.close();
  }
});
