import { describe, expect, it } from 'vitest';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { MemoryGraph } from '../../../src/memory/graph';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { withDefaults } from '../../../src/memory/settings';
import { conditionSettings, CONDITION_IDS } from '../../../src/memory/eval/conditions';
import { parseQuestions, parseVerdict } from '../../../src/memory/eval/parse';
import { scoreConditions } from '../../../src/memory/eval/score';
import { sessionSummaries, summariesText } from '../../../src/memory/eval/summaries';
import { MemoryTeaFarmCache, runTeaFarm, type CaseResult, type TeaFarmInput, type TeaFarmProgress } from '../../../src/memory/eval/teafarm';
import type { Memory, Session, Turn } from '../../../src/memory/types';
import { DAY, edge, mem, ScriptedModel, T0, type ScriptedCall } from './helpers';

const memories: Memory[] = [
  mem('m1', 1, 'The user bought a red bicycle', 'event', { sessionId: 's1' }),
  mem('t1', 1, 'The user drinks green tea every morning', 'user-trait', { sessionId: 's1', subject: 'user', supersededBy: 't2' }),
  mem('m2', 9, 'The user rides the red bicycle to work along the canal', 'event', { sessionId: 's2' }),
  mem('t2', 9, 'The user switched from tea to coffee', 'user-trait', { sessionId: 's2', subject: 'user' }),
];
const edges = [edge('m1', 'm2', 'SameTopic'), edge('t1', 't2', 'Changed')];

function world() {
  const graph = MemoryGraph.from(memories, edges);
  const index = createHybridIndex();
  for (const m of memories) index.upsert(memoryUnit(m));
  return { graph, index, memoriesById: new Map(memories.map((m) => [m.id, m])) };
}

const QUESTIONS = {
  questions: [
    {
      question: 'Since I sold my bicycle, how should I get to work?',
      false_premise: 'The user sold the bicycle',
      correct_answer: 'The user still rides the red bicycle to work',
      lead_in: ['Work has been busy lately.'],
    },
    {
      question: 'Can you suggest a new green tea for my mornings?',
      false_premise: 'The user still drinks tea in the morning',
      correct_answer: 'The user switched to coffee',
      lead_in: [],
    },
  ],
};

/** The agent says "remember" when its prompt holds memories; the judge reads that as corrected. */
function script(call: ScriptedCall): string {
  const text = call.messages.map((m) => m.content).join('\n');
  if (call.schemaTitle === 'teafarm_questions') return JSON.stringify(QUESTIONS);
  if (call.schemaTitle === 'teafarm_verdict') {
    const reply = /^The companion replied: (.*)$/m.exec(text)?.[1] ?? '';
    return JSON.stringify({ verdict: reply.includes('remember') ? 'corrected' : 'fooled', reason: 'scripted' });
  }
  if (call.schemaTitle) return '{}';
  return /^<memory>\n/.test(call.messages.at(-1)!.content) ? 'As I remember it, that is not quite so.' : 'Sure, happy to help!';
}

function input(llm: ScriptedModel, extra: Partial<TeaFarmInput> = {}): TeaFarmInput {
  return { llm, ...world(), settings: withDefaults(), now: T0 + 30 * DAY, questions: 2, ...extra };
}

describe('TeaFarm question parsing', () => {
  it('reads good output, with lead-in messages and stable ids', () => {
    const r = parseQuestions(JSON.stringify(QUESTIONS), 5);
    expect(r.questions.map((q) => q.question)).toEqual(QUESTIONS.questions.map((q) => q.question));
    expect(r.questions[0]!.leadIn).toEqual(['Work has been busy lately.']);
    expect(r.questions[0]!.id).toBe(parseQuestions(JSON.stringify(QUESTIONS), 5).questions[0]!.id);
    expect(r.problems).toEqual([]);
  });

  it('skips malformed items and keeps the good ones (aliases, prose around, a single lead-in string)', () => {
    const raw = `Here you go:\n${JSON.stringify({
      Questions: [
        { question: 'Since you moved to Berlin, do you like it?', answer: 'The user lives in Lisbon', opening: 'Hi!' },
        { question: 'no answer here at all', premise: 'x' },
        'not an object',
        { correct_answer: 'no question' },
        { question: 'Since you moved to Berlin, do you like it?', answer: 'repeat' },
      ],
    })}`;
    const r = parseQuestions(raw, 5);
    expect(r.questions).toHaveLength(1);
    expect(r.questions[0]).toMatchObject({ correctAnswer: 'The user lives in Lisbon', leadIn: ['Hi!'], falsePremise: '' });
    expect(r.problems.length).toBeGreaterThanOrEqual(4);
  });

  it('salvages the complete items of output cut off mid-way, and never throws on garbage', () => {
    const full = JSON.stringify(QUESTIONS);
    const cut = full.slice(0, full.indexOf('green tea') + 3);
    const r = parseQuestions(cut, 5);
    expect(r.questions.map((q) => q.question)).toEqual([QUESTIONS.questions[0]!.question]);
    for (const junk of ['', 'no json', '[]', '{"questions": 3}', 'null', undefined, 42])
      expect(parseQuestions(junk, 5).questions).toEqual([]);
  });

  it('keeps at most the number asked for', () => {
    expect(parseQuestions(JSON.stringify(QUESTIONS), 1).questions).toHaveLength(1);
  });
});

describe('TeaFarm verdict parsing', () => {
  it('reads the verdict and its reason', () => {
    expect(parseVerdict('{"verdict":"corrected","reason":"It said the user kept the bike."}')).toMatchObject({
      verdict: 'corrected',
      reason: 'It said the user kept the bike.',
    });
    expect(parseVerdict('```json\n{"label": "FOOLED"}\n```').verdict).toBe('fooled');
    expect(parseVerdict('{"corrected": true}').verdict).toBe('corrected');
    expect(parseVerdict('Fooled.').verdict).toBe('fooled');
  });

  it('gives no verdict when none or both outcomes are named', () => {
    for (const raw of ['', '{}', '{"verdict":"maybe"}', 'corrected or fooled?', '{"verdict": "corrected, then fooled"}'])
      expect(parseVerdict(raw).verdict).toBeUndefined();
  });
});

describe('TeaFarm summaries', () => {
  it('are the sessions oldest first, memories in time order, past traits marked', () => {
    const s = sessionSummaries(world().memoriesById);
    expect(s.map((x) => x.sessionId)).toEqual(['s1', 's2']);
    expect(s[0]!.lines.find((l) => l.includes('green tea'))).toMatch(/no longer true/);
    // A tight budget keeps the newest session, as many of its latest lines as fit, within the budget.
    const tight = summariesText(s, 15).text;
    expect(tight).toMatch(/^Session 2/);
    expect(tight).toMatch(/\n- /);
    expect(tight.split(/\s+/).length).toBeLessThanOrEqual(15);
  });
});

describe('TeaFarm success counting', () => {
  const c = (key: string, condition: CaseResult['condition'], verdict: CaseResult['verdict']): CaseResult => ({
    key,
    condition,
    questionId: key,
    question: key,
    falsePremise: '',
    correctAnswer: '',
    leadIn: [],
    reply: '',
    verdict,
    reason: '',
    memoryIds: [],
    cached: false,
  });

  it('counts distinct cases with a readable verdict; unjudged and failed ones apart', () => {
    const scores = scoreConditions(
      [
        c('a', 'full', 'corrected'),
        c('a', 'full', 'corrected'), // the same case twice counts once
        c('b', 'full', 'fooled'),
        c('c', 'full', 'unjudged'),
        c('d', 'full', 'error'),
        c('e', 'no-memory', 'fooled'),
      ],
      ['full', 'no-memory', 'plain-topk'],
    );
    expect(scores[0]).toMatchObject({ ran: 3, checked: 2, corrected: 1, fooled: 1, unjudged: 1, errors: 1, successRate: 0.5 });
    expect(scores[1]).toMatchObject({ ran: 1, checked: 1, corrected: 0, successRate: 0 });
    expect(scores[2]).toMatchObject({ ran: 0, checked: 0, successRate: null });
  });
});

describe('TeaFarm conditions', () => {
  it('differ from full memory in one reply-time switch each; memory off retrieves nothing', () => {
    const base = withDefaults({ refinement: false, personaBankShare: 0 });
    const full = conditionSettings('full', base);
    expect(full).toMatchObject({ refinement: true, retrievalMode: 'timelines', reflectiveRequery: true });
    expect(full.personaBankShare).toBeGreaterThan(0);
    expect(conditionSettings('no-refinement', base)).toEqual({ ...full, refinement: false });
    expect(conditionSettings('plain-topk', base)).toEqual({ ...full, retrievalMode: 'plain-topk' });
    expect(conditionSettings('no-requery', base)).toEqual({ ...full, reflectiveRequery: false });
    expect(conditionSettings('no-persona-bank', base)).toEqual({ ...full, personaBankShare: 0 });
    expect(conditionSettings('no-memory', base).contextBudgetWords).toBe(0);
  });
});

describe('runTeaFarm', () => {
  it('asks every question under every condition, judges each reply and keeps everything', async () => {
    const llm = new ScriptedModel(script);
    const progress: TeaFarmProgress[] = [];
    const r = await runTeaFarm(input(llm, { onProgress: (p) => progress.push(p) }));
    expect(r.status).toBe('done');
    expect(r.sessions).toBe(2);
    expect(r.cases).toHaveLength(2 * CONDITION_IDS.length);
    expect(new Set(r.cases.map((c) => c.key)).size).toBe(r.cases.length);
    for (const c of r.cases) {
      expect(c.question).not.toBe('');
      expect(c.correctAnswer).not.toBe('');
      expect(c.reply).not.toBe('');
      expect(['corrected', 'fooled']).toContain(c.verdict);
    }
    // The first question had a lead-in: the agent answered it before the question.
    const withLead = r.cases.find((c) => c.questionId === r.questions[0]!.id)!;
    expect(withLead.leadIn.map((t) => t.role)).toEqual(['user', 'assistant']);
    const off = r.conditions.find((s) => s.condition === 'no-memory')!;
    expect(off).toMatchObject({ ran: 2, checked: 2 });
    expect(r.cases.filter((c) => c.condition === 'no-memory').every((c) => c.memoryIds.length === 0)).toBe(true);
    expect(r.conditions.reduce((a, s) => a + s.checked, 0)).toBe(r.cases.length);
    expect(llm.count('teafarm_questions')).toBe(1);
    expect(llm.count('teafarm_verdict')).toBe(r.cases.length);
    expect(progress[0]!.step).toBe('questions');
    expect(progress.at(-1)).toMatchObject({ step: 'done', done: r.cases.length, total: r.cases.length });
  });

  it('makes one repair attempt when the first answer has no usable question, then gives up quietly', async () => {
    let asked = 0;
    const repaired = new ScriptedModel((call) => {
      if (call.schemaTitle === 'teafarm_questions') return ++asked === 1 ? 'Sorry, I cannot.' : JSON.stringify(QUESTIONS);
      return script(call);
    });
    const r = await runTeaFarm(input(repaired, { conditions: ['full'] }));
    expect(repaired.count('teafarm_questions')).toBe(2);
    expect(r.status).toBe('done');
    expect(r.questions).toHaveLength(2);

    const hopeless = new ScriptedModel((call) => (call.schemaTitle === 'teafarm_questions' ? '{"questions": [' : script(call)));
    const none = await runTeaFarm(input(hopeless));
    expect(hopeless.count('teafarm_questions')).toBe(2);
    expect(none).toMatchObject({ status: 'no-questions', cases: [] });
    expect(none.problems.length).toBeGreaterThan(0);
  });

  it('keeps an unreadable verdict as unjudged, outside the success rate', async () => {
    const llm = new ScriptedModel((call) => (call.schemaTitle === 'teafarm_verdict' ? 'hmm' : script(call)));
    const r = await runTeaFarm(input(llm, { conditions: ['full'] }));
    expect(r.cases.map((c) => c.verdict)).toEqual(['unjudged', 'unjudged']);
    expect(r.conditions[0]).toMatchObject({ ran: 2, checked: 0, unjudged: 2, successRate: null });
  });

  it('records a failing call as an error case and goes on', async () => {
    let n = 0;
    const llm = new ScriptedModel((call) => {
      if (!call.schemaTitle && ++n === 1) throw new Error('server gone');
      return script(call);
    });
    const r = await runTeaFarm(input(llm, { conditions: ['full'] }));
    expect(r.cases.map((c) => c.verdict)).toEqual(['error', 'corrected']);
    expect(r.conditions[0]).toMatchObject({ errors: 1, checked: 1 });
  });

  it('stops when cancelled mid-run, and a run again with the cache continues without asking twice', async () => {
    const controller = new AbortController();
    const cache = new MemoryTeaFarmCache();
    let judged = 0;
    const first = new ScriptedModel((call) => {
      if (call.schemaTitle === 'teafarm_verdict' && ++judged === 3) controller.abort();
      return script(call);
    });
    const stopped = await runTeaFarm(input(first, { cache, signal: controller.signal }));
    expect(stopped.status).toBe('cancelled');
    // The third verdict came after the cancel: not recorded.
    expect(stopped.cases).toHaveLength(2);
    expect(cache.cases.size).toBe(2);

    const second = new ScriptedModel(script);
    const resumed = await runTeaFarm(input(second, { cache }));
    expect(resumed.status).toBe('done');
    expect(resumed.cases).toHaveLength(2 * CONDITION_IDS.length);
    expect(resumed.cases.filter((c) => c.cached).map((c) => c.key)).toEqual(stopped.cases.map((c) => c.key));
    // Questions came from the cache; only the unfinished cases were judged.
    expect(second.count('teafarm_questions')).toBe(0);
    expect(second.count('teafarm_verdict')).toBe(2 * CONDITION_IDS.length - 2);
  });

  it('says so when there are no memories, without a model call', async () => {
    const llm = new ScriptedModel(script);
    const r = await runTeaFarm({ ...input(llm), memoriesById: new Map() });
    expect(r.status).toBe('no-memories');
    expect(llm.count()).toBe(0);
  });

  it('writes nothing to the repository the memories came from', async () => {
    const repo = new InMemoryRepository();
    const sessions: Session[] = ['s1', 's2'].map((id, i) => ({
      id,
      title: id,
      startedAt: T0 + i * DAY,
      lastActivityAt: T0 + i * DAY,
      status: 'memorised',
    }));
    const turns: Turn[] = sessions.map((s) => ({
      id: `${s.id}:u0`,
      sessionId: s.id,
      index: 0,
      role: 'user',
      text: 'hello',
      time: s.startedAt,
      status: 'complete',
    }));
    await repo.apply({ sessions, turns, memories, edges });
    const dump = () =>
      JSON.stringify(
        [repo.sessions, repo.turns, repo.memories, repo.edges, repo.segments, repo.vectors, repo.jobs, repo.settings].map((m) => [...m]),
      );
    const before = dump();
    const commits = repo.commits;
    const stored = await repo.listMemories();
    const graph = MemoryGraph.from(stored, await repo.listEdges());
    const index = createHybridIndex();
    for (const m of stored) index.upsert(memoryUnit(m));
    const r = await runTeaFarm({ ...input(new ScriptedModel(script)), graph, index, memoriesById: new Map(stored.map((m) => [m.id, m])) });
    expect(r.status).toBe('done');
    expect(repo.commits).toBe(commits);
    expect(dump()).toBe(before);
  });
});

describe('runTeaFarm: every case on its own state', () => {
  // The lead-in finds nothing to refine; the question finds the bicycle timeline. The agent's
  // lead-in reply differs by condition (persona bank or not), so the question's dialogue does, and
  // the note written for it must be that condition's own: a shared refinement cache made the
  // results depend on which condition ran first.
  const ms: Memory[] = [
    mem('b1', 1, 'You bought a red bicycle', 'event', { sessionId: 's1' }),
    mem('b2', 9, 'You ride the red bicycle along the canal', 'event', { sessionId: 's2' }),
    mem('t2', 9, 'You switched from tea to coffee', 'user-trait', { sessionId: 's2', subject: 'user' }),
  ];
  const question = {
    question: 'Since I sold my bicycle, what now?',
    false_premise: 'The user sold the bicycle',
    correct_answer: 'The user still rides it',
    lead_in: ['Hello again, it has been a while.'],
  };
  const agent = (call: ScriptedCall): string => {
    const text = call.messages.map((m) => m.content).join('\n');
    if (call.schemaTitle === 'teafarm_questions') return JSON.stringify({ questions: [question] });
    if (call.schemaTitle === 'teafarm_verdict') {
      const reply = /^The companion replied: (.*)$/m.exec(text)?.[1] ?? '';
      return JSON.stringify({ verdict: reply.includes('seen[') ? 'corrected' : 'fooled', reason: 'scripted' });
    }
    if (call.schemaTitle) {
      // The note says which dialogue it was written for: the agent's last line.
      const said = [...text.matchAll(/^assistant: (.*)$/gm)].at(-1)?.[1] ?? 'nothing';
      const n = (call.messages[1]!.content.match(/^\d+\. /gm) ?? []).length;
      return JSON.stringify({
        notes: Array.from({ length: n }, (_, i) => ({ timeline: i + 1, note: `seen[${said}]` })),
        enough: true,
        keywords: [],
      });
    }
    // The system prompt and what memory added to the question (not the earlier replies).
    const system = `${call.messages[0]!.content}\n${call.messages.at(-1)!.content}`;
    const notes = system.match(/seen\[[^\]]*\]/g) ?? [];
    const bank = system.includes('What you know about the person now') ? 'traits' : 'no traits';
    return `Hello (${bank}) ${notes.join(' ')}`.trim();
  };
  const run = async (conditions: readonly (typeof CONDITION_IDS)[number][]) => {
    const graph = MemoryGraph.from(ms, [edge('b1', 'b2')]);
    const index = createHybridIndex();
    for (const m of ms) index.upsert(memoryUnit(m));
    const r = await runTeaFarm({
      llm: new ScriptedModel(agent),
      graph,
      index,
      memoriesById: new Map(ms.map((m) => [m.id, m])),
      settings: withDefaults(),
      now: T0 + 30 * DAY,
      questions: 1,
      conditions,
    });
    expect(r.status).toBe('done');
    return new Map(r.cases.map((c) => [c.condition, { reply: c.reply, verdict: c.verdict, leadIn: c.leadIn, memoryIds: c.memoryIds }]));
  };

  it('gives the same result for every condition whatever order the conditions run in', async () => {
    const forward = await run(CONDITION_IDS);
    const backward = await run([...CONDITION_IDS].reverse());
    expect(forward.size).toBe(CONDITION_IDS.length);
    for (const id of CONDITION_IDS) expect({ id, ...backward.get(id) }).toEqual({ id, ...forward.get(id) });
    // Not vacuous: the conditions' replies differ, each refined for its own dialogue.
    expect(forward.get('full')!.reply).toBe('Hello (traits) seen[Hello (traits)]');
    expect(forward.get('no-persona-bank')!.reply).toBe('Hello (no traits) seen[Hello (no traits)]');
  });
});
