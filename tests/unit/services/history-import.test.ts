// "Bring your history": writing an imported export (src/services/history/import.ts) and
// memorising it with the real job runner (MemoryService): nothing duplicated on a second import,
// nothing written from a bad file, jobs run oldest first, and an import while a job runs.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { importHistory, historyResultMessage, type HistoryImportDeps } from '../../../src/services/history/import';
import { HistoryImportError } from '../../../src/services/history/parse';
import { createMemoriseJob } from '../../../src/memory/ingest/memorise';
import { IdbRepository } from '../../../src/store/repository';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { checkGraphInvariants } from '../../support/invariants';
import { until } from '../../support/until';
import { ScriptedModel } from '../memory/helpers';
import { freshFactory } from '../store/helpers';
import type { LineReads, Repository } from '../../../src/ports';
import type { Session, Turn } from '../../../src/memory/types';

const ROOT = resolve(import.meta.dirname, '../../..');
const CHATGPT = readFileSync(resolve(ROOT, 'tests/fixtures/chatgpt-conversations.json'), 'utf8');
const CLAUDE = readFileSync(resolve(ROOT, 'tests/fixtures/claude-conversations.json'), 'utf8');
const NOW = Date.UTC(2025, 4, 1);

const stores = {
  indexeddb: async (): Promise<Repository & LineReads> => IdbRepository.open({ factory: freshFactory() }),
  'in-memory': async (): Promise<Repository & LineReads> => new InMemoryRepository(),
};

function gate() {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const arrived = new Promise<void>((r) => (reached = r));
  return { open, reached, opened, arrived };
}

/**
 * User turns become events. Records the session of every summarising call (by its first user
 * line); `hold` stops the first summarising call whose transcript contains `holdIn` until opened.
 */
function model(hold?: { g: ReturnType<typeof gate>; holdIn: string }) {
  let held = false;
  const summarised: string[] = [];
  const llm = new ScriptedModel(async ({ kind, schemaTitle, messages }) => {
    const text = messages.map((m) => m.content).join('\n');
    if (kind === 'chat') return 'ok';
    if (schemaTitle === 'session_memories') {
      const lines = [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.+)$/gm)];
      summarised.push(lines[0]?.[2] ?? '');
      if (hold && !held && text.includes(hold.holdIn)) {
        held = true;
        hold.g.reached();
        await hold.g.opened;
      }
      const events = lines.map((m) => ({ text: `The user said: ${m[2]}`, about: 'user', turns: [m[1]] }));
      return JSON.stringify({ events, userTraits: [], assistantTraits: [], notes: [], topics: [] });
    }
    if (schemaTitle === 'relation_labels') return JSON.stringify({ labels: [] });
    return '{}';
  });
  return { llm, summarised };
}

function wire(repo: Repository & LineReads, llm?: ScriptedModel) {
  const settings = new SettingsService(repo);
  const memory = new MemoryService(
    repo,
    settings,
    () => llm,
    () => undefined,
  );
  const deps: HistoryImportDeps = { repo, exclusive: (fn) => memory.exclusive(fn), now: () => NOW };
  return { settings, memory, deps };
}

async function jobsSettled(repo: Repository & LineReads) {
  const ended = async () => (await repo.listJobs()).every((j) => j.status === 'done' || j.status === 'failed');
  await until('every job done or failed', ended);
  return repo.listJobs();
}

async function counts(repo: Repository & LineReads) {
  const sessions = await repo.listSessions();
  const turns = (await Promise.all(sessions.map((s) => repo.listTurns(s.id)))).flat();
  return {
    sessions: sessions.length,
    turns: turns.length,
    jobs: (await repo.listJobs()).length,
    memories: (await repo.listMemories()).length,
  };
}

const file = (text: string) => new Blob([text], { type: 'application/json' });

describe.each(Object.entries(stores))('importing history (%s store)', (_name, open) => {
  it('writes each chat as an ended session with its turns and one queued job; a second import adds nothing', async () => {
    const repo = await open();
    const { deps } = wire(repo);
    const progress: string[] = [];
    const first = await importHistory(file(CHATGPT), { ...deps, onProgress: (l) => progress.push(l) });
    expect(first).toEqual({ source: 'chatgpt', imported: 3, messages: 10, alreadyThere: 0, deleted: 0, empty: 1, cut: 0, split: 0 });
    expect(progress[0]).toBe('Reading the file…');
    expect(progress.at(-1)).toBe('Saved 3 of 3 chats.');
    const after = await counts(repo);
    expect(after).toEqual({ sessions: 3, turns: 10, jobs: 3, memories: 0 });
    for (const s of await repo.listSessions()) expect(s).toMatchObject({ status: 'ended', endReason: 'import' });

    const again = await importHistory(file(CHATGPT), deps);
    expect(again).toMatchObject({ imported: 0, alreadyThere: 3 });
    expect(await counts(repo)).toEqual(after);
    expect(historyResultMessage(again, { creationOff: false, noModel: false })).toBe(
      'Nothing new to import from ChatGPT (3 chats were already there; 1 chat without messages was left out).',
    );

    // Claude's export beside it.
    const claude = await importHistory(file(CLAUDE), deps);
    expect(claude).toMatchObject({ source: 'claude', imported: 2 });
    expect((await counts(repo)).sessions).toBe(5);
  });

  it('a bad file changes nothing: the error says what to do, and no exclusive operation even starts', async () => {
    const repo = await open();
    const { deps } = wire(repo);
    await importHistory(file(CLAUDE), deps);
    const before = await counts(repo);
    let exclusive = 0;
    const guarded: HistoryImportDeps = { ...deps, exclusive: (fn) => (exclusive++, deps.exclusive(fn)) };
    const broken = JSON.parse(CHATGPT) as Array<{ mapping: Record<string, unknown> }>;
    broken[3].mapping = { r: { parent: null, children: 'nope', message: null } };
    for (const text of ['not json', 'PK\u0003\u0004', '[{"hello": "world"}]', JSON.stringify(broken), '[]']) {
      await expect(importHistory(file(text), guarded)).rejects.toBeInstanceOf(HistoryImportError);
    }
    await expect(importHistory(file(JSON.stringify(broken)), guarded)).rejects.toThrow(
      /chat 4 mapping\.r\.children: .*Nothing was imported/,
    );
    expect(exclusive).toBe(0);
    expect(await counts(repo)).toEqual(before);
  });

  it('memorises imported chats with the normal job runner, oldest first, and newer own chats after them', async () => {
    const repo = await open();
    // A chat of the user's own, ended today: its job was queued before the import.
    const own: Session = { id: 'own', title: 'own', startedAt: NOW, lastActivityAt: NOW, endedAt: NOW, status: 'ended' };
    const ownTurn: Turn = {
      id: 'own:0',
      sessionId: 'own',
      index: 0,
      role: 'user',
      text: 'Today I bought a bike',
      time: NOW,
      status: 'complete',
    };
    await repo.apply({ sessions: [own], turns: [ownTurn], jobs: [createMemoriseJob('own', NOW)] });
    const { llm, summarised } = model();
    const { memory, deps } = wire(repo, llm);
    await importHistory(file(CHATGPT), deps);
    await importHistory(file(CLAUDE), deps);
    // What the UI is told while a job runs: the running one with every job still waiting.
    const listed: string[][] = [];
    memory.on('jobs', (list) => listed.push(list.map((j) => j.status)));
    await memory.load();
    memory.kick();
    const jobs = await jobsSettled(repo);
    expect(jobs.map((j) => j.status)).toEqual(['done', 'done', 'done', 'done', 'done', 'done']);
    expect(listed.find((l) => l.includes('running'))).toEqual(['running', 'pending', 'pending', 'pending', 'pending', 'pending']);
    // In the order the chats happened, across both imports; the user's own chat of today last.
    expect(summarised).toEqual([
      'What is a good name for a grey cat?',
      'I am planning a trip to Lisbon in May with my sister Ana.',
      'My sourdough starter smells like nail polish remover.',
      'My tomato plants have yellow leaves at the bottom.',
      'I started cello lessons with a teacher called Mrs Okafor.',
      'Today I bought a bike',
    ]);
    const memories = await repo.listMemories();
    expect(memories.map((m) => m.text)).toContain('The user said: I named the starter Clint Yeastwood.');
    // Each memory dated by its source turn: the export's own time.
    const cello = memories.find((m) => m.text.includes('Mrs Okafor'))!;
    expect(cello.time).toBe(Date.UTC(2024, 0, 10, 19, 1));
    for (const s of await repo.listSessions()) expect(s.status).toBe('memorised');
  });

  it('importing while a memorise job runs: the job stops for the write, then every chat is memorised exactly once', async () => {
    const repo = await open();
    const s1: Session = { id: 's1', title: 's1', startedAt: NOW, lastActivityAt: NOW + 1, endedAt: NOW + 1, status: 'ended' };
    const turns: Turn[] = [
      { id: 's1:0', sessionId: 's1', index: 0, role: 'user', text: 'I walked the dog in the park', time: NOW, status: 'complete' },
      { id: 's1:1', sessionId: 's1', index: 1, role: 'assistant', text: 'Nice.', time: NOW + 1, status: 'complete' },
    ];
    await repo.apply({ sessions: [s1], turns, jobs: [createMemoriseJob('s1', NOW + 10)] });
    const g = gate();
    const { llm, summarised } = model({ g, holdIn: 'walked the dog' });
    const { memory, deps } = wire(repo, llm);
    await memory.load();
    memory.kick();
    await g.arrived; // s1's summarising call is under way
    const applied: string[] = [];
    const watched: Repository = Object.assign(Object.create(repo) as Repository, {
      apply: (change: Parameters<Repository['apply']>[0]) => {
        applied.push(change.sessions?.length ? 'import' : 'other');
        return repo.apply(change);
      },
    });
    const importing = importHistory(file(CLAUDE), { ...deps, repo: watched });
    // The import waits for the stopped job to let go before it writes. (A check that something did
    // not happen: a pause, which a slow machine can shorten in effect but not turn into a failure.)
    await new Promise((r) => setTimeout(r, 20));
    expect(applied).toEqual([]);
    g.open();
    const result = await importing;
    expect(result.imported).toBe(2);
    // The held step wrote nothing: its answer came after it was stopped.
    expect(await repo.listMemories()).toEqual([]);
    memory.kick();
    await jobsSettled(repo);
    const memories = await repo.listMemories();
    const texts = memories.map((m) => m.text);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts.filter((t) => t.includes('walked the dog'))).toHaveLength(1);
    expect(texts.some((t) => t.includes('Mrs Okafor'))).toBe(true);
    // s1 was tried first (held, stopped), then the imported chats (older) before s1 again.
    expect(summarised[0]).toMatch(/walked the dog/);
    expect(summarised.slice(1)).toEqual([
      'My tomato plants have yellow leaves at the bottom.',
      'I started cello lessons with a teacher called Mrs Okafor.',
      'I walked the dog in the park',
    ]);
    expect(checkGraphInvariants(memories, await repo.listEdges())).toEqual([]);
    for (const s of await repo.listSessions()) expect(s.status).toBe('memorised');
  });
});

describe('the result message points to the memory-creation switch', () => {
  const r = { source: 'claude' as const, imported: 2, messages: 5, alreadyThere: 0, deleted: 0, empty: 1, cut: 0, split: 0 };
  it('running, paused, waiting for a model', () => {
    expect(historyResultMessage(r, { creationOff: false, noModel: false })).toBe(
      'Imported 2 chats from Claude (1 chat without messages was left out); they are being memorised in the background, oldest first. To pause, switch off “Make new memories from chats” in Settings.',
    );
    expect(historyResultMessage(r, { creationOff: true, noModel: false })).toMatch(/switched on again in Settings/);
    expect(historyResultMessage({ ...r, empty: 0, cut: 1 }, { creationOff: false, noModel: true })).toBe(
      'Imported 2 chats from Claude (1 chat kept only its first 5,000 messages). They will be memorised in the background, oldest first, once a language model is loaded (Models).',
    );
  });
});
