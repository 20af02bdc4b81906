// A change within one chat retires the old fact (docs/METHOD.md, sections 1.3 and 4): "I live in
// Oslo" early in a chat and "I moved from Oslo to Bergen" later in the same chat used to stay two
// current facts with no link, because Phase I compares a session's memories only with earlier
// sessions'. The session's older memories now go to the labeller for the change question only.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { createMemoriseJob, memoryUnit, runMemoriseJob } from '../../../src/memory/ingest/memorise';
import { linkMemory } from '../../../src/memory/ingest/linking';
import { mayChangeWithin, sessionChangeCandidates } from '../../../src/memory/ingest/session-change';
import { answerChange, changeQuestions } from '../../../src/memory/corrections';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { RefineCache } from '../../../src/memory/recall/refine';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { withDefaults, type MemorySettings } from '../../../src/memory/settings';
import { isPast } from '../../../src/memory/past';
import { MemoryService } from '../../../src/services/memory/memory';
import { SettingsService } from '../../../src/services/settings';
import { InMemoryRepository } from '../../support/in-memory-repository';
import { checkGraphInvariants } from '../../support/invariants';
import type { Memory, MemoryKind, RelationLabel, Session, Turn } from '../../../src/memory/types';
import { candidatesInPrompt, DAY, FixedIndex, mem, newMemoryInPrompt, ScriptedModel, T0 } from './helpers';

/** What the summarising call makes of one user line: a memory of this kind and text. */
interface Said {
  line: string;
  kind: 'event' | 'user-trait';
  text: string;
}

/** One chat: user lines at the given turn numbers (1-based), filler everywhere else. */
function chat(id: string, day: number, lines: Array<[turn: number, said: Said]>, length = 32): { session: Session; turns: Turn[] } {
  const start = T0 + day * DAY;
  const at = new Map(lines);
  const turns: Turn[] = Array.from({ length }, (_, i) => ({
    id: `${id}:t${i}`,
    sessionId: id,
    index: i,
    role: at.has(i + 1) || i % 2 === 0 ? 'user' : 'assistant',
    text: at.get(i + 1)?.line ?? (i % 2 === 0 ? 'Tell me something about tea.' : 'Tea is a leaf.'),
    time: start + i * 60_000,
    status: 'complete',
  }));
  return { session: { id, title: id, startedAt: start, lastActivityAt: start + length * 60_000, status: 'ended' }, turns };
}

/**
 * The scripted model: the summary holds one memory per user line the test names, listed in the
 * order given (events before traits, as the summary's fields come); the labeller answers `label`
 * for a pair whose newer memory names Bergen and whose older names Oslo, None otherwise.
 */
function model(said: Said[], label: RelationLabel) {
  return new ScriptedModel(({ schemaTitle, messages }) => {
    if (schemaTitle === 'session_memories') {
      const text = messages.map((m) => m.content).join('\n');
      const labelOf = (line: string) => [...text.matchAll(/^(T\d+) \[user[^\]]*\]: (.*)$/gm)].find((m) => m[2].trim() === line)?.[1];
      const items = said.filter((s) => labelOf(s.line) !== undefined);
      const pick = (kind: MemoryKind) =>
        items.filter((s) => s.kind === kind).map((s) => ({ text: s.text, about: 'user', turns: [labelOf(s.line)] }));
      return JSON.stringify({ events: pick('event'), userTraits: pick('user-trait'), assistantTraits: [], notes: [], topics: [] });
    }
    if (schemaTitle === 'relation_labels') {
      const changes = /Bergen/.test(newMemoryInPrompt(messages));
      const labels = [...candidatesInPrompt(messages)].map(([i, text]) => ({
        candidate: i,
        relation: changes && /Oslo/.test(text) && !/Bergen/.test(text) ? label : 'None',
      }));
      return JSON.stringify({ labels });
    }
    return '{}';
  });
}

/** Memorises the chats in turn, each as the memorise job does; returns the store. */
async function memorise(chats: Array<ReturnType<typeof chat>>, llm: ScriptedModel, settings: MemorySettings = withDefaults()) {
  const repo = new InMemoryRepository();
  const memories = new Map<string, Memory>();
  const graph = new MemoryGraph();
  const index = createHybridIndex();
  for (const { session, turns } of chats) {
    const job = createMemoriseJob(session.id, session.lastActivityAt + 10);
    await repo.apply({ sessions: [session], turns, jobs: [job] });
    const out = await runMemoriseJob(job, { repo, llm, index, graph, memories, settings, now: () => session.lastActivityAt + 20 });
    expect(out.status).toBe('done');
  }
  const all = [...repo.memories.values()];
  const edges = [...repo.edges.values()];
  expect(checkGraphInvariants(all, edges)).toEqual([]);
  const byText = (re: RegExp) => all.find((m) => re.test(m.text))!;
  return { repo, all, edges, byText, memories: new Map(all.map((m) => [m.id, m])) };
}

const OSLO: Said = { line: 'I live in Oslo', kind: 'user-trait', text: 'You live in Oslo' };
const OSLO_EVENT: Said = { line: 'I live in Oslo', kind: 'event', text: 'You live in Oslo' };

type Outcome = 'retired' | 'asked' | 'current';

/** What became of the Oslo memory: retired, asked about (an edge with askEnded), or left current. */
function outcome(store: Awaited<ReturnType<typeof memorise>>, older: Memory, newer: Memory): Outcome {
  if (isPast(older)) {
    expect(older.supersededBy).toBe(newer.id);
    expect(store.edges.find((e) => e.from === older.id && e.to === newer.id)?.relation).toBe('Changed');
    return 'retired';
  }
  const edge = store.edges.find((e) => e.from === older.id && e.to === newer.id);
  if (edge?.askEnded) return 'asked';
  return 'current';
}

// The move said in other wordings, the older fact as a trait and as an event, under a labeller that
// says Changed and one that says SameTopic. A Changed whose pair shares no word is asked, as across
// sessions (change.ts: the small labeller's typical false Changed); SameTopic is asked when the
// newer reads as a change and shares a word with an older trait, and only the answer retires it.
const MOVES: Array<{ name: string; older: Said; newer: Said; changed: Outcome; sameTopic: Outcome }> = [
  {
    name: '"I moved to Bergen", memorised as an event',
    older: OSLO,
    newer: { line: 'I moved to Bergen', kind: 'event', text: 'You moved to Bergen' },
    changed: 'asked',
    sameTopic: 'current',
  },
  {
    name: '"I moved to Bergen", memorised as a trait',
    older: OSLO,
    newer: { line: 'I moved to Bergen', kind: 'user-trait', text: 'You now live in Bergen' },
    changed: 'retired',
    sameTopic: 'asked',
  },
  {
    name: '"I don\'t live in Oslo any more, I\'m in Bergen now"',
    older: OSLO,
    newer: {
      line: "I don't live in Oslo any more, I'm in Bergen now",
      kind: 'user-trait',
      text: 'You no longer live in Oslo; you live in Bergen now',
    },
    changed: 'retired',
    sameTopic: 'asked',
  },
  {
    name: '"we relocated from Oslo to Bergen"',
    older: OSLO,
    newer: { line: 'we relocated from Oslo to Bergen', kind: 'event', text: 'You and your family relocated from Oslo to Bergen' },
    changed: 'retired',
    sameTopic: 'asked',
  },
  {
    name: '"I moved from Oslo to Bergen", the older fact an event',
    older: OSLO_EVENT,
    newer: { line: 'I moved from Oslo to Bergen', kind: 'event', text: 'You moved from Oslo to Bergen' },
    changed: 'retired',
    // What happened does not end by a label that is no change (change.ts).
    sameTopic: 'current',
  },
];

describe('a change within one chat (turn 4, then turn 30)', () => {
  for (const row of MOVES) {
    for (const label of ['Changed', 'SameTopic'] as const) {
      const want = label === 'Changed' ? row.changed : row.sameTopic;
      it(`${row.name}, labelled ${label}: the Oslo memory is ${want}`, async () => {
        const said = [row.newer, row.older]; // the newer first, as events come before traits
        const llm = model(said, label);
        const store = await memorise(
          [
            chat('s1', 1, [
              [4, row.older],
              [30, row.newer],
            ]),
          ],
          llm,
        );
        const older = store.byText(/Oslo/.test(row.newer.text) ? /^You live in Oslo$/ : /Oslo/);
        const newer = store.byText(/Bergen/);
        expect(older.time).toBeLessThan(newer.time);
        // The pair reached the labeller once, when the newer memory was linked.
        const asked = llm.calls.filter((c) => c.schemaTitle === 'relation_labels');
        expect(asked.map((c) => [newMemoryInPrompt(c.messages), [...candidatesInPrompt(c.messages).values()]])).toEqual([
          [newer.text, [older.text]],
        ]);
        expect(outcome(store, older, newer)).toBe(want);
        // An open question is what the chat's memory notice asks.
        const questions = changeQuestions('s1', store.edges, store.memories).map((q) => [q.older.id, q.newer.id]);
        expect(questions).toEqual(want === 'asked' ? [[older.id, newer.id]] : []);
        // Nothing but the change question joins two memories of one chat.
        expect(store.edges.every((e) => e.relation === 'Changed' || e.askEnded)).toBe(true);
      });
    }
  }

  it('a later trait that wins only via the question: "No longer true" retires the older one at the change', async () => {
    const newer: Said = { line: 'I moved to Bergen', kind: 'user-trait', text: 'You now live in Bergen' };
    const store = await memorise(
      [
        chat('s1', 1, [
          [4, OSLO],
          [30, newer],
        ]),
      ],
      model([OSLO, newer], 'SameTopic'),
    );
    const oslo = store.byText(/Oslo/);
    const bergen = store.byText(/Bergen/);
    expect(isPast(oslo)).toBe(false);
    const [question] = changeQuestions('s1', store.edges, store.memories);
    expect(question.newer.id).toBe(bergen.id);
    const answer = answerChange(question.edge, true, store.memories, T0 + 10 * DAY)!;
    expect(answer.memoryPatches).toEqual([{ id: oslo.id, supersededBy: bergen.id, endedAt: bergen.time }]);
  });

  it('without labels (similarity linking), two traits of one chat that conflict: the later one is asked about', async () => {
    const newer: Said = {
      line: "I don't live in Oslo any more, I'm in Bergen now",
      kind: 'user-trait',
      text: 'You no longer live in Oslo; you live in Bergen now',
    };
    const llm = model([OSLO, newer], 'Changed');
    const store = await memorise(
      [
        chat('s1', 1, [
          [4, OSLO],
          [30, newer],
        ]),
      ],
      llm,
      withDefaults({ relationAwareLinking: false }),
    );
    expect(llm.count('relation_labels')).toBe(0);
    expect(outcome(store, store.byText(/^You live in Oslo$/), store.byText(/Bergen/))).toBe('asked');
  });

  it('what the summary lists first does not decide: the older by its turn is the one that ends', async () => {
    const newer: Said = { line: 'I moved to Bergen', kind: 'user-trait', text: 'You now live in Bergen' };
    for (const said of [
      [newer, OSLO],
      [OSLO, newer],
    ]) {
      const store = await memorise(
        [
          chat('s1', 1, [
            [4, OSLO],
            [30, newer],
          ]),
        ],
        model(said, 'Changed'),
      );
      expect(outcome(store, store.byText(/Oslo/), store.byText(/Bergen/))).toBe('retired');
      expect(isPast(store.byText(/Bergen/))).toBe(false);
    }
  });

  it('the Oslo trait is not sent as known now after the chat is memorised', async () => {
    const newer: Said = { line: 'I moved from Oslo to Bergen', kind: 'event', text: 'You moved from Oslo to Bergen last week' };
    const store = await memorise(
      [
        chat('s1', 1, [
          [4, OSLO],
          [30, newer],
        ]),
      ],
      model([newer, OSLO], 'Changed'),
    );
    const oslo = store.byText(/^You live in Oslo$/);
    const index = createHybridIndex();
    for (const m of store.all) index.upsert(memoryUnit(m));
    const turn = await prepareTurn({
      dialogue: [{ role: 'user', text: 'Where should I go for a walk this weekend?' }],
      now: T0 + 20 * DAY,
      index,
      graph: MemoryGraph.from(store.all, store.edges),
      memoriesById: store.memories,
      settings: withDefaults(),
      refineCache: new RefineCache(),
      seed: 1,
    });
    expect(turn.systemPrompt).not.toMatch(/know about the person now:[^]*live in Oslo/);
    expect(turn.usedMemory.personaIds ?? []).not.toContain(oslo.id);
  });

  it('in a later chat, as before: the move retires the trait of the earlier chat', async () => {
    const newer: Said = { line: 'I moved from Oslo to Bergen', kind: 'event', text: 'You moved from Oslo to Bergen' };
    const llm = model([OSLO, newer], 'Changed');
    const store = await memorise([chat('s1', 1, [[4, OSLO]]), chat('s2', 8, [[2, newer]])], llm);
    expect(outcome(store, store.byText(/^You live in Oslo$/), store.byText(/Bergen/))).toBe('retired');
  });
});

describe('no change within one chat', () => {
  const FJORDS: Said = { line: "I love Oslo's fjords", kind: 'user-trait', text: "You love Oslo's fjords" };

  for (const label of ['SameTopic', 'None'] as const) {
    it(`"I live in Oslo" / "I love Oslo's fjords", labelled ${label}: both stay current, with no edge and no question`, async () => {
      const llm = new ScriptedModel(({ schemaTitle, messages }) => {
        if (schemaTitle === 'relation_labels') {
          return JSON.stringify({ labels: [...candidatesInPrompt(messages).keys()].map((i) => ({ candidate: i, relation: label })) });
        }
        return model([OSLO, FJORDS], label).json(messages, { title: schemaTitle });
      });
      const store = await memorise(
        [
          chat('s1', 1, [
            [4, OSLO],
            [30, FJORDS],
          ]),
        ],
        llm,
      );
      // Two states sharing a word: put to the labeller for the change question, and left alone.
      expect(llm.count('relation_labels')).toBe(1);
      expect(store.all.filter((m) => isPast(m))).toEqual([]);
      expect(store.edges).toEqual([]);
      expect(changeQuestions('s1', store.edges, store.memories)).toEqual([]);
    });
  }

  it("ordinary links stay the paper's: a Cause between two memories of one chat makes no edge", async () => {
    const visit: Said = { line: 'I work in Oslo as a nurse', kind: 'user-trait', text: 'You work in Oslo as a nurse' };
    const llm = new ScriptedModel(({ schemaTitle, messages }) => {
      if (schemaTitle === 'relation_labels') {
        return JSON.stringify({ labels: [...candidatesInPrompt(messages).keys()].map((i) => ({ candidate: i, relation: 'Cause' })) });
      }
      return model([OSLO, visit], 'None').json(messages, { title: schemaTitle });
    });
    const store = await memorise(
      [
        chat('s1', 1, [
          [4, OSLO],
          [30, visit],
        ]),
      ],
      llm,
    );
    expect(llm.count('relation_labels')).toBe(1);
    expect(store.edges).toEqual([]);
  });
});

describe('which older memories of a session are put to the change question', () => {
  const u = (id: string, minute: number, text: string, kind: MemoryKind = 'user-trait', extra: Partial<Memory> = {}) =>
    mem(id, 1 + minute / 1440, text, kind, { subject: kind === 'assistant-trait' ? 'assistant' : 'user', sessionId: 's1', ...extra });

  it('the pairs it reads as a possible change', () => {
    const oslo = u('oslo', 4, 'You live in Oslo');
    expect(mayChangeWithin(oslo, u('b', 30, 'You moved to Bergen', 'event'))).toBe(true);
    expect(mayChangeWithin(oslo, u('b', 30, 'You live in Bergen'))).toBe(true);
    expect(mayChangeWithin(u('e', 4, 'You live in Oslo', 'event'), u('b', 30, 'You moved from Oslo to Bergen', 'event'))).toBe(true);
    // Not: an event that shares nothing; two states that share nothing and tell no change; an
    // older memory already past; another person.
    expect(mayChangeWithin(u('e', 4, 'You went to a concert', 'event'), u('b', 30, 'You moved to Bergen', 'event'))).toBe(false);
    expect(mayChangeWithin(oslo, u('c', 30, 'You have a cat'))).toBe(false);
    expect(mayChangeWithin({ ...oslo, endedAt: T0 }, u('b', 30, 'You live in Bergen now'))).toBe(false);
    expect(mayChangeWithin(u('t', 4, 'Tealeaf lives in Oslo', 'assistant-trait'), u('b', 30, 'You moved to Bergen', 'event'))).toBe(false);
  });

  it('only older ones of the batch, at most j, those sharing more words first', async () => {
    const list = [
      u('a', 2, 'You live in a flat'),
      u('oslo', 4, 'You live in Oslo'),
      u('cat', 5, 'You have a cat'),
      u('after', 40, 'You live in Oslo again'),
      u('other', 1, 'You live in Oslo', 'user-trait', { sessionId: 's0' }),
    ];
    const newer = u('new', 30, 'You moved from Oslo to Bergen', 'event');
    const all = [...list, newer];
    const graph = MemoryGraph.from(all, []);
    const byId = new Map(all.map((m) => [m.id, m]));
    const batch = new Set(['a', 'oslo', 'cat', 'after', 'new']);
    const input = { memory: newer, graph, lookup: (id: string) => byId.get(id), batch };
    expect(sessionChangeCandidates(input, 3).map((m) => m.id)).toEqual(['oslo', 'cat', 'a']);
    expect(sessionChangeCandidates(input, 1).map((m) => m.id)).toEqual(['oslo']);
    expect(sessionChangeCandidates(input, 3, new Set(['oslo'])).map((m) => m.id)).toEqual(['cat', 'a']);
    expect(sessionChangeCandidates({ ...input, batch: undefined }, 3)).toEqual([]);

    // In linkMemory: asked beside the ordinary candidates, in the same call; no edge unless a change.
    const index = new FixedIndex(['other']);
    for (const m of all) index.upsert(memoryUnit(m));
    const llm = new ScriptedModel(({ messages }) =>
      JSON.stringify({
        labels: [...candidatesInPrompt(messages)].map(([i, text]) => ({
          candidate: i,
          relation: /Oslo/.test(text) ? 'Changed' : 'SameTopic',
        })),
      }),
    );
    const plan = await linkMemory({ ...input, index, settings: withDefaults(), llm, now: 0 });
    expect(llm.count()).toBe(1);
    expect(plan.candidates.map((c) => c.id)).toEqual(['other', 'oslo', 'cat', 'a']);
    expect(plan.edges.map((e) => [e.from, e.relation])).toEqual([
      ['other', 'Changed'],
      ['oslo', 'Changed'],
    ]);
    expect(plan.superseded.map((m) => m.id)).toEqual(['other', 'oslo']);
  });
});

describe('memorised by the app (MemoryService and its job runner)', () => {
  it('a chat that tells the move retires "You live in Oslo" of the same chat', async () => {
    const repo = new InMemoryRepository();
    const newer: Said = {
      line: 'we relocated from Oslo to Bergen',
      kind: 'event',
      text: 'You and your family relocated from Oslo to Bergen',
    };
    const { session, turns } = chat('s1', 1, [
      [4, OSLO],
      [30, newer],
    ]);
    await repo.apply({ sessions: [session], turns, jobs: [createMemoriseJob(session.id, session.lastActivityAt + 10)] });
    const llm = model([newer, OSLO], 'Changed');
    const service = new MemoryService(
      repo,
      new SettingsService(repo),
      () => llm,
      () => undefined,
    );
    await service.load();
    service.kick();
    await service['runner'].settled();
    expect((await repo.listJobs()).map((j) => j.status)).toEqual(['done']);
    const oslo = [...service.memories.values()].find((m) => m.text === OSLO.text)!;
    const moved = [...service.memories.values()].find((m) => /Bergen/.test(m.text))!;
    expect(oslo.supersededBy).toBe(moved.id);
    expect(isPast(oslo)).toBe(true);
    expect(service.graph.hasEdge(oslo.id, moved.id)).toBe(true);
  });
});
