// bench:qa's pipeline against a scripted OpenAI-compatible server on 127.0.0.1: a small LoCoMo-shaped
// conversation is memorised through the server, every question answered through prepareTurn and
// judged; a second run is answered from the on-disk cache without asking the server. Mechanics
// only: the scripted judge's verdicts mean nothing about quality.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalServerModel } from '../../../src/models/local-server';
import { parseLocomoConversation } from '../../../src/memory/locomo';
import { CachedModel } from '../../../bench/lib/qa/model-cache';
import { answerConversation, summarise } from '../../../bench/lib/qa/run';
import { parseVerdict, tokenF1 } from '../../../bench/lib/qa/judge';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../support/fake-openai-server.mjs';

const conversation = {
  speaker_a: 'Caroline',
  speaker_b: 'Melanie',
  session_1_date_time: '1:56 pm on 8 May, 2023',
  session_1: [
    { speaker: 'Caroline', dia_id: 'D1:1', text: 'I went to a support group yesterday and it was powerful.' },
    { speaker: 'Melanie', dia_id: 'D1:2', text: 'That sounds wonderful, I painted a sunrise last year.' },
  ],
  session_2_date_time: '10:37 am on 27 June, 2023',
  session_2: [
    { speaker: 'Caroline', dia_id: 'D2:1', text: 'I am researching adoption agencies now.' },
    { speaker: 'Melanie', dia_id: 'D2:2', text: 'My kids loved the pottery class.' },
  ],
  qa: [
    { question: 'When did Caroline go to the support group?', answer: '7 May 2023', evidence: ['D1:1'], category: 2 },
    { question: 'What is Caroline researching?', answer: 'adoption agencies', evidence: ['D2:1'], category: 4 },
    { question: 'What did Melanie paint?', answer: 'a sunrise', evidence: ['D1:2'], category: 1 },
    { question: 'Would Caroline adopt?', adversarial_answer: 'no', evidence: ['D2:1'], category: 5 },
  ],
};

let fake: FakeOpenAiServer;
let dir: string;
beforeAll(async () => {
  fake = await startFakeOpenAiServer({ replies: [{ when: 'researching', say: 'She is researching adoption agencies.' }] });
  dir = mkdtempSync(join(tmpdir(), 'tealeaf-qa-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function models() {
  const server = (model: string) => new LocalServerModel({ baseUrl: fake.url, model });
  return { answerer: new CachedModel(server('tiny-chat'), dir), judge: new CachedModel(server('tiny-judge'), dir) };
}

describe('bench:qa', () => {
  it('memorises through the server, answers and judges each question of categories 1-4, then resumes from the cache', async () => {
    const conv = parseLocomoConversation(conversation);
    const first = models();
    const r = await answerConversation(conv, 'c1', first);
    expect(r.memories).toBeGreaterThan(0);
    expect(r.memoriseCalls).toBeGreaterThanOrEqual(2); // one summary per session at least
    expect(r.questions.map((q) => q.question)).toEqual([
      'When did Caroline go to the support group?',
      'What is Caroline researching?',
      'What did Melanie paint?',
    ]);
    const researching = r.questions[1];
    expect(researching.answer).toBe('She is researching adoption agencies.');
    expect(researching.j).toBe(1);
    expect(researching.f1).toBeGreaterThan(0.5);
    expect(r.questions[0].j).toBe(0);
    expect(r.questions[0].answer).toMatch(/^Served locally: /);
    // The memory the server's summary made reached the answer's prompt.
    const asked = fake.requests.filter(
      (x) =>
        (x.body as { messages?: Array<{ content: string }> } | undefined)?.messages?.some((m) => m.content.includes('adoption agencies')) &&
        !(x.body as { response_format?: unknown }).response_format,
    );
    expect(asked.length).toBeGreaterThan(0);

    const s = summarise([r]);
    expect(s.questions).toBe(3);
    expect(s.j).toBeCloseTo(1 / 3, 3);
    expect(Object.keys(s.byCategory).sort()).toEqual(['multi-hop', 'single-hop', 'temporal']);
    expect(s.byCategory['single-hop']).toEqual({ n: 1, j: 1, f1: expect.any(Number) });
    expect(s.modelCallsPerQuestion).toBeGreaterThanOrEqual(1);
    // The fake server judges what was found enough: no second search.
    expect(s.requeryRate).toBe(0);
    expect(first.answerer.stats.fresh + first.judge.stats.fresh).toBeGreaterThan(0);

    // Run again: every call comes from the cache, the server is not asked.
    const before = fake.requests.length;
    const again = models();
    const r2 = await answerConversation(conv, 'c1', again);
    expect(fake.requests.length).toBe(before);
    expect(again.answerer.stats.fresh + again.judge.stats.fresh).toBe(0);
    expect(r2.questions.map((q) => [q.answer, q.j])).toEqual(r.questions.map((q) => [q.answer, q.j]));
  });
});

describe('judging', () => {
  it.each([
    ['{"label":"CORRECT"}', 1],
    ['{"reasoning":"same date","label":"WRONG"}', 0],
    ['The answer is CORRECT', 1],
    ['CORRECT or WRONG', 0],
    ['{"label":"correct"}', 0],
    ['', 0],
  ])('reads the verdict %s', (raw, want) => {
    expect(parseVerdict(raw)).toBe(want);
  });

  it('scores token F1 after normalising case, punctuation and articles', () => {
    expect(tokenF1('The adoption agencies!', 'adoption agencies')).toBe(1);
    expect(tokenF1('adoption', 'adoption agencies')).toBeCloseTo(2 / 3, 5);
    expect(tokenF1('pottery', 'a sunrise')).toBe(0);
  });
});
