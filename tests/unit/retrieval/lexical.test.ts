import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LexicalIndex } from '../../../src/memory/retrieval/lexical';
import { stem, tokenize } from '../../../src/memory/retrieval/text';

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
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 4 }), (ops, q) => {
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
      }),
      { numRuns: 200 },
    );
  });
});
