import { describe, expect, it } from 'vitest';
import { runForceLayout } from '../../../src/viz/force';
import { DAY, edge, mem } from './fixtures';

describe('runForceLayout', () => {
  const memories = Array.from({ length: 30 }, (_, i) => mem(`m${i}`, i * DAY));
  const edges = Array.from({ length: 29 }, (_, i) => edge(`e${i}`, `m${i}`, `m${i + 1}`));

  it('is deterministic for a seed and gives finite positions', () => {
    const a = runForceLayout(memories, edges, { width: 800, height: 600, ticks: 120, seed: 7 });
    const b = runForceLayout(memories, edges, { width: 800, height: 600, ticks: 120, seed: 7 });
    expect(a.nodes.map((n) => [n.x, n.y])).toEqual(b.nodes.map((n) => [n.x, n.y]));
    for (const n of a.nodes) {
      expect(Number.isFinite(n.x) && Number.isFinite(n.y)).toBe(true);
    }
    expect(a.links).toHaveLength(29);
  });

  it('keeps linked memories closer than unlinked ones', () => {
    const { nodes } = runForceLayout(memories, edges, { width: 800, height: 600, ticks: 200 });
    const d = (i: number, j: number): number => Math.hypot(nodes[i].x - nodes[j].x, nodes[i].y - nodes[j].y);
    const linked = edges.map((_, i) => d(i, i + 1)).reduce((s, v) => s + v, 0) / edges.length;
    expect(linked).toBeLessThan(d(0, 29));
  });
});
