// bench:teafarm's parts against the scripted OpenAI-compatible server on 127.0.0.1: a small
// LoCoMo-shaped conversation is memorised through the server, TeaFarm runs over it, and a second
// run continues entirely from the on-disk caches. Mechanics only: the scripted judge always says
// "fooled", which says nothing about quality.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalServerModel } from '../../../src/models/local-server';
import { parseLocomoConversation } from '../../../src/memory/locomo';
import { withDefaults } from '../../../src/memory/settings';
import { runTeaFarm } from '../../../src/memory/eval/teafarm';
import { CachedModel } from '../../../bench/lib/qa/model-cache';
import { memorise } from '../../../bench/lib/qa/run';
import { FileTeaFarmCache } from '../../../bench/lib/teafarm/file-cache';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../support/fake-openai-server.mjs';

const conversation = {
  speaker_a: 'Caroline',
  speaker_b: 'Melanie',
  session_1_date_time: '1:56 pm on 8 May, 2023',
  session_1: [
    { speaker: 'Caroline', dia_id: 'D1:1', text: 'I went to a support group yesterday and it was powerful.' },
    { speaker: 'Melanie', dia_id: 'D1:2', text: 'That sounds wonderful.' },
  ],
  session_2_date_time: '10:37 am on 27 June, 2023',
  session_2: [
    { speaker: 'Caroline', dia_id: 'D2:1', text: 'I am researching adoption agencies now.' },
    { speaker: 'Melanie', dia_id: 'D2:2', text: 'Good luck with it!' },
  ],
  qa: [],
};

let fake: FakeOpenAiServer;
let dir: string;
beforeAll(async () => {
  fake = await startFakeOpenAiServer();
  dir = mkdtempSync(join(tmpdir(), 'tealeaf-teafarm-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run() {
  const server = (model: string) => new LocalServerModel({ baseUrl: fake.url, model });
  const agent = new CachedModel(server('tiny-chat'), join(dir, 'calls'));
  const judge = new CachedModel(server('tiny-judge'), join(dir, 'calls'));
  const settings = withDefaults();
  const m = await memorise(parseLocomoConversation(conversation), 'c1', agent, settings, () => {});
  const report = await runTeaFarm({
    llm: agent,
    judge,
    index: m.index,
    graph: m.graph,
    memoriesById: m.memories,
    settings,
    conditions: ['full', 'no-memory'],
    questions: 2,
    now: m.end + 86_400_000,
    cache: new FileTeaFarmCache(join(dir, 'results')),
  });
  return { report, fresh: agent.stats.fresh + judge.stats.fresh };
}

describe('bench:teafarm', () => {
  it('runs TeaFarm over a memorised LoCoMo conversation, then continues from the disk caches', async () => {
    const first = await run();
    expect(first.report.status).toBe('done');
    expect(first.report.questions).toHaveLength(2);
    expect(first.report.cases).toHaveLength(4);
    expect(first.report.cases.every((c) => c.reply !== '' && c.verdict === 'fooled')).toBe(true);
    expect(first.report.conditions.map((s) => s.checked)).toEqual([2, 2]);
    const second = await run();
    expect(second.fresh).toBe(0);
    expect(second.report.cases.every((c) => c.cached)).toBe(true);
    expect(second.report.conditions).toEqual(first.report.conditions);
  });
});
