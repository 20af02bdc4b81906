import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LexicalIndex } from '../../../src/memory/retrieval/lexical';
import { stem, tokenize } from '../../../src/memory/retrieval/tokenize';

describe('tokenize', () => {
  it('lowercases, drops stopwords and folds inflections', () => {
    expect(tokenize("Caroline's PAINTINGS of the lake")).toEqual([stem('caroline'), 'paint', stem('lake')]);
    expect(stem('paintings')).toBe(stem('painting'));
    expect(stem('painted')).toBe(stem('paints'));
    expect(stem('loved')).toBe(stem('love'));
    expect(stem('running')).toBe('run');
  });
});

describe('LexicalIndex (BM25)', () => {
  it('ranks the document with the rare query term first', () => {
    const ix = new LexicalIndex();
    ix.add('a', 'we went to the beach and the beach was sunny');
    ix.add('b', 'the beach again, the beach with friends');
    ix.add('c', 'the beach and a violin lesson');
    ix.add('d', 'beach beach beach beach');
    const hits = ix.search('beach violin', 4);
    expect(hits[0]!.id).toBe('c');
    expect(hits).toHaveLength(4);
  });

  it('prefers the shorter document for the same term frequency (length normalisation)', () => {
    const ix = new LexicalIndex();
    ix.add('long', 'pottery class ' + 'filler words about many other unrelated things '.repeat(5));
    ix.add('short', 'pottery class today');
    expect(ix.search('pottery', 2).map((h) => h.id)).toEqual(['short', 'long']);
  });

  it('applies the accept filter before taking the top k', () => {
    const ix = new LexicalIndex();
    for (let i = 0; i < 10; i++) ix.add(`d${i}`, `camping trip number ${i}`);
    const hits = ix.search('camping', 3, (id) => id.endsWith('7') || id.endsWith('8'));
    expect(hits.map((h) => h.id).sort()).toEqual(['d7', 'd8']);
  });

  it('incremental add/remove/replace scores exactly as a fresh build', () => {
    const vocab = ['apple', 'beach', 'camp', 'dog', 'paint', 'violin', 'school', 'run', 'book', 'lake'];
    const doc = fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 12 }).map((w) => w.join(' '));
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), id: fc.integer({ min: 0, max: 15 }), text: doc }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 15 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 60 }),
        fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 4 }),
        (ops, q) => {
          const inc = new LexicalIndex();
          const live = new Map<string, string>();
          for (const o of ops) {
            if (o.kind === 'add') {
              inc.add(`d${o.id}`, o.text);
              live.set(`d${o.id}`, o.text);
            } else {
              inc.remove(`d${o.id}`);
              live.delete(`d${o.id}`);
            }
          }
          const fresh = new LexicalIndex();
          for (const [id, text] of live) fresh.add(id, text);
          const query = q.join(' ');
          const a = inc.search(query, 20);
          const b = fresh.search(query, 20);
          expect(a.map((h) => h.id)).toEqual(b.map((h) => h.id));
          a.forEach((h, i) => expect(h.score).toBeCloseTo(b[i]!.score, 9));
          expect(inc.size).toBe(live.size);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('pruned top-k search returns exactly the exhaustive top-k (property)', () => {
    // A skewed vocabulary: a few words in most documents (long posting lists the pruning skips),
    // many rare ones; random adds, replacements and removals; random filters and k.
    const vocab = Array.from({ length: 40 }, (_, i) => `w${i}x`);
    const word = fc.integer({ min: 0, max: 999 }).map((x) => vocab[Math.floor((x * x) / 25000)]!);
    // Either Zipf-like words, or a few common words plus at most one rare one (where pruning bites).
    const rare = fc.integer({ min: 10, max: 15 }).map((i) => vocab[i]!);
    const common = fc.integer({ min: 0, max: 2 }).map((i) => vocab[i]!);
    const doc = fc
      .oneof(
        fc.array(word, { minLength: 1, maxLength: 10 }),
        fc.tuple(fc.array(common, { minLength: 1, maxLength: 6 }), fc.option(rare)).map(([c, r]) => (r ? [...c, r] : c)),
      )
      .map((w) => w.join(' '));
    const op = fc.oneof(
      { weight: 5, arbitrary: fc.record({ kind: fc.constant('add' as const), id: fc.integer({ min: 0, max: 300 }), text: doc }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 300 }) }) },
    );
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 400, size: 'max' }),
        fc.oneof(
          fc.array(word, { minLength: 1, maxLength: 8 }),
          fc
            .tuple(fc.array(rare, { minLength: 1, maxLength: 2 }), fc.array(common, { minLength: 1, maxLength: 3 }))
            .map(([r, c]) => [...r, ...c]),
        ),
        fc.integer({ min: 1, max: 12 }),
        fc.option(fc.integer({ min: 2, max: 5 })),
        (ops, q, k, modulo) => {
          const ix = new LexicalIndex();
          for (const o of ops) {
            if (o.kind === 'add') ix.add(`d${o.id}`, o.text);
            else ix.remove(`d${o.id}`);
          }
          const accept = modulo === null ? undefined : (id: string) => Number(id.slice(1)) % modulo !== 0;
          const tokens = ix.tokens(q.join(' '));
          const pruned = ix.searchTokens(tokens, k, accept);
          const exhaustive = ix.searchExhaustive(tokens, k, accept);
          expect(pruned).toEqual(exhaustive);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('pruning skips the long posting lists of common terms once the top k is decided', () => {
    const ix = new LexicalIndex();
    for (let i = 0; i < 2000; i++) ix.add(`d${i}`, `common words everywhere ${i % 7 === 0 ? `rare${i % 3}` : ''}`);
    const tokens = ix.tokens('rare1 common everywhere');
    // Same answer as the exhaustive scan ...
    expect(ix.searchTokens(tokens, 5)).toEqual(ix.searchExhaustive(tokens, 5));
    // Only the rare term's list was scanned, not the two lists of 2000 postings.
    expect(ix.lastScanned).toBe(ix.docFreq('rare1'));
    // ... and the rare-term documents win, the common terms only adding to their scores.
    expect(ix.searchTokens(tokens, 5).every((h) => Number(h.id.slice(1)) % 21 === 7 || Number(h.id.slice(1)) % 7 === 0)).toBe(true);
  });
});
