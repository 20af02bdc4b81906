import { describe, expect, it } from 'vitest';
import { fitTransform } from '../../../src/viz/fit';

const screen = (t: { k: number; x: number; y: number }, p: { x: number; y: number }) => ({ x: t.k * p.x + t.x, y: t.k * p.y + t.y });

describe('fitTransform', () => {
  it('puts every node inside the stage with the margin, centred', () => {
    const nodes = [
      { x: -100, y: 20 },
      { x: 300, y: 60 },
      { x: 50, y: -80 },
    ];
    const t = fitTransform(nodes, 800, 600, { pad: 40 });
    const pts = nodes.map((n) => screen(t, n));
    for (const p of pts) {
      expect(p.x).toBeGreaterThanOrEqual(40 - 1e-9);
      expect(p.x).toBeLessThanOrEqual(760 + 1e-9);
      expect(p.y).toBeGreaterThanOrEqual(40 - 1e-9);
      expect(p.y).toBeLessThanOrEqual(560 + 1e-9);
    }
    // The wider axis touches the margins: x spans 400 units into 720 px.
    expect(t.k).toBeCloseTo(720 / 400);
    expect(Math.min(...pts.map((p) => p.x))).toBeCloseTo(40);
    expect((Math.min(...pts.map((p) => p.y)) + Math.max(...pts.map((p) => p.y))) / 2).toBeCloseTo(300);
  });

  it('does not zoom in without bound on one node, nor out past the minimum', () => {
    expect(fitTransform([{ x: 5, y: 5 }], 800, 600).k).toBe(3);
    expect(
      fitTransform(
        [
          { x: 0, y: 0 },
          { x: 1e7, y: 0 },
        ],
        800,
        600,
      ).k,
    ).toBe(0.05);
  });

  it('is the identity with nothing to show or no stage', () => {
    expect(fitTransform([], 800, 600)).toEqual({ k: 1, x: 0, y: 0 });
    expect(fitTransform([{ x: 1, y: 1 }], 0, 600)).toEqual({ k: 1, x: 0, y: 0 });
  });
});
