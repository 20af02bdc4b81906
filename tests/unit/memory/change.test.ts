// A change told as an event ("I moved from Oslo to Bergen") retires what it
// changes, whatever kinds the two memories are; an unsure change is asked, never retired; "No
// longer true" takes a date, by default the change's.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { linkMemory } from '../../../src/memory/ingest/linking';
import { changeDecision, readsAsChange, sharedWords } from '../../../src/memory/ingest/change';
import { createMemoriseJob, memoryUnit, runMemoriseJob } from '../../../src/memory/ingest/memorise';
import { answerChange, changeEdge, changeQuestions, defaultEnd, toggleSuperseded } from '../../../src/memory/corrections';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { RefineCache } from '../../../src/memory/recall/refine';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { withDefaults } from '../../../src/memory/settings';
import { isPast, pastNote } from '../../../src/memory/past';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { Memory, RelationLabel, Session, Turn } from '../../../src/memory/types';
import { candidatesInPrompt, DAY, edge, FixedIndex, mem, newMemoryInPrompt, ScriptedModel, T0 } from './helpers';

const OSLO = 'You live in Oslo and you work as a nurse at Ullevål hospital';
const MOVED = 'You moved from Oslo to Bergen last week';

const oslo = mem('oslo', 1, OSLO, 'user-trait', { subject: 'user' });
const moved = mem('moved', 8, MOVED, 'event', { subject: 'user' });

function labeller(byText: Record<string, RelationLabel>) {
  return new ScriptedModel(({ messages }) => {
    const labels = [...candidatesInPrompt(messages)].map(([i, text]) => ({ candidate: i, relation: byText[text] ?? 'None' }));
    return JSON.stringify({ labels });
  });
}

async function link(memory: Memory, others: Memory[], labels: Record<string, RelationLabel>) {
  const all = [...others, memory];
  const graph = MemoryGraph.from(all, []);
  const index = new FixedIndex(others.map((m) => m.id));
  for (const m of all) index.upsert(memoryUnit(m));
  const byId = new Map(all.map((m) => [m.id, m]));
  return linkMemory({ memory, graph, index, lookup: (id) => byId.get(id), settings: withDefaults(), llm: labeller(labels), now: 0 });
}

describe('the change rule (change.ts)', () => {
  it('an event labelled Changed against a trait retires the trait, at the event', async () => {
    const plan = await link(moved, [oslo], { [OSLO]: 'Changed' });
    expect(plan.edges.map((e) => [e.from, e.to, e.relation, e.askEnded])).toEqual([['oslo', 'moved', 'Changed', undefined]]);
    expect(plan.superseded.map((m) => [m.id, m.supersededBy])).toEqual([['oslo', 'moved']]);
    // True until the move, not until the day it was memorised.
    const byId = new Map([oslo, moved].map((m) => [m.id, m]));
    expect(pastNote({ ...oslo, supersededBy: 'moved' }, byId)).toBe(' (true until 2024-01-09; no longer true)');
  });

  it('a Changed whose pair shares no word is asked, never retired', async () => {
    const swim = mem('swim', 1, 'You love swimming in the sea', 'user-trait', { subject: 'user' });
    const plan = await link(moved, [swim], { [swim.text]: 'Changed' });
    expect(plan.superseded).toEqual([]);
    expect(plan.edges.map((e) => [e.from, e.relation, e.askEnded])).toEqual([['swim', 'Changed', true]]);
  });

  it('an event labelled Changed that does not read as a change is asked', () => {
    const visit = mem('visit', 8, 'You visited Oslo for a concert', 'event', { subject: 'user' });
    expect(changeDecision(oslo, visit, 'Changed')).toBe('ask');
    expect(changeDecision(oslo, moved, 'Changed')).toBe('retire');
  });

  it('a change the labeller missed (SameTopic) is asked when it reads as one and shares a word', async () => {
    const plan = await link(moved, [oslo], { [OSLO]: 'SameTopic' });
    expect(plan.superseded).toEqual([]);
    expect(plan.edges.map((e) => [e.from, e.relation, e.askEnded])).toEqual([['oslo', 'SameTopic', true]]);
    // Not when the newer memory tells no change, nor for a None label.
    const visit = mem('visit', 8, 'You visited Oslo for a concert', 'event', { subject: 'user' });
    expect(changeDecision(oslo, visit, 'SameTopic')).toBe('keep');
    expect(changeDecision(oslo, moved, 'None')).toBe('keep');
  });

  it('a change the labeller missed is never asked about an older event: what happened does not end', async () => {
    const concert = mem('concert', 1, 'You went to a concert in Oslo', 'event', { subject: 'user' });
    // Everything else that would ask is there: a shared word, and the newer one reads as a change.
    expect(sharedWords(concert.text, MOVED).length).toBeGreaterThan(0);
    expect(readsAsChange(MOVED)).toBe(true);
    expect(changeDecision(concert, moved, 'SameTopic')).toBe('keep');
    const plan = await link(moved, [concert], { [concert.text]: 'SameTopic' });
    expect(plan.superseded).toEqual([]);
    expect(plan.edges.map((e) => [e.from, e.relation, e.askEnded])).toEqual([['concert', 'SameTopic', undefined]]);
  });

  it('a trait Changed into a trait of the same kind is retired as before; never across the user and Tealeaf', () => {
    const tea = mem('tea', 1, 'You love green tea', 'user-trait', { subject: 'user' });
    const coffee = mem('coffee', 9, 'You now prefer coffee over tea', 'user-trait', { subject: 'user' });
    const asst = mem('asst', 2, 'Tealeaf loves green tea too', 'assistant-trait', { subject: 'assistant' });
    expect(changeDecision(tea, coffee, 'Changed')).toBe('retire');
    expect(changeDecision(asst, coffee, 'Changed')).toBe('keep');
    // Already past: nothing more to do.
    expect(changeDecision({ ...tea, endedAt: 5 }, coffee, 'Changed')).toBe('keep');
  });

  it('an instruction Changed by a newer one that says so is retired; one merely on the same subject is asked', () => {
    const short = mem('short', 1, 'Keep your answers short.', 'instruction', { subject: 'user' });
    const long = mem('long', 9, 'You can write long answers again.', 'instruction', { subject: 'user' });
    const english = mem('english', 9, 'Always answer in English.', 'instruction', { subject: 'user' });
    expect(changeDecision(short, long, 'Changed')).toBe('retire');
    expect(changeDecision(short, english, 'Changed')).toBe('ask');
  });

  // What the rule does with a labeller that says Changed for every pair (the stand-in's
  // wrong-relation fault at its worst), on hand-written pairs: 10 real changes and 10 pairs on
  // the same subject that are no change. Before, only a trait Changed into a trait of the
  // same kind was retired, and nothing was asked. (docs/METHOD.md, section 4, has these figures.)
  const t = (text: string) => ({ kind: 'user-trait' as const, text });
  const e = (text: string) => ({ kind: 'event' as const, text });
  const i = (text: string) => ({ kind: 'instruction' as const, text });
  type Side = { kind: Memory['kind']; text: string };
  const CHANGES: Array<[Side, Side]> = [
    [t(OSLO), e(MOVED)],
    [t('You are vegetarian: you eat no meat and no fish.'), e('You started eating fish again last month.')],
    [t('You drive a red Volvo to work.'), e('You sold your Volvo and now cycle to work.')],
    [t('You work as a teacher at Lakeside school.'), e('You quit your job at Lakeside school.')],
    [t('You love green tea.'), t('You now prefer coffee over tea.')],
    [t('Your sister Ana lives in Lisbon.'), e('Ana moved to Porto in May.')],
    [t('You are training for a marathon.'), e('You stopped running after your knee injury.')],
    [t('You are single.'), e('You got married to Sam in June.')],
    [i('Keep your answers short.'), i('You can give long, detailed answers again.')],
    [t('You play the cello in an orchestra.'), e('You left the orchestra to focus on your studies.')],
  ];
  const NOT_CHANGES: Array<[Side, Side]> = [
    [t(OSLO), e('You visited the Munch museum in Oslo.')],
    [t('You love green tea.'), e('You bought a teapot for your green tea.')],
    [t('You are learning to play the cello.'), e('You started eating fish again last month.')],
    [t('You love hiking in the mountains.'), t('You now hike every weekend with your dog.')],
    [t('You have a dog called Rex.'), t('You take Rex to the vet every spring.')],
    [t('You work as a nurse.'), t('You enjoy your night shifts as a nurse.')],
    [t('Your sister Ana lives in Lisbon.'), e('You and Ana cooked dinner together.')],
    [t('You drive a red Volvo.'), e('You drove your Volvo to the coast.')],
    [t('You are vegetarian.'), e('You cooked a vegetarian lasagne for friends.')],
    [i('Keep your answers short.'), i('Always answer in English.')],
  ];
  const decide = (pairs: Array<[Side, Side]>) => {
    const count = { retire: 0, ask: 0, keep: 0, before: 0 };
    for (const [a, b] of pairs) {
      const older = mem('a', 1, a.text, a.kind, { subject: 'user' });
      const newer = mem('b', 9, b.text, b.kind, { subject: 'user' });
      count[changeDecision(older, newer, 'Changed')]++;
      if (a.kind === 'user-trait' && b.kind === a.kind) count.before++;
    }
    return count;
  };

  it('measured: every label Changed, on 10 real changes and 10 non-changes', () => {
    const real = decide(CHANGES);
    const not = decide(NOT_CHANGES);
    console.log(`[change rule] real changes: ${JSON.stringify(real)}; not changes: ${JSON.stringify(not)}`);
    // Real changes: 8 retired, 2 asked (nothing shared: "training for a marathon" / "stopped running");
    // before, 1 retired and 9 left current.
    expect(real).toEqual({ retire: 8, ask: 2, keep: 0, before: 1 });
    // Not changes: 2 retired wrongly (a trait into a trait sharing a word, as before), 8 asked;
    // before, 3 retired wrongly.
    expect(not).toEqual({ retire: 2, ask: 8, keep: 0, before: 3 });
  });

  it('the words it reads', () => {
    expect(readsAsChange(MOVED)).toBe(true);
    expect(readsAsChange('You no longer eat meat')).toBe(true);
    expect(readsAsChange('You went to a concert in Oslo')).toBe(false);
    expect(sharedWords(OSLO, MOVED)).toEqual(['oslo']);
    expect(sharedWords('Keep your answers short.', 'Your answers can be long')).toEqual(['answer']);
  });
});

describe('answering and ending by hand', () => {
  const memories = [oslo, moved];
  const map = new Map(memories.map((m) => [m.id, m]));
  const asked = { ...edge('oslo', 'moved', 'SameTopic'), askEnded: true };
  const graph = MemoryGraph.from(memories, [asked]);

  it('the notice asks about the session that told the change, until answered', () => {
    expect(changeQuestions('s8', [asked], map).map((q) => [q.older.id, q.newer.id])).toEqual([['oslo', 'moved']]);
    expect(changeQuestions('s3', [asked], map)).toEqual([]);
    // An older memory already past is not asked about.
    expect(changeQuestions('s8', [asked], new Map([...map, ['oslo', { ...oslo, endedAt: 9 }]]))).toEqual([]);
  });

  it('"No longer true" retires it at the change and makes the edge a user Changed; "Still true" keeps it', () => {
    const yes = answerChange(asked, true, map, T0 + 30 * DAY)!;
    expect(yes.memoryPatches).toEqual([{ id: 'oslo', supersededBy: 'moved', endedAt: moved.time }]);
    expect(yes.edges?.[0]).toMatchObject({ relation: 'Changed', origin: 'user' });
    expect(yes.edges?.[0]).not.toHaveProperty('askEnded');
    const no = answerChange({ ...asked, relation: 'Changed' }, false, map)!;
    expect(no.memoryPatches).toBeUndefined();
    expect(no.edges?.[0]).toMatchObject({ relation: 'SameTopic', origin: 'user' });
    expect(no.edges?.[0]).not.toHaveProperty('askEnded');
  });

  it('relabelling the edge answers too; Changed retires whatever the kinds', () => {
    const c = changeEdge(asked, 'Changed', map, 0);
    expect(c.edges?.[0]).not.toHaveProperty('askEnded');
    expect(c.memoryPatches).toEqual([{ id: 'oslo', supersededBy: 'moved' }]);
  });

  it('"No longer true" ends at the change it links to by default, at a date chosen, never before it formed or after now', () => {
    const changed = MemoryGraph.from(memories, [edge('oslo', 'moved', 'Changed')]);
    const now = T0 + 30 * DAY;
    expect(defaultEnd('oslo', map, changed, now)).toBe(moved.time);
    expect(toggleSuperseded('oslo', map, changed, now).change?.memoryPatches).toEqual([
      { id: 'oslo', endedAt: moved.time, supersededBy: 'moved' },
    ]);
    // Linked by no change: today.
    expect(defaultEnd('oslo', map, MemoryGraph.from(memories, []), now)).toBe(now);
    const at = T0 + 4 * DAY;
    expect(toggleSuperseded('oslo', map, graph, now, at).change?.memoryPatches?.[0]).toMatchObject({ endedAt: at });
    expect(toggleSuperseded('oslo', map, graph, now, T0 - DAY).change?.memoryPatches?.[0]).toMatchObject({ endedAt: oslo.time });
    expect(toggleSuperseded('oslo', map, graph, now, now + DAY).change?.memoryPatches?.[0]).toMatchObject({ endedAt: now });
    // An event says what happened: it does not end.
    expect(toggleSuperseded('moved', map, graph, now).error).toBeDefined();
  });
});

describe('a change told as an event, memorised end to end', () => {
  function session(i: number, text: string): { session: Session; turns: Turn[] } {
    const id = `s${i}`;
    const time = T0 + i * 7 * DAY;
    return {
      session: { id, title: id, startedAt: time, lastActivityAt: time, status: 'ended' },
      turns: [
        { id: `${id}:u`, sessionId: id, index: 0, role: 'user', text, time, status: 'complete' },
        { id: `${id}:a`, sessionId: id, index: 1, role: 'assistant', text: 'I see.', time: time + 1, status: 'complete' },
      ],
    };
  }
  // The user's line becomes a trait, or an event when it tells a move; a careful labeller calls it Changed.
  const model = () =>
    new ScriptedModel(({ schemaTitle, messages }) => {
      if (schemaTitle === 'session_memories') {
        const [, label, said] = /^(T\d+) \[user[^\]]*\]: (.*)$/m.exec(messages[1].content) ?? [];
        const text = said!.replace(/^I /, 'You ').replace(/ I /g, ' you ');
        return JSON.stringify(
          /moved/.test(said!)
            ? { events: [{ text, about: 'user', turns: [label] }], userTraits: [] }
            : { events: [], userTraits: [{ text, turns: [label] }] },
        );
      }
      if (schemaTitle === 'relation_labels') {
        const moved = /moved/.test(newMemoryInPrompt(messages));
        return JSON.stringify({
          labels: [...candidatesInPrompt(messages)].map(([i]) => ({ candidate: i, relation: moved ? 'Changed' : 'None' })),
        });
      }
      return '{}';
    });

  it('the Oslo trait is never sent as current after the move is memorised', async () => {
    const repo = new InMemoryRepository();
    const llm = model();
    const texts = ['I live in Oslo and I work as a nurse at Ullevål hospital', 'I moved from Oslo to Bergen last week'];
    for (const [i, text] of texts.entries()) {
      const { session: s, turns } = session(i, text);
      const job = createMemoriseJob(s.id, s.startedAt + 10);
      await repo.apply({ sessions: [s], turns, jobs: [job] });
      const index = createHybridIndex();
      for (const m of repo.memories.values()) index.upsert(memoryUnit(m));
      expect((await runMemoriseJob(job, { repo, llm, index, settings: withDefaults(), now: () => s.startedAt + 20 })).status).toBe('done');
    }
    const memories = [...repo.memories.values()];
    const livesInOslo = memories.find((m) => m.kind === 'user-trait')!;
    expect(isPast(livesInOslo)).toBe(true);
    const memoriesById = new Map(memories.map((m) => [m.id, m]));
    const index = createHybridIndex();
    for (const m of memories) index.upsert(memoryUnit(m));
    const turn = await prepareTurn({
      dialogue: [{ role: 'user', text: 'Where should I go for a walk this weekend?' }],
      now: T0 + 20 * DAY,
      index,
      graph: MemoryGraph.from(memories, [...repo.edges.values()]),
      memoriesById,
      settings: withDefaults(),
      refineCache: new RefineCache(),
      seed: 1,
    });
    expect(turn.systemPrompt).not.toMatch(/know about the person now:[^]*live in Oslo/);
    expect(turn.usedMemory.personaIds ?? []).not.toContain(livesInOslo.id);
  });
});
