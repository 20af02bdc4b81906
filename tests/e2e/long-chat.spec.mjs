// Chats of any length: a chat of 200 turns with long replies goes on answering and
// is memorised whole, under the enforcing stand-in at the default model's window (4,096 tokens,
// 1,024 out) and at the processor models' (2,048, 384): every call the model saw fitted, what
// was said at the start still reaches a reply, and the memories cover the first and the last tenth
// of the chat; each checked again after a reload.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, startServer, tempProfile } from './harness.mjs';
import { assertNoOffHost, endAndRemember, lastReply, loadTestModel, readDb, say, send, setScript } from './flows.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const FILLER = ['the', 'garden', 'river', 'coffee', 'walked', 'quietly', 'yesterday', 'because', 'evening', 'market'];
// 120-word replies: 200 turns of them are eight times the default window (bench:fit measures 300).
const REPLY = Array.from({ length: 120 }, (_, i) => FILLER[(i * 7) % FILLER.length]).join(' ');
const USER_TURNS = 100;
const line = (i) =>
  i === 1 ? 'My sister Ingrid is coming to visit me at Christmas.' : `Note ${i}: I repaired the bicycle called Bike${i} today.`;

/** What the stand-in saw: every call fitted (none refused, no reply cut by the window). */
async function calls(page) {
  return page.evaluate(() => window.tealeafStandin.calls.map((c) => ({ ...c })));
}

function assertFitted(list, window) {
  assert.ok(list.length > 0, 'the model was called');
  for (const c of list) {
    assert.equal(c.overflowed, false, `a ${c.kind} call ${c.title ?? ''} was refused as too long`);
    assert.ok(c.promptTokens + c.limit <= window, `${c.kind} ${c.title ?? ''}: ${c.promptTokens} + ${c.limit} > ${window}`);
  }
}

/** Share of the first and last tenth of the chat's user turns that some memory names as a source. */
function coverage(db, sessionId) {
  const named = new Set(db.memories.flatMap((m) => m.sourceTurnIds));
  const users = db.turns.filter((t) => t.sessionId === sessionId && t.role === 'user').sort((a, b) => a.index - b.index);
  const tenth = Math.ceil(users.length / 10);
  const share = (part) => part.filter((t) => named.has(t.id)).length / part.length;
  return { first: share(users.slice(0, tenth)), last: share(users.slice(-tenth)), users: users.length };
}

for (const [engine, window] of [
  ['webgpu-4096', 4096],
  ['cpu-2048', 2048],
]) {
  test(`a 200-turn chat answers and is memorised whole at ${window} tokens, also after a reload`, async () => {
    const profile = tempProfile();
    let h = await launch({
      profile,
      viewport: { width: 1280, height: 800 },
      init: `localStorage.setItem('tealeaf-test-engine', '${engine}')`,
    });
    try {
      let { page } = h;
      await page.goto(`${server.url}/`);
      await loadTestModel(page, server.url);
      await page.goto(`${server.url}/#/chat`);
      await setScript(page, {
        delayMs: 0,
        jsonDelayMs: 0,
        replies: [
          { when: 'Note', say: REPLY },
          { when: 'Ingrid is coming', say: REPLY },
        ],
        probe: ['Ingrid is coming'],
      });
      for (let i = 1; i <= USER_TURNS; i++) {
        const before = await page.getByTestId('turn-assistant').count();
        await send(page, line(i));
        await page.getByTestId('turn-assistant').nth(before).waitFor();
        await lastReply(page);
      }
      // Turn 201: asks about what was said at the start, long out of the window of recent turns.
      const answer = await say(page, 'When is my sister Ingrid visiting?');
      assert.match(answer, /\[probe Ingrid is coming: in prompt\]/, 'the start of the chat reached the reply');
      assertFitted(await calls(page), window);
      await shot(page, `long-chat-${window}`);

      await endAndRemember(page);
      let db = await readDb(page, ['sessions', 'turns', 'memories']);
      const sessionId = db.sessions[0].id;
      assert.equal(db.turns.filter((t) => t.sessionId === sessionId).length, 2 * USER_TURNS + 2);
      let cover = coverage(db, sessionId);
      assert.ok(cover.first >= 0.95 && cover.last >= 0.95, `coverage ${JSON.stringify(cover)}`);
      assertFitted(await calls(page), window);
      // The summary was made in parts that each fit.
      const summaries = (await calls(page)).filter((c) => c.title === 'session_memories');
      assert.ok(summaries.length > 1, `${summaries.length} summary call(s)`);

      // After a reload: the chat, its memories, and a reply that still fits and still knows.
      await h.close();
      h = await launch({
        profile,
        viewport: { width: 1280, height: 800 },
        init: `localStorage.setItem('tealeaf-test-engine', '${engine}')`,
      });
      page = h.page;
      await page.goto(`${server.url}/`);
      await loadTestModel(page, server.url);
      await page.goto(`${server.url}/#/chat`);
      db = await readDb(page, ['sessions', 'turns', 'memories']);
      assert.equal(db.turns.filter((t) => t.sessionId === sessionId).length, 2 * USER_TURNS + 2);
      cover = coverage(db, sessionId);
      assert.ok(cover.first >= 0.95 && cover.last >= 0.95, `after reload: coverage ${JSON.stringify(cover)}`);
      // The long chat is readable whole; a new chat asks about its first and last tenth, now memories.
      await page.getByTestId('session-item').first().click();
      await page.getByTestId('turn-assistant').nth(USER_TURNS).waitFor();
      await page.getByTestId('new-chat').click();
      await setScript(page, { delayMs: 0, probe: ['Bike98 ', 'Ingrid is coming'] });
      const again = await say(page, 'When is my sister Ingrid visiting, and what did I call the bike from Note 98?');
      assert.match(again, /\[probe Ingrid is coming: in prompt\]/);
      assert.match(again, /\[probe Bike98 : in prompt\]/);
      assertFitted(await calls(page), window);
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.dispose();
    }
  });
}
