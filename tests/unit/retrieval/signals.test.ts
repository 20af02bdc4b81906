// The retrieval signals: speaker-aware search, pseudo-relevance feedback, query
// routing, segment excerpts, and the turn search that switches them.
import { describe, expect, it } from 'vitest';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { LexicalIndex } from '../../../src/memory/retrieval/lexical';
import { allowedSubjects, namedSubjects } from '../../../src/memory/retrieval/speakers';
import { fuseRankings, withFeedback } from '../../../src/memory/retrieval/feedback';
import { queryType } from '../../../src/memory/retrieval/query-type';
import { segmentExcerpt } from '../../../src/memory/retrieval/excerpt';
import { memoriesFirst, searchForTurn, type RetrievalSignals } from '../../../src/memory/retrieval/turn-search';
import type { IndexedUnit, SearchHit } from '../../../src/memory/retrieval/types';

const u = (id: string, text: string, subject?: string, kind: IndexedUnit['kind'] = 'memory'): IndexedUnit => ({
  id,
  kind,
  text,
  time: 0,
  sessionId: 's',
  sourceTurnIds: [`t-${id}`],
  ...(subject ? { subject } : {}),
});
const hit = (unit: IndexedUnit): SearchHit => ({ unit, score: { unitId: unit.id, unitKind: unit.kind, fused: 0 } });
const OFF: RetrievalSignals = { speakerAware: false, feedback: false, routing: false };

describe('speaker-aware retrieval', () => {
  it('finds the known subjects a query names, as whole words, possessives included', () => {
    const subjects = ['Melanie', 'Caroline', 'user', 'assistant'];
    expect([...namedSubjects("What do Melanie's kids like?", subjects)]).toEqual(['melanie']);
    expect([...namedSubjects('Did Caroline and melanie both paint?', subjects)].sort()).toEqual(['caroline', 'melanie']);
    expect(namedSubjects('What is Melanies favourite?', subjects).size).toBe(0);
    // Roles are never matched in a query.
    expect(namedSubjects('what did the user say', subjects).size).toBe(0);
  });

  it('allows the named people and the roles, or everyone when nobody (or everybody) is named', () => {
    const subjects = ['Melanie', 'Caroline', 'user'];
    expect([...allowedSubjects('What does Melanie do to destress?', subjects)!].sort()).toEqual(['assistant', 'melanie', 'user']);
    expect(allowedSubjects('What do they both like?', subjects)).toBeUndefined();
    expect(allowedSubjects('Did Caroline and Melanie both paint?', subjects)).toBeUndefined();
  });

  it('the index counts subjects on upsert and removal, and a subjects filter leaves out the others', () => {
    const ix = createHybridIndex();
    ix.upsert(u('m1', 'Melanie paints sunsets', 'Melanie'));
    ix.upsert(u('c1', 'Caroline paints murals', 'Caroline'));
    ix.upsert(u('s1', 'Melanie: I paint. Caroline: me too', undefined, 'segment'));
    expect([...ix.subjects()].sort()).toEqual(['Caroline', 'Melanie']);
    const ids = ix
      .search('paint', undefined, 10, { subjects: new Set(['melanie']) })
      .map((h) => h.unit.id)
      .sort();
    expect(ids).toEqual(['m1', 's1']);
    ix.upsert(u('c1', 'Caroline paints murals', 'Melanie'));
    expect([...ix.subjects()]).toEqual(['Melanie']);
    ix.remove('c1');
    ix.remove('m1');
    expect(ix.subjects()).toEqual([]);
  });

  it('searchForTurn applies it only when switched on', () => {
    const ix = createHybridIndex();
    ix.upsert(u('m1', 'Melanie went camping', 'Melanie'));
    ix.upsert(u('c1', 'Caroline went camping with Melanie', 'Caroline'));
    const q = { index: ix, query: 'Where did Melanie go camping?', k: 10, kinds: ['memory' as const] };
    expect(
      searchForTurn({ ...q, signals: OFF })
        .map((h) => h.unit.id)
        .sort(),
    ).toEqual(['c1', 'm1']);
    expect(searchForTurn({ ...q, signals: { ...OFF, speakerAware: true } }).map((h) => h.unit.id)).toEqual(['m1']);
  });
});

describe('pseudo-relevance feedback', () => {
  it('feedback terms: weighted by tf / length x idf, query terms and terms of one document left out', () => {
    const lx = new LexicalIndex();
    lx.add('a', 'pottery class pottery bowl');
    lx.add('b', 'pottery bowl kiln');
    lx.add('c', 'camping trip');
    lx.add('d', 'camping with kids and a bowl');
    const terms = lx.feedbackTerms(['a', 'b'], new Set(['class']), 5);
    // "kiln" is in b only, "class" is a query term; pottery (tf 2 in a) outweighs bowl.
    expect(terms).toEqual(['pottery', 'bowl']);
    expect(lx.feedbackTerms(['nope'], new Set(), 5)).toEqual([]);
  });

  it('fuses by rank: a unit both rankings hold beats one only the second holds', () => {
    const [a, b, c] = [u('a', 'x'), u('b', 'y'), u('c', 'z')].map(hit) as [SearchHit, SearchHit, SearchHit];
    expect(
      fuseRankings(
        [
          [a, b],
          [c, b],
        ],
        10,
      ).map((h) => h.unit.id),
    ).toEqual(['b', 'a', 'c']);
    expect(
      fuseRankings(
        [
          [a, b],
          [c, b],
        ],
        1,
      ),
    ).toHaveLength(1);
  });

  it('a feedback query reaches a unit that shares no word with the question', () => {
    const ix = createHybridIndex();
    ix.upsert(u('hit', 'Melanie destresses with pottery class'));
    ix.upsert(u('far', 'a pottery class made a bowl'));
    ix.upsert(u('other', 'the weather was grey'));
    const first = ix.search('destress', undefined, 10);
    expect(first.map((h) => h.unit.id)).toEqual(['hit']);
    const fused = withFeedback(ix, 'destress', undefined, first, 10, {}, { docs: 1, terms: 5 });
    expect(fused.map((h) => h.unit.id)).toEqual(['hit', 'far']);
  });
});

describe('query routing', () => {
  it('hypothetical questions are told apart by their modal words', () => {
    expect(queryType('Would Melanie prefer a national park or a theme park?')).toBe('hypothetical');
    expect(queryType("What would Caroline's political leaning likely be?")).toBe('hypothetical');
    expect(queryType('When did Melanie paint a sunrise?')).toBe('other');
  });

  it('memories first, each kind keeping its order', () => {
    const hits = [u('s1', 'a', undefined, 'segment'), u('m1', 'b'), u('s2', 'c', undefined, 'segment'), u('m2', 'd')].map(hit);
    expect(memoriesFirst(hits).map((h) => h.unit.id)).toEqual(['m1', 'm2', 's1', 's2']);
  });
});

describe('segment excerpts', () => {
  const text = [
    'Mel: Hi there!',
    'Caro: How was the weekend?',
    'Mel: We went camping by the lake.',
    'Caro: Lovely.',
    'Mel: Also bought paint.',
    'Caro: Nice colours.',
  ].join('\n');
  const ids = ['t1', 't2', 't3', 't4', 't5', 't6'];

  it('keeps the matching turns and their neighbours, gaps marked', () => {
    const e = segmentExcerpt(text, ids, 'Where did Mel go camping?')!;
    expect(e.turnIds).toEqual(['t2', 't3', 't4']);
    expect(e.text).toBe('Caro: How was the weekend?\nMel: We went camping by the lake.\nCaro: Lovely.');
    const two = segmentExcerpt(text, ids, 'camping and hi', 0)!;
    expect(two.turnIds).toEqual(['t3']);
    expect(segmentExcerpt(text, ids, 'camping paint', 0)!.text).toBe('Mel: We went camping by the lake.\n...\nMel: Also bought paint.');
  });

  it('a speaker name matches no line; no match, nothing cut or misaligned lines leave the segment whole', () => {
    expect(segmentExcerpt(text, ids, 'What did Mel say?')).toBeUndefined();
    expect(segmentExcerpt(text, ids, 'quantum physics')).toBeUndefined();
    expect(segmentExcerpt(text, ids, 'weekend camping lovely paint colours hi', 1)).toBeUndefined();
    expect(segmentExcerpt(text, ids.slice(1), 'camping')).toBeUndefined();
  });
});
