import { describe, expect, it } from 'vitest';
import {
  chipWords,
  passageLines,
  promptContents,
  toldAnything,
  recallKind,
  recallWords,
  reflectionState,
  reflectionWords,
  scoreWords,
  type ReflectionState,
} from '../../../src/app/chat/remembered';
import type { UsedMemory } from '../../../src/memory/types';

describe('passageLines', () => {
  it('names the speakers and drops markdown marks and role prefixes', () => {
    const lines = passageLines('user: I **love** my `bike`\nassistant: Great! Some tips:\n- check the *tyres*\nuser: thanks');
    expect(lines).toEqual([
      { speaker: 'You', text: 'I love my bike' },
      { speaker: 'Tealeaf', text: 'Great! Some tips:\n• check the tyres' },
      { speaker: 'You', text: 'thanks' },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/user:|assistant:|\*\*|`/);
  });

  it('keeps the names of imported conversations and cuts long passages', () => {
    expect(passageLines('Caroline: I went to a support group\nMelanie: How was it?')).toEqual([
      { speaker: 'Caroline', text: 'I went to a support group' },
      { speaker: 'Melanie', text: 'How was it?' },
    ]);
    const long = passageLines(`user: ${'word '.repeat(400)}`, 100);
    expect(long).toHaveLength(1);
    expect(long[0].text.length).toBeLessThanOrEqual(101);
    expect(long[0].text.endsWith('…')).toBe(true);
  });
});

describe('scoreWords', () => {
  it('says which signals matched, in words', () => {
    expect(scoreWords({ unitId: 'm', unitKind: 'memory', lexical: 0.4213, fused: 0.0328 })).toBe('same words 0.42 · overall 0.033');
    expect(scoreWords({ unitId: 'm', unitKind: 'memory', lexical: 1, dense: 0.5, fused: 0.1 })).toBe(
      'same words 1.00 · similar meaning 0.50 · overall 0.100',
    );
    expect(scoreWords({ unitId: 'm', unitKind: 'memory', topic: 2 / 3, topicRank: 1, fused: 0.016 })).toBe(
      'shared topics 0.67 · overall 0.016',
    );
  });
});

describe('reflectionWords', () => {
  // Every stored shape, and the one sentence each state reads as.
  const cases: Array<[Pick<UsedMemory, 'reflected' | 'requery'>, ReflectionState, RegExp | undefined]> = [
    [{}, 'none', undefined],
    [{ reflected: 'enough' }, 'enough', /judged it enough to answer, so it did not search again/],
    [{ reflected: 'searched', requery: 'bike canal' }, 'searched', /not enough to answer, so it searched again for: bike canal$/],
    [{ reflected: 'searched' }, 'keywords-gone', /searched again; its keywords went with a memory that was changed or deleted/],
    [{ reflected: 'no-keywords' }, 'no-keywords', /not enough to answer, but had no keywords/],
    [{ requery: 'bike canal' }, 'older-search', /matched nothing remembered at first, so Tealeaf searched again for: bike canal$/],
  ];
  it.each(cases)('%j is %s', (used, state, words) => {
    expect(reflectionState(used)).toBe(state);
    const said = reflectionWords(used);
    if (words) expect(said).toMatch(words);
    else expect(said).toBeUndefined();
  });

  it('says something different for every state', () => {
    const said = cases.map(([u]) => reflectionWords(u));
    expect(new Set(said).size).toBe(cases.length);
  });
});

describe('recallKind and recallWords', () => {
  const score = (extra: object) => ({ unitId: 'm', unitKind: 'memory' as const, fused: 0.03, ...extra });

  it('reads from the stored scores whether vectors were searched: one meaning part anywhere is enough', () => {
    expect(recallKind({ scores: [] })).toBeUndefined();
    expect(recallKind({ scores: [score({ lexical: 0.9 }), score({ lexical: 0.4, topic: 0.5 })] })).toBe('words');
    // The best unit matched by words only; a later one had a meaning part: vectors were searched.
    expect(recallKind({ scores: [score({ lexical: 0.9 }), score({ dense: 0.2 })] })).toBe('meaning');
    // A meaning score of 0 is still a meaning score.
    expect(recallKind({ scores: [score({ dense: 0 })] })).toBe('meaning');
  });

  it('counts earlier turns of the chat by how they were found', () => {
    const ids = { earlierTurnIds: ['t2'] };
    expect(recallKind({ scores: [], ...ids, earlierBy: 'meaning' })).toBe('meaning');
    expect(recallKind({ scores: [], ...ids, earlierBy: 'words' })).toBe('words');
    expect(recallKind({ scores: [], ...ids })).toBe('words');
    expect(recallKind({ scores: [], ...ids, earlierBy: 'unread' })).toBe('unread');
    expect(recallKind({ scores: [score({ lexical: 0.9 })], ...ids, earlierBy: 'meaning' })).toBe('meaning');
    expect(recallKind({ scores: [score({ dense: 0.3 })], ...ids, earlierBy: 'words' })).toBe('meaning');
    // No earlier turn recalled: how the message was embedded says nothing.
    expect(recallKind({ scores: [], earlierBy: 'meaning' })).toBeUndefined();
    expect(recallWords('unread')).toMatchObject({
      chip: 'by words only',
      line: expect.stringMatching(/had not yet read the earlier messages/),
    });
  });

  it('says words only on the chip and in "why these", and names where to load the model', () => {
    expect(recallWords('words')).toEqual({
      chip: 'by words only',
      line: 'Found by words only: the memory search model was not loaded for this reply.',
      next: 'Load it in Models.',
    });
    const meaning = recallWords('meaning');
    expect(meaning.chip).toBeUndefined();
    expect(meaning.next).toBeUndefined();
    expect(meaning.line).toBe('Found by meaning and by words: the memory search model was in use.');
  });
});

describe('what the model was told', () => {
  const used = (extra: Partial<UsedMemory> = {}): UsedMemory => ({
    memoryIds: ['m1', 'm2', 'm3'],
    segmentIds: ['s1'],
    timelines: [{ memoryIds: ['m1', 'm2'], relations: ['Cause'], through: 'm1' }],
    scores: [],
    ...extra,
  });

  it('counts every kind in the prompt, facts about the person included, as the detail lists them', () => {
    const c = promptContents(used({ personaIds: ['t1', 't2'], earlierTurnIds: ['x'] }));
    expect(c.single).toEqual(['m3']);
    expect(c.persona).toEqual(['t1', 't2']);
    expect(chipWords(c)).toBe(
      'remembered: 1 timeline, 3 memories, 2 facts about you, 1 passage of past chats, 1 earlier message of this chat',
    );
  });

  it('a prompt with only facts about the person still shows the chip', () => {
    const only = used({ memoryIds: [], segmentIds: [], timelines: [], personaIds: ['t1'] });
    expect(toldAnything(only)).toBe(true);
    expect(chipWords(promptContents(only))).toBe('remembered: 1 fact about you');
    expect(toldAnything(used({ memoryIds: [], segmentIds: [], timelines: [] }))).toBe(false);
  });
});

describe('instructions are listed apart from facts about the person', () => {
  it('an instruction among personaIds counts as an instruction', () => {
    const used: UsedMemory = { memoryIds: [], segmentIds: [], timelines: [], scores: [], personaIds: ['t1', 'i1'] };
    const c = promptContents(used, (id) => (id === 'i1' ? 'instruction' : 'user-trait'));
    expect(c.persona).toEqual(['t1']);
    expect(c.instructions).toEqual(['i1']);
    expect(chipWords(c)).toBe('remembered: 1 fact about you, 1 instruction');
  });
});
