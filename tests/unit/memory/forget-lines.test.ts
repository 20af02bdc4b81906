// Forgotten lines, pure. A passage is rebuilt without its forgotten lines (speaker labels
// kept, the index copy denoised again) and back with them; marks add and take away the memories
// that set them; the repeat test; and the plan of one forget found by lookups.
import { describe, expect, it } from 'vitest';
import { patchTurn, rebuildSegment } from '../../../src/memory/forget/lines';
import { repeatsFact } from '../../../src/memory/forget/repeats';
import { linePatches, linesByChat, planForget, type ForgetReads } from '../../../src/memory/forget/plan';
import { buildSegments } from '../../../src/memory/ingest/segments';
import { turnSources } from '../../../src/memory/derived';
import type { Memory, Segment, Turn, UsedMemory } from '../../../src/memory/types';

const T = Date.UTC(2025, 11, 1);
const turn = (id: string, index: number, role: Turn['role'], text: string, extra: Partial<Turn> = {}): Turn => ({
  id,
  sessionId: extra.sessionId ?? 's1',
  index,
  role,
  text,
  time: T + index,
  status: 'complete',
  ...extra,
});
const forgot = (t: Turn, by = ['m1']): Turn => ({ ...t, forgotten: { at: T + 99, by } });
const used = (u: Partial<UsedMemory>): UsedMemory => ({ memoryIds: [], segmentIds: [], timelines: [], scores: [], ...u });

describe('rebuildSegment', () => {
  const turns = [
    turn('a', 0, 'user', 'My sister Ingrid is coming to visit me at Christmas'),
    turn('b', 1, 'assistant', 'How lovely!'),
    turn('c', 2, 'user', 'I bake sourdough on Sundays'),
  ];
  const [segment] = buildSegments(turns, [{ first: 0, last: 2 }], {
    speakerLabel: (t) => (t.role === 'user' ? 'Caroline' : 'Mel'),
    names: ['Caroline', 'Mel'],
  });

  it('drops a forgotten line from the words and the index copy, keeps the others with their labels, and takes it back', () => {
    const byId = new Map(turns.map((t) => [t.id, t]));
    expect(rebuildSegment(segment, byId)).toBe(segment);
    const without = rebuildSegment(segment, new Map(byId).set('a', forgot(turns[0])));
    expect(without.text).toBe('Mel: How lovely!\nCaroline: I bake sourdough on Sundays');
    expect(without.indexText).not.toMatch(/Christmas|Ingrid/);
    expect(without.turnIds).toEqual(['a', 'b', 'c']);
    // Back: the line takes the label of its role from the passage.
    const back = rebuildSegment(without, byId);
    expect(back.text).toBe(segment.text);
    expect(back.indexText).toBe(segment.indexText);
  });

  it('a passage of forgotten lines only has no words; a line whose text holds another line is not mistaken for it', () => {
    const all = new Map(turns.map((t) => [t.id, forgot(t)]));
    expect(rebuildSegment(segment, all).text).toBe('');
    const tricky = [turn('x', 0, 'user', 'yes'), turn('y', 1, 'assistant', 'yes I do')];
    const [s] = buildSegments(tricky, [{ first: 0, last: 1 }]);
    expect(
      rebuildSegment(
        s,
        new Map([
          ['x', forgot(tricky[0])],
          ['y', tricky[1]],
        ]),
      ).text,
    ).toBe('assistant: yes I do');
  });

  it("buildSegments keeps a forgotten line's place but not its words", () => {
    const [s] = buildSegments([forgot(turns[0]), turns[1], turns[2]], [{ first: 0, last: 2 }]);
    expect(s.turnIds).toEqual(['a', 'b', 'c']);
    expect(s.firstTurn).toBe(0);
    expect(s.text).toBe('assistant: How lovely!\nuser: I bake sourdough on Sundays');
  });
});

describe('patchTurn', () => {
  it('adds and takes away the memories that forgot a line; the mark goes with the last', () => {
    const t = turn('a', 0, 'user', 'x');
    const one = patchTurn(t, { id: 'a', forget: { at: T, by: ['m1'] } });
    expect(one.forgotten).toEqual({ at: T, by: ['m1'] });
    const two = patchTurn(one, { id: 'a', forget: { at: T + 5, by: ['m2'] } });
    expect(two.forgotten).toEqual({ at: T, by: ['m1', 'm2'] });
    expect(patchTurn(two, { id: 'a', unforget: ['m1'] }).forgotten).toEqual({ at: T, by: ['m2'] });
    expect(patchTurn(patchTurn(two, { id: 'a', unforget: ['m1'] }), { id: 'a', unforget: ['m2'] })).not.toHaveProperty('forgotten');
    expect(patchTurn(t, { id: 'a', unforget: ['m1'] })).toBe(t);
  });
});

describe('repeatsFact', () => {
  it("two of the fact's own words, the memory's framing not counted", () => {
    const fact = 'The user said: My sister Ingrid is coming to visit me at Christmas';
    expect(repeatsFact('Ingrid arrives for Christmas.', [fact])).toBe(true);
    expect(repeatsFact('Say hello to your sister.', [fact])).toBe(false);
    expect(repeatsFact('The user said something else entirely.', [fact])).toBe(false);
    expect(repeatsFact('Sourdough!', ['You bake sourdough'])).toBe(false);
    expect(repeatsFact('Baking sourdough today', ['You bake sourdough'])).toBe(true);
  });
});

describe('planForget', () => {
  // Chat s1: the fact and its answer, then an unrelated exchange, then a reply repeating it.
  // Chat s2: a reply that retrieved the memory; one that only had it in the persona bank and does
  // not repeat it. Chat s3: a reply drawn from s2's passage that repeats the quote.
  const fact: Memory = {
    id: 'm1',
    kind: 'event',
    text: 'You said: My sister Ingrid is coming to visit me at Christmas',
    time: T,
    sourceTurnIds: ['a'],
    sessionId: 's1',
    edited: false,
    createdAt: T,
  };
  const copy: Memory = { ...fact, id: 'm2', kind: 'user-trait', text: 'Your sister Ingrid visits at Christmas.' };
  const other: Memory = { ...fact, id: 'm3', kind: 'user-trait', text: 'You have a sister.' };
  const s1 = [
    turn('a', 0, 'user', 'My sister Ingrid is coming to visit me at Christmas'),
    turn('b', 1, 'assistant', 'How lovely!'),
    turn('c', 2, 'user', 'I bake sourdough'),
    turn('d', 3, 'assistant', 'Nice bread.'),
    turn('e', 4, 'user', 'Any plans?'),
    turn('f', 5, 'assistant', 'Bake for Ingrid at Christmas!'),
  ];
  const s2 = [
    turn('g', 0, 'user', 'When is Ingrid visiting?', { sessionId: 's2' }),
    turn('h', 1, 'assistant', 'At Christmas.', { sessionId: 's2', usedMemory: used({ memoryIds: ['m1'] }) }),
    turn('i', 2, 'user', 'And the weather?', { sessionId: 's2' }),
    turn('j', 3, 'assistant', 'Cold.', { sessionId: 's2', usedMemory: used({ personaIds: ['m1'] }) }),
    turn('k', 4, 'assistant', 'Remembered.', {
      sessionId: 's2',
      usedMemory: used({ memoryIds: ['m1'] }),
      command: { kind: 'recall', state: 'done' },
    }),
  ];
  const s3 = [
    turn('l', 0, 'assistant', 'Ingrid comes at Christmas, you said.', { sessionId: 's3', usedMemory: used({ segmentIds: ['seg2'] }) }),
  ];
  const all = [...s1, ...s2, ...s3];
  const segments: Segment[] = [
    ...buildSegments(s1, [{ first: 0, last: 5 }]),
    { ...buildSegments(s2, [{ first: 0, last: 3 }])[0], id: 'seg2' },
    ...buildSegments(s3, [{ first: 0, last: 0 }]),
  ];
  const drew = (t: Turn) => [...(t.usedMemory?.memoryIds ?? []), ...(t.usedMemory?.personaIds ?? []), ...(t.usedMemory?.segmentIds ?? [])];
  const lookups: string[] = [];
  const reads: ForgetReads = {
    memories: new Map([fact, copy, other].map((m) => [m.id, { ...m, sourceTurnIds: m.id === 'm3' ? ['a', 'c'] : ['a'] }])),
    getTurns: async (ids) => all.filter((t) => ids.includes(t.id)),
    listTurns: async (id) => all.filter((t) => t.sessionId === id),
    listTurnsDrewOn: async (id) => {
      lookups.push(id);
      return all.filter((t) => drew(t).includes(id));
    },
    listSegmentsOfTurn: async (id) => segments.filter((s) => s.turnIds.includes(id)),
  };

  it('takes the memory, its copies, its lines, the answers and replies that used or repeat it, through passages', async () => {
    const plan = await planForget(['m1'], reads);
    expect(plan.memories.map((m) => m.id)).toEqual(['m1', 'm2']);
    expect(plan.lines.map((t) => t.id).sort()).toEqual(['a', 'b', 'f', 'h', 'l']);
    expect(plan.passages.map((s) => s.id).sort()).toEqual([segments[0].id, 'seg2', segments[2].id].sort());
    expect(linesByChat(plan)).toEqual([
      { sessionId: 's1', yours: 1, replies: 2 },
      { sessionId: 's2', yours: 0, replies: 1 },
      { sessionId: 's3', yours: 0, replies: 1 },
    ]);
    const { forget, undo } = linePatches(plan, T);
    expect(forget[0]).toEqual({ id: plan.lines[0].id, forget: { at: T, by: ['m1', 'm2'] } });
    expect(undo[0]).toEqual({ id: plan.lines[0].id, unforget: ['m1', 'm2'] });
    // Lookups by id only: the memories and the passages found.
    expect(new Set(lookups)).toEqual(new Set(['m1', 'm2', segments[0].id, 'seg2', segments[2].id]));
  });

  // Each reply alone in its own chat, in no passage, so only what it drew on can bring it in: the
  // rule for replies found by the memory, not the rules for a line's chat or passages.
  describe('a reply found by the memory it drew on', () => {
    const plain = 'Cold, take a coat.';
    const alone = (id: string, text: string, u: Partial<UsedMemory>) =>
      turn(id, 1, 'assistant', text, { sessionId: `chat-${id}`, usedMemory: used(u) });
    const planOf = async (reply: Turn) => {
      const turns = [s1[0], s1[1], reply];
      const reads: ForgetReads = {
        memories: new Map([[fact.id, fact]]),
        getTurns: async (ids) => turns.filter((t) => ids.includes(t.id)),
        listTurns: async (id) => turns.filter((t) => t.sessionId === id),
        // What the store's index holds: every memory and passage a turn's usedMemory names.
        listTurnsDrewOn: async (id) => turns.filter((t) => turnSources(t).includes(id)),
        listSegmentsOfTurn: async () => [],
      };
      const plan = await planForget([fact.id], reads);
      return plan.lines.some((t) => t.id === reply.id);
    };

    it('goes, repeating the fact or not, when the memory was in a timeline it was told', async () => {
      const reply = alone('t', plain, {
        memoryIds: ['m9'],
        timelines: [{ memoryIds: ['m9', fact.id], relations: ['SameTopic'], through: 'm9' }],
      });
      expect(repeatsFact(reply.text, [fact.text])).toBe(false);
      expect(await planOf(reply)).toBe(true);
    });

    it('goes, repeating the fact or not, when the memory was shown to its reflection', async () => {
      const reply = alone('r', plain, { memoryIds: ['m9'], reflectedOn: [fact.id] });
      expect(repeatsFact(reply.text, [fact.text])).toBe(false);
      expect(await planOf(reply)).toBe(true);
    });

    it('with the memory only in the persona bank: goes when it repeats the fact, stays when it does not', async () => {
      const repeating = alone('p', 'Ingrid visits at Christmas, lovely.', { personaIds: [fact.id] });
      expect(repeatsFact(repeating.text, [fact.text])).toBe(true);
      expect(await planOf(repeating)).toBe(true);
      expect(await planOf(alone('q', plain, { personaIds: [fact.id] }))).toBe(false);
    });
  });
});
