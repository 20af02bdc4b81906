// Crash safety in the real browser: the tab is closed at several points of memorising a
// session (the job's step read straight from IndexedDB), the same profile is reopened, the models
// are loaded again (jobs run when a language model is there), and the memories, edges and
// segments that come out equal those of an uninterrupted run of the same conversation.
// Linking here is lexical (no embedding model): at the time of writing the CSP blocks the test
// embedder in Chromium (see RELIABILITY.md), and a run must be deterministic to be compared.
// Kills inside the embedding call are covered in Node by tests/unit/trust/crash-resume.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, tempProfile } from './harness.mjs';
import { assertNoOffHost, held, loadTestModel, pollDb, readDb, say, setScript, setScriptHolding } from './flows.mjs';

const server = serveApp();

const CONVERSATION = [
  'I adopted a puppy named Biscuit last week',
  'Biscuit loves chasing the red ball in the park',
  'I am learning to play the guitar in the evenings',
  'Biscuit chewed the strap of my guitar case',
  'My sister visits next week with her dog and Biscuit is excited',
];
// An earlier chat, memorised first: Phase I takes link candidates from earlier sessions only (as
// the paper), so the conversation's memories link to these (one labelling call each).
const EARLIER = ['I walk my dog Biscuit in the park every morning', 'I keep my guitar in a black case'];

async function chatAndEnd(page) {
  await page.goto(`${server.url}/#/chat`);
  for (const text of EARLIER) await say(page, text);
  await page.getByTestId('end-session').click();
  await pollDb(page, (db) => db.jobs.length === 1 && db.jobs[0].status === 'done', { what: 'the earlier chat to be memorised' });
  await page.getByTestId('new-chat').click();
  for (const text of CONVERSATION) {
    await say(page, text);
  }
  await page.getByTestId('end-session').click();
}

/** The conversation's memorise job (the earlier chat's is done before it is queued). */
const job = (db) => (db.jobs.length === 2 ? [...db.jobs].sort((a, b) => a.createdAt - b.createdAt)[1] : undefined);
const memorised = (db) => db.jobs.length === 2 && db.jobs.every((j) => j.status === 'done');
const ownSegments = (db) => db.segments.filter((s) => s.sessionId === job(db)?.sessionId);

/** The graph by content (ids hold times): memories, edges by their ends' texts, segment ranges. */
function graphOf(db) {
  const text = new Map(db.memories.map((m) => [m.id, m.text]));
  return {
    memories: db.memories.map((m) => `${m.kind}|${m.subject ?? ''}|${m.text}|${m.supersededBy ? text.get(m.supersededBy) : ''}`).sort(),
    edges: db.edges.map((e) => `${text.get(e.from)} -${e.relation}/${e.origin}-> ${text.get(e.to)}`).sort(),
    segments: db.segments.map((s) => `${s.firstTurn}-${s.lastTurn}:${s.turnIds.length}`).sort(),
    vectors: db.vectors.length,
    sessions: db.sessions.map((s) => s.status),
    turns: db.turns.length,
  };
}

let reference;

test('reference: an uninterrupted run', async () => {
  const h = await launch();
  try {
    await h.page.goto(`${server.url}/`);
    await setScript(h.page, { delayMs: 1, jsonDelayMs: 5 });
    await loadTestModel(h.page, server.url);
    await chatAndEnd(h.page);
    const db = await pollDb(h.page, memorised, { what: 'the job to finish' });
    reference = graphOf(db);
    assert.equal(reference.memories.length, EARLIER.length + CONVERSATION.length);
    assert.ok(reference.edges.length >= 2, `edges: ${reference.edges.join('; ')}`);
    assert.ok(reference.segments.length >= 2);
    assert.deepEqual(reference.sessions, ['memorised', 'memorised']);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

// Each point holds the job's next model call (scripted-model.ts, holdJson) and closes the tab
// while it is out: the point is reached and kept for as long as the kill takes, on any machine.
const KILL_POINTS = [
  {
    name: 'during summarising (model call in flight)',
    // The job exists but nothing is written yet (the page's first summary was the earlier chat's).
    hold: 'session_memories#2',
    when: (db) => job(db)?.step === 'summarise',
    partial: (db) => db.memories.length === EARLIER.length,
  },
  {
    name: 'after summarising committed, before any edge',
    hold: 'relation_labels#1',
    when: (db) => job(db)?.step === 'embed' || (job(db)?.step === 'link' && (job(db).state?.linked ?? 0) === 0),
    partial: (db) => db.memories.length === EARLIER.length + CONVERSATION.length && db.edges.length === 0,
  },
  {
    name: 'in the middle of linking (2 of 5 linked)',
    hold: 'relation_labels#3',
    when: (db) => job(db)?.step === 'link' && job(db).state?.linked === 2,
    partial: (db) => job(db)?.step === 'link' && ownSegments(db).length === 0,
  },
  {
    // Segmenting makes no model call any more (the summary chose the topics), so it cannot be
    // held here; the kill before and after its write is covered in crash-resume.test.ts.
    name: 'late in linking (4 of 5 linked)',
    hold: 'relation_labels#5',
    when: (db) => job(db)?.step === 'link' && job(db).state?.linked === 4,
    partial: (db) => job(db)?.step === 'link' && ownSegments(db).length === 0,
  },
];

for (const point of KILL_POINTS) {
  test(`tab closed ${point.name}: the resumed graph equals the uninterrupted one`, async () => {
    assert.ok(reference, 'the reference run must pass first');
    const profile = tempProfile();
    let h = await launch({ profile });
    try {
      await h.page.goto(`${server.url}/`);
      await setScriptHolding(h.page, { delayMs: 1, holdJson: [point.hold] });
      await loadTestModel(h.page, server.url);
      await chatAndEnd(h.page);
      await held(h.page, point.hold);
      await pollDb(h.page, point.when, { what: point.name });
      const atKill = await readDb(h.page);
      assertNoOffHost(h);
      await h.close(); // the tab (and the whole browser) goes away mid-job

      h = await launch({ profile });
      await h.page.goto(`${server.url}/`);
      // What survived the kill, before anything runs again: a partial job.
      const survived = await readDb(h.page);
      assert.ok(point.partial(survived), `not a partial state: ${JSON.stringify(survived.jobs.map((j) => [j.step, j.status, j.state]))}`);
      assert.notEqual(job(survived)?.status, 'done');
      assert.ok(survived.memories.length <= atKill.memories.length + CONVERSATION.length);
      await setScript(h.page, { delayMs: 1, jsonDelayMs: 5 });
      await loadTestModel(h.page, server.url);
      const db = await pollDb(h.page, memorised, { what: 'the resumed job to finish' });
      const resumed = graphOf(db);
      assert.deepEqual(resumed, reference);
      // No duplicates by content either.
      assert.equal(new Set(db.memories.map((m) => m.text)).size, db.memories.length);
      assert.equal(new Set(db.edges.map((e) => `${e.from}|${e.to}`)).size, db.edges.length);
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.dispose();
    }
  });
}
