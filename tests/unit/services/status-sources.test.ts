// Where the status words come from: the job list marks the job this tab runs
// (a stored "running" may be a closed tab's), a failed job is told once (by its state, not also an
// error event) and "Try again now" runs it again; a model server that stops answering is reported
// lost before its call fails, in words, and a job stopped for it spends no attempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import type { JobSnapshot } from '../../../src/services/memory/jobs';
import { notAnswering, probeServer, watchServer } from '../../../src/services/models/server-probe';
import { LocalServerModel } from '../../../src/models/local-server';
import { createMemoriseJob } from '../../../src/memory/ingest/memorise';
import type { LanguageModel } from '../../../src/ports';
import type { Session, Turn } from '../../../src/memory/types';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { until } from '../../support/until';
import { ScriptedModel } from '../memory/helpers';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../support/fake-openai-server.mjs';

const T = Date.UTC(2025, 0, 10);

/** Every user turn becomes an event; `fail` makes every JSON call throw it. */
const model = (fail?: () => string | undefined) =>
  new ScriptedModel(({ kind, schemaTitle, messages }) => {
    const reason = kind === 'json' ? fail?.() : undefined;
    if (reason) throw new Error(reason);
    const text = messages.map((m) => m.content).join('\n');
    if (schemaTitle === 'session_memories') {
      const events = [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)].map((m) => ({
        text: `The user said: ${m[2]}`,
        about: 'user',
        turns: [m[1]],
      }));
      return JSON.stringify({ events, userTraits: [], assistantTraits: [], notes: [], topics: [] });
    }
    return '{}';
  });

async function seed(repo: InMemoryRepository, id: string, line: string) {
  const session: Session = { id, title: id, startedAt: T, lastActivityAt: T + 2, status: 'ended', endedAt: T + 2 };
  const turns: Turn[] = [line, 'ok'].map((text, i) => ({
    id: `${id}:t${i}`,
    sessionId: id,
    index: i,
    role: i ? 'assistant' : 'user',
    text,
    time: T + i,
    status: 'complete',
  }));
  await repo.apply({ sessions: [session], turns, jobs: [createMemoriseJob(id, T + 100)] });
}

function service(repo: InMemoryRepository, llm: () => LanguageModel | undefined) {
  const s = new MemoryService(repo, new SettingsService(repo), llm, () => undefined);
  const published: JobSnapshot[][] = [];
  const errors: string[] = [];
  s.on('jobs', (list) => published.push(list));
  s.on('error', ({ message }) => errors.push(message));
  return { s, published, errors };
}

describe('the job list the status words read', () => {
  it('marks the job this tab runs as active; a stored "running" from a closed tab is not', async () => {
    const repo = new InMemoryRepository();
    await seed(repo, 's1', 'I keep bees');
    // A closed tab left the record "running" after its first step.
    const [job] = await repo.listJobs();
    await repo.apply({ jobs: [{ ...job, status: 'running', step: 'embed' }] });
    const loaded: { llm?: LanguageModel } = {};
    const { s, published } = service(repo, () => loaded.llm);
    await s.load();
    expect(published.at(-1)).toEqual([expect.objectContaining({ sessionId: 's1', status: 'running', step: 'embed' })]);
    expect(published.at(-1)![0].active).toBeUndefined();

    loaded.llm = model();
    s.kick();
    await until('the job is done', async () => (await repo.listJobs())[0].status === 'done');
    const during = published.flat().filter((j) => j.active);
    expect(during.length).toBeGreaterThan(0);
    expect(during.every((j) => j.sessionId === 's1' && (j.status === 'running' || j.status === 'done'))).toBe(true);
    expect(published.at(-1)).toEqual([]); // done jobs are not listed
  });

  it('a failed job is told by its state only (no error event), and "Try again now" runs it again', async () => {
    const repo = new InMemoryRepository();
    await seed(repo, 's1', 'My bike is green');
    let failing: string | undefined = 'the model wrote no JSON';
    const llm = model(() => failing);
    const { s, published, errors } = service(repo, () => llm);
    await s.load();
    s.kick();
    await until('the job failed', async () => (await repo.listJobs())[0].status === 'failed');
    await until('the failure is listed', () => published.at(-1)?.[0]?.status === 'failed');
    expect(published.at(-1)![0]).toMatchObject({ status: 'failed', lastError: 'the model wrote no JSON' });
    expect(published.at(-1)![0].active).toBeUndefined();
    expect(errors).toEqual([]);

    failing = undefined;
    await s.retryFailedJobs(published.at(-1)![0].id);
    await until('the retried job is done', async () => (await repo.listJobs())[0].status === 'done');
    expect((await repo.getSession('s1'))?.status).toBe('memorised');
    expect((await repo.listMemories()).map((m) => m.text)).toEqual(['The user said: My bike is green']);
    expect(errors).toEqual([]);
  });

  it('retrying one failed job leaves other failed jobs as they are', async () => {
    const repo = new InMemoryRepository();
    await seed(repo, 'a', 'one');
    await seed(repo, 'b', 'two');
    await repo.apply({ jobs: (await repo.listJobs()).map((j) => ({ ...j, status: 'failed' as const, attempts: 3, lastError: 'x' })) });
    const { s } = service(repo, () => undefined);
    const a = (await repo.listJobs()).find((j) => j.sessionId === 'a')!;
    await s.retryFailedJobs(a.id);
    const after = await repo.listJobs();
    expect(after.find((j) => j.sessionId === 'a')).toMatchObject({ status: 'pending', attempts: 0 });
    expect(after.find((j) => j.sessionId === 'b')).toMatchObject({ status: 'failed', attempts: 3 });
  });

  it('a job stopped because the model went away spends no attempt and waits, listed as not active', async () => {
    const repo = new InMemoryRepository();
    await seed(repo, 's1', 'I am learning the oboe');
    const held: { svc?: MemoryService } = {};
    let gone = false;
    const inner = model();
    // As the wiring does (tealeaf.ts): the server reports itself lost (jobs pause) before the call fails.
    const llm: LanguageModel = {
      modelId: inner.modelId,
      chat: (m, o) => inner.chat(m, o),
      json: async () => {
        gone = true;
        held.svc!.pauseJobs();
        throw new Error('The model server did not answer.');
      },
    };
    const { s, published, errors } = service(repo, () => (gone ? undefined : llm));
    held.svc = s;
    await s.load();
    s.kick();
    // Listed as under way, then (after the stop) as waiting again.
    await until('the job is listed as waiting again', () => gone && published.at(-1)?.[0]?.status === 'pending');
    expect(published.some((list) => list[0]?.active)).toBe(true);
    const [job] = await repo.listJobs();
    expect(job).toMatchObject({ status: 'pending', attempts: 0, step: 'summarise' });
    expect(published.at(-1)![0].active).toBeUndefined();
    expect(errors).toEqual([]);
  });
});

describe('a model server that stops answering', () => {
  let fake: FakeOpenAiServer;
  beforeAll(async () => {
    fake = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('is reported lost once, before the call fails, in words that say what to do; a probe says the same', async () => {
    const server = await startFakeOpenAiServer();
    const url = server.url;
    const port = Number(new URL(url).port);
    const lost: string[] = [];
    const watched = watchServer(new LocalServerModel({ baseUrl: url, model: 'tiny-chat' }), url, (m) => lost.push(m));
    expect(await watched.chat([{ role: 'user', content: 'hi' }])).toBe('Served locally: hi ✓');
    expect(await probeServer(url)).toBeUndefined();
    await server.close();

    await expect(watched.chat([{ role: 'user', content: 'still there?' }])).rejects.toThrow(notAnswering(url));
    expect(lost).toEqual([`The model server at ${url} did not answer. Is it still running?`]);
    await expect(watched.json([{ role: 'user', content: 'x' }], { title: 'session_memories' })).rejects.toThrow(/did not answer/);
    expect(await probeServer(url)).toBe(notAnswering(url));

    // Back on the same address: answers again.
    const back = await startFakeOpenAiServer({ port });
    try {
      expect(await probeServer(url)).toBeUndefined();
      expect(await watched.chat([{ role: 'user', content: 'back' }])).toBe('Served locally: back ✓');
    } finally {
      await back.close();
    }
  });

  it('a server that answers with an error is not "lost": the error is the reply\'s', async () => {
    const lost: string[] = [];
    const watched = watchServer(new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat' }), fake.url, (m) => lost.push(m));
    fake.set({ status: 503 });
    try {
      await expect(watched.chat([{ role: 'user', content: 'hi' }])).rejects.toThrow(/503/);
    } finally {
      fake.set({ status: 0 });
    }
    expect(lost).toEqual([]);
  });
});
