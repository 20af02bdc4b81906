// The explorer's search by meaning: memories only, close enough only, best first; null without a
// memory search model (the explorer then says it searched by words only).
import { describe, expect, it } from 'vitest';
import { createHybridIndex } from '../../../src/memory/retrieval/hybrid';
import { MEANING_MIN, searchByMeaning } from '../../../src/services/explorer/meaning-search';
import type { Embedder } from '../../../src/ports';

const unit = (a: number, b: number) => {
  const n = Math.hypot(a, b);
  return new Float32Array([a / n, b / n]);
};
const VECTORS: Record<string, Float32Array> = { kitten: unit(1, 0.1), cat: unit(1, 0), job: unit(0, 1) };
const embedder: Embedder = { modelId: 'test', dimension: 2, embed: async (texts) => texts.map((t) => VECTORS[t] ?? unit(1, 1)) };

function index() {
  const idx = createHybridIndex();
  const add = (id: string, kind: 'memory' | 'segment', text: string, v: Float32Array) =>
    idx.upsert({ id, kind, text, time: 0, sessionId: 's', sourceTurnIds: [] }, v);
  add('miso', 'memory', 'I adopted a kitten named Miso', unit(1, 0.1));
  add('offer', 'memory', 'They offered 66k plus relocation', unit(0.1, 1));
  add('seg', 'segment', 'a passage about a kitten', unit(1, 0.05));
  return idx;
}

describe('searchByMeaning', () => {
  it('finds memories close in meaning, not passages, not the unrelated', async () => {
    const hits = (await searchByMeaning(index(), embedder, 'cat'))!;
    expect(hits.map((h) => h.id)).toEqual(['miso']);
    expect(hits[0].score).toBeGreaterThanOrEqual(MEANING_MIN);
  });

  it('is null without a memory search model, empty for an empty query', async () => {
    expect(await searchByMeaning(index(), undefined, 'cat')).toBeNull();
    expect(await searchByMeaning(index(), embedder, '  ')).toEqual([]);
  });
});
