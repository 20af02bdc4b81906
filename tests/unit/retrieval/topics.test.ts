// LD-Agent's topic nouns (seed 001, eq. 1): the overlap score, the noun index, its fusion into the
// hybrid search behind the switch, and the real part-of-speech tagger that feeds it.
import { beforeAll, describe, expect, it } from 'vitest';
import { TopicIndex, topicOverlap, type NounExtractor } from '../../../src/memory/retrieval/topics';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { searchForTurn } from '../../../src/memory/retrieval/turn-search';
import { loadNounExtractor } from '../../../src/models/nouns';
import type { IndexedUnit } from '../../../src/memory/retrieval/types';

const unit = (id: string, text: string): IndexedUnit => ({ id, kind: 'memory', text, time: 0, sessionId: 's', sourceTurnIds: [] });

describe('topicOverlap (eq. 1)', () => {
  it('averages the shared share of the query and of the unit', () => {
    // Query {pottery, class}; memory {pottery, class, kid, sunset}: (2/2 + 2/4) / 2.
    expect(topicOverlap(new Set(['pottery', 'class']), new Set(['pottery', 'class', 'kid', 'sunset']))).toBe(0.75);
    expect(topicOverlap(new Set(['pottery']), new Set(['pottery']))).toBe(1);
    expect(topicOverlap(new Set(['pottery']), new Set(['dog']))).toBe(0);
    expect(topicOverlap(new Set(), new Set(['dog']))).toBe(0);
    expect(topicOverlap(new Set(['dog']), new Set())).toBe(0);
  });
});

describe('TopicIndex', () => {
  it('ranks the units sharing a noun by overlap, ties by id; removed and replaced units follow', () => {
    const ix = new TopicIndex();
    ix.add('a', ['pottery', 'class', 'kid', 'sunset']);
    ix.add('b', ['pottery', 'class']);
    ix.add('c', ['dog', 'park']);
    ix.add('d', ['pottery', 'wheel']);
    expect(ix.search(['pottery', 'class'], 10).map((h) => [h.id, h.score])).toEqual([
      ['b', 1],
      ['a', 0.75],
      ['d', 0.5],
    ]);
    expect(ix.search(['pottery', 'class'], 10, (id) => id !== 'b').map((h) => h.id)).toEqual(['a', 'd']);
    ix.remove('b');
    ix.add('d', ['dog']);
    expect(ix.search(['pottery', 'class'], 10).map((h) => h.id)).toEqual(['a']);
    expect(ix.search(['dog'], 10).map((h) => h.id)).toEqual(['d', 'c']);
    expect(ix.size).toBe(3);
    ix.add('c', []);
    expect(ix.size).toBe(2);
    expect(ix.search(['park'], 10)).toEqual([]);
  });

  it('a noun more than half of the units carry names no topic, in the query or the unit', () => {
    const ix = new TopicIndex();
    for (let i = 0; i < 9; i++) ix.add(`u${i}`, ['user', i === 0 ? 'guitar' : `thing${i}`]);
    ix.add('x', ['guitar', 'lesson']);
    // "user" is in 9 of 10 units: the query "user guitar" is about the guitar only.
    const hits = ix.search(['user', 'guitar'], 10);
    expect(hits.map((h) => [h.id, h.score])).toEqual([
      ['u0', 1],
      ['x', 0.75],
    ]);
    // A small index keeps every noun: with four units, "user" still counts.
    const small = new TopicIndex();
    for (let i = 0; i < 4; i++) small.add(`u${i}`, ['user']);
    expect(small.search(['user'], 10)).toHaveLength(4);
  });
});

describe('the topic-nouns switch in the hybrid search', () => {
  let nouns: NounExtractor;
  beforeAll(async () => {
    nouns = await loadNounExtractor();
  });

  it('the tagger gives lower-cased noun lemmas, names included, and no pronouns or verbs', () => {
    expect(nouns('Melanie signed up for a pottery class and painted a sunset with her kids.')).toEqual([
      'melanie',
      'pottery',
      'class',
      'sunset',
      'kid',
    ]);
    expect(nouns('What activities does Melanie partake in?')).toEqual(['activity', 'melanie']);
    expect(nouns('She went there with them.')).toEqual([]);
  });

  it('on, a memory whose noun the query names in another form is found; off, the search is as without nouns', () => {
    const units = [
      unit('m1', 'Her child starts school in September.'),
      unit('m2', 'She painted the fence green.'),
      unit('m3', 'The fence needs paint.'),
    ];
    const withNouns = createHybridIndex({ nouns });
    const plain = createHybridIndex();
    for (const u of units) {
      withNouns.upsert(u);
      plain.upsert(u);
    }
    const query = 'How are the children doing?';
    // "children" shares no index term with "child" (the stemmer folds regular endings only).
    expect(plain.search(query, undefined, 5).map((h) => h.unit.id)).toEqual([]);
    const off = { speakerAware: false, feedback: false, routing: false, topics: false };
    expect(searchForTurn({ index: withNouns, query, k: 5, kinds: ['memory'], signals: off })).toEqual([]);
    const on = searchForTurn({ index: withNouns, query, k: 5, kinds: ['memory'], signals: { ...off, topics: true } });
    expect(on.map((h) => h.unit.id)).toEqual(['m1']);
    // {child} against {child, school, september}: (1/1 + 1/3) / 2.
    expect(on[0].score).toMatchObject({ topic: (1 + 1 / 3) / 2, topicRank: 1 });
    // An index built without nouns ignores the switch.
    expect(searchForTurn({ index: plain, query, k: 5, kinds: ['memory'], signals: { ...off, topics: true } })).toEqual([]);
    // Removed units leave the topic side too.
    withNouns.remove('m1');
    expect(searchForTurn({ index: withNouns, query, k: 5, kinds: ['memory'], signals: { ...off, topics: true } })).toEqual([]);
  });

  it("a subject's name in the query is not a topic: it would match every memory of that person", () => {
    const index = createHybridIndex({ nouns });
    index.upsert({ ...unit('m1', 'Melanie ran a charity race.'), subject: 'Melanie' });
    index.upsert({ ...unit('m2', 'Melanie has two children.'), subject: 'Melanie' });
    index.upsert({ ...unit('m3', 'Caroline visited a museum.'), subject: 'Caroline' });
    const topical = (q: string) =>
      index
        .search(q, undefined, 5, { topics: true })
        .filter((h) => h.score.topic !== undefined)
        .map((h) => h.unit.id);
    expect(topical('How many children does Melanie have?')).toEqual(['m2']);
    expect(topical('What did Melanie do?')).toEqual([]);
  });
});
