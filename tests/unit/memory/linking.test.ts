import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { linkMemory, findCandidates } from '../../../src/memory/ingest/linking';
import { memoryUnit } from '../../../src/memory/ingest/memorise';
import { withDefaults } from '../../../src/memory/settings';
import { checkGraphInvariants } from '../../support/invariants';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import type { Memory, RelationLabel } from '../../../src/memory/types';
import { candidatesInPrompt, edge, FixedIndex, mem, ScriptedModel } from './helpers';

function labeller(byText: Record<string, RelationLabel>) {
  return new ScriptedModel(({ messages }) => {
    const labels = [...candidatesInPrompt(messages)].map(([i, text]) => ({ candidate: i, relation: byText[text] ?? 'None' }));
    return JSON.stringify({ labels });
  });
}

function setup(memories: Memory[], edges = [] as ReturnType<typeof edge>[], ranking?: string[]) {
  const graph = MemoryGraph.from(memories, edges);
  const index = new FixedIndex(ranking);
  for (const m of memories) index.upsert(memoryUnit(m));
  const byId = new Map(memories.map((m) => [m.id, m]));
  return { graph, index, byId };
}

describe('linkMemory (Phase I, Figure 3)', () => {
  // Two components hold labelled candidates; a third candidate is labelled None.
  const a1 = mem('a1', 1, 'User started learning the guitar');
  const a2 = mem('a2', 2, 'User bought a new guitar');
  const a3 = mem('a3', 3, 'User felt tired after a long week');
  const b1 = mem('b1', 4, 'User joined a band with friends');
  const b2 = mem('b2', 5, 'User cooked a big dinner');
  const c1 = mem('c1', 6, 'User watched a film about musicians');
  const newMem = mem('new', 10, 'User played guitar at a concert');
  const base = [a1, a2, a3, b1, b2, c1, newMem];
  const edges = [edge('a1', 'a2'), edge('a2', 'a3'), edge('b1', 'b2')];

  it('links only to the most recent labelled candidate in each component, with one call', async () => {
    const { graph, index, byId } = setup(base, edges, ['a1', 'b1', 'a2', 'c1']);
    const llm = labeller({ [a1.text]: 'Cause', [a2.text]: 'SameTopic', [b1.text]: 'React', [c1.text]: 'None' });
    const plan = await linkMemory({
      memory: newMem,
      graph,
      index,
      lookup: (id) => byId.get(id),
      settings: withDefaults({ j: 3 }),
      llm,
      now: 0,
    });
    expect(llm.count()).toBe(1);
    expect(plan.candidates.map((c) => c.id)).toEqual(['a1', 'b1', 'a2']);
    expect(plan.edges.map((e) => [e.from, e.to, e.relation]).sort()).toEqual([
      ['a2', 'new', 'SameTopic'],
      ['b1', 'new', 'React'],
    ]);
    expect(plan.edges.every((e) => e.origin === 'model')).toBe(true);
    for (const e of plan.edges) graph.addEdge(e);
    expect(checkGraphInvariants(base, [...edges, ...plan.edges])).toEqual([]);
    // The new memory now joins both components.
    expect(graph.componentId('a1')).toBe(graph.componentId('b2'));
  });

  it('makes no edge when every candidate is None or the output is garbage', async () => {
    const { graph, index, byId } = setup(base, edges, ['a1', 'b1', 'a2']);
    for (const out of ['{"labels":[]}', 'no idea', '{"labels":[{"candidate":7,"relation":"Cause"}]}']) {
      const llm = new ScriptedModel(() => out);
      const plan = await linkMemory({ memory: newMem, graph, index, lookup: (id) => byId.get(id), settings: withDefaults(), llm, now: 0 });
      expect(plan.edges).toEqual([]);
    }
  });

  it('links by similarity without a model when relation-aware linking is off', async () => {
    const { graph, index, byId } = setup(base, edges, ['a2', 'a1', 'b1']);
    const llm = labeller({});
    const plan = await linkMemory({
      memory: newMem,
      graph,
      index,
      lookup: (id) => byId.get(id),
      settings: withDefaults({ relationAwareLinking: false, lexicalSimilarityThreshold: 0.2 }),
      llm,
      now: 0,
    });
    expect(llm.count()).toBe(0);
    // Only the guitar memories share words; a1 and a2 share a component, so only a2 (newer) is linked.
    expect(plan.edges.map((e) => [e.from, e.relation, e.origin])).toEqual([['a2', 'SameTopic', 'similarity']]);
  });

  it('keeps edges older -> newer when the candidate is newer, and says so to the labeller', async () => {
    const later = mem('later', 20, 'User sold the guitar');
    const older = mem('older', 5, 'User got a guitar as a gift');
    const { graph, index, byId } = setup([later, older], [], ['later']);
    const llm = labeller({ [later.text]: 'Cause' });
    const plan = await linkMemory({ memory: older, graph, index, lookup: (id) => byId.get(id), settings: withDefaults(), llm, now: 0 });
    expect(plan.edges.map((e) => [e.from, e.to, e.relation])).toEqual([['older', 'later', 'Cause']]);
    expect(llm.calls[0].messages[1].content).toContain('order: A = new memory, B = candidate');
  });

  it('marks an older trait superseded when a newer trait of the same kind Changed it', async () => {
    const tea = mem('tea', 1, 'User loves green tea', 'user-trait', { subject: 'user' });
    const aTrait = mem('asst', 2, 'Assistant loves green tea too', 'assistant-trait', { subject: 'assistant' });
    const coffee = mem('coffee', 9, 'User now prefers coffee over tea', 'user-trait', { subject: 'user' });
    const { graph, index, byId } = setup([tea, aTrait, coffee], [], ['tea', 'asst']);
    const llm = labeller({ [tea.text]: 'Changed', [aTrait.text]: 'Changed' });
    const plan = await linkMemory({ memory: coffee, graph, index, lookup: (id) => byId.get(id), settings: withDefaults(), llm, now: 0 });
    expect(plan.edges.map((e) => [e.from, e.to, e.relation]).sort()).toEqual([
      ['asst', 'coffee', 'Changed'],
      ['tea', 'coffee', 'Changed'],
    ]);
    // Only the trait of the same kind is superseded.
    expect(plan.superseded.map((m) => [m.id, m.supersededBy])).toEqual([['tea', 'coffee']]);
  });

  describe('a change (change.ts) in linking', () => {
    const link = (memory: Memory, others: Memory[], labels: Record<string, RelationLabel>, edges: ReturnType<typeof edge>[] = []) => {
      const { graph, index, byId } = setup(
        [...others, memory],
        edges,
        others.map((m) => m.id),
      );
      return linkMemory({ memory, graph, index, lookup: (id) => byId.get(id), settings: withDefaults(), llm: labeller(labels), now: 0 });
    };
    // An event that a later one changes: it shares words with it and does not itself read as a change.
    const hired = mem('hired', 2, 'You got a job at Lakeside school', 'event', { subject: 'user' });
    const quit = mem('quit', 9, 'You quit your job at Lakeside school', 'event', { subject: 'user' });

    it('retires the older event, whichever of the two is the memory being linked', async () => {
      // The change memorised after what it changes.
      const later = await link(quit, [hired], { [hired.text]: 'Changed' });
      // The older event memorised last (its chat memorised after the change's).
      const earlier = await link(hired, [quit], { [quit.text]: 'Changed' });
      for (const plan of [later, earlier]) {
        expect(plan.edges.map((e) => [e.from, e.to, e.relation, e.askEnded])).toEqual([['hired', 'quit', 'Changed', undefined]]);
        expect(plan.superseded.map((m) => [m.id, m.supersededBy])).toEqual([['hired', 'quit']]);
      }
    });

    // The older memory shares its component with a more recent candidate, which alone would get
    // the component's edge: the change's edge is made too, so the change is recorded or asked.
    const oslo = mem('oslo', 1, 'You live in Oslo and you work as a nurse', 'user-trait', { subject: 'user' });
    const concert = mem('concert', 5, 'You went to a concert in Oslo', 'event', { subject: 'user' });
    const moved = mem('moved', 8, 'You moved from Oslo to Bergen last week', 'event', { subject: 'user' });
    const joined = [edge('oslo', 'concert')];

    it("keeps a retiring change's edge beside the component's most recent candidate", async () => {
      const plan = await link(moved, [oslo, concert], { [oslo.text]: 'Changed', [concert.text]: 'SameTopic' }, joined);
      expect(plan.edges.map((e) => [e.from, e.relation, e.askEnded]).sort()).toEqual([
        ['concert', 'SameTopic', undefined],
        ['oslo', 'Changed', undefined],
      ]);
      expect(plan.superseded.map((m) => [m.id, m.supersededBy])).toEqual([['oslo', 'moved']]);
    });

    it("keeps an asked change's edge beside the component's most recent candidate", async () => {
      const plan = await link(moved, [oslo, concert], { [oslo.text]: 'SameTopic', [concert.text]: 'Cause' }, joined);
      expect(plan.edges.map((e) => [e.from, e.relation, e.askEnded]).sort()).toEqual([
        ['concert', 'Cause', undefined],
        ['oslo', 'SameTopic', true],
      ]);
      expect(plan.superseded).toEqual([]);
    });
  });

  // Phase I-1: the paper takes candidates from G^t, the graph before the session (Algorithm 1,
  // line 5); the sameSessionCandidates switch lets older memories of the same session in too.
  describe('candidates from the same session (sameSessionCandidates)', () => {
    const old = mem('old', 1, 'User likes hiking in the hills');
    const b0 = mem('b0', 5, 'User went hiking in the hills', 'event', { sessionId: 'x' });
    const b1m = mem('b1m', 5, 'User hiking hills again', 'event', { sessionId: 'x' });
    const memories = [old, b0, b1m];
    const batch = new Set(['b0', 'b1m']);
    function candidates(memory: Memory, sameSession?: boolean) {
      const { graph, byId } = setup(memories);
      const index = createHybridIndex();
      for (const m of memories) index.upsert(memoryUnit(m));
      return findCandidates({ memory, graph, index, lookup: (id) => byId.get(id), batch }, 3, sameSession)
        .map((h) => h.unit.id)
        .sort();
    }

    it('off (the paper, the default): only memories of earlier sessions, never one of the same session', () => {
      expect(withDefaults().sameSessionCandidates).toBe(false);
      expect(candidates(b0, false)).toEqual(['old']);
      // b0 is older than b1m and shares its words, yet it is of the same session.
      expect(candidates(b1m, false)).toEqual(['old']);
      expect(candidates(b1m)).toEqual(['old']);
    });

    it('on: older memories of the same session too, never itself or a newer one', () => {
      expect(candidates(b0, true)).toEqual(['old']);
      expect(candidates(b1m, true)).toEqual(['b0', 'old']);
    });

    it('off: groups candidates by their components before the session (G^t), not as an earlier memory of it joined them', async () => {
      // a and b were apart before the session; n1, linked earlier in it, joined them (a -> n1 <- b).
      const a = mem('a', 1, 'User adopted a dog');
      const b = mem('b', 2, 'User walks every morning');
      const n1 = mem('n1', 10, 'User walks the dog', 'event', { sessionId: 'x' });
      const n2 = mem('n2', 10.5, 'User walks the dog in the park', 'event', { sessionId: 'x' });
      const plan = async (sameSessionCandidates: boolean) => {
        const { graph, index, byId } = setup([a, b, n1, n2], [edge('a', 'n1'), edge('b', 'n1')], ['a', 'b']);
        expect(graph.componentId('a')).toBe(graph.componentId('b'));
        const llm = labeller({ [a.text]: 'Cause', [b.text]: 'SameTopic' });
        const settings = withDefaults({ sameSessionCandidates });
        const out = await linkMemory({
          memory: n2,
          graph,
          index,
          lookup: (id) => byId.get(id),
          settings,
          llm,
          batch: new Set(['n1', 'n2']),
          now: 0,
        });
        return out.edges.map((e) => `${e.from}>${e.to}`).sort();
      };
      // The paper: a and b are two components of G^t, each gets its edge.
      expect(await plan(false)).toEqual(['a>n2', 'b>n2']);
      // The graph as it is now: one component, one edge to its most recent candidate.
      expect(await plan(true)).toEqual(['b>n2']);
    });

    it('decides which edges linkMemory makes', async () => {
      // Similarity linking: both candidates are similar enough to get an edge.
      const plan = async (sameSessionCandidates: boolean) => {
        const { graph, byId } = setup(memories);
        const index = createHybridIndex();
        for (const m of memories) index.upsert(memoryUnit(m));
        const settings = withDefaults({ relationAwareLinking: false, lexicalSimilarityThreshold: 0.1, sameSessionCandidates });
        const out = await linkMemory({ memory: b1m, graph, index, lookup: (id) => byId.get(id), settings, batch, now: 0 });
        return out.edges.map((e) => `${e.from}>${e.to}`).sort();
      };
      expect(await plan(false)).toEqual(['old>b1m']);
      expect(await plan(true)).toEqual(['b0>b1m', 'old>b1m']);
    });
  });
});
