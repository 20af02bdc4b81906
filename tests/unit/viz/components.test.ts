// Components straight from the edges (viz/components.ts) against the memory graph's union-find.
import { describe, expect, it } from 'vitest';
import { MemoryGraph } from '../../../src/memory/graph';
import { seededRng } from '../../../src/memory/rng';
import type { Edge } from '../../../src/memory/types';
import { components } from '../../../src/viz/components';
import { edge, graphComponents, mem } from './fixtures';

describe('components', () => {
  it('equal the graph’s, with self-links, both directions, repeated pairs and edges to unknown memories', () => {
    const rng = seededRng(3);
    for (let round = 0; round < 300; round++) {
      const n = 1 + Math.floor(rng() * 15);
      const memories = Array.from({ length: n }, (_, i) => mem(`m${i}`, Math.floor(rng() * 4)));
      const pick = () => (rng() < 0.05 ? 'unknown' : `m${Math.floor(rng() * n)}`);
      const edges: Edge[] = Array.from({ length: Math.floor(rng() * n * 1.5) }, (_, k) => edge(`e${k}`, pick(), pick()));
      const known = edges.filter((e) => e.from !== 'unknown' && e.to !== 'unknown');
      expect(components(memories, edges)).toEqual(graphComponents(memories, MemoryGraph.from(memories, known)));
    }
  });

  it('one memory with 100,000 links is one component', () => {
    const n = 100_000;
    const memories = [mem('hub', 0), ...Array.from({ length: n }, (_, i) => mem(`m${i}`, i + 1)), mem('alone', 0)];
    const groups = components(
      memories,
      Array.from({ length: n }, (_, i) => edge(`e${i}`, 'hub', `m${i}`)),
    );
    expect(groups.map((g) => g.length)).toEqual([n + 1, 1]);
  });
});
