import { describe, expect, it } from 'vitest';
import { overviewLabelOrder, placeLabels, type PlacedLabel } from '../../../src/viz/labels';

const overlap = (a: PlacedLabel<string>, b: PlacedLabel<string>): boolean =>
  a.left < b.left + b.width && b.left < a.left + a.width && a.top < b.top + b.height && b.top < a.top + a.height;

describe('placeLabels', () => {
  const stage = { width: 400, height: 300 };

  it('puts a label right of its point, or left of it near the right edge', () => {
    const [a, b] = placeLabels(
      [
        { key: 'a', x: 10, y: 50, text: 'left side' },
        { key: 'b', x: 390, y: 150, text: 'right side' },
      ],
      stage,
    );
    expect(a.left).toBeGreaterThan(10);
    expect(b.left + b.width).toBeLessThan(390);
  });

  it('moves a label above or below rather than over another, drops it when nothing is free', () => {
    const out = placeLabels(
      [
        { key: 'selected', x: 100, y: 100, text: 'the selected memory' },
        { key: 'neighbour', x: 110, y: 104, text: 'a neighbour right on top of it' },
        { key: 'far', x: 100, y: 200, text: 'a neighbour further down' },
        { key: 'bottom', x: 100, y: 299, text: 'at the bottom edge' },
      ],
      stage,
    );
    expect(out.map((l) => l.key)).toEqual(['selected', 'neighbour', 'far', 'bottom']);
    expect(out[3].top + out[3].height).toBeLessThanOrEqual(299);
    for (let i = 0; i < out.length; i++) for (let j = i + 1; j < out.length; j++) expect(overlap(out[i], out[j])).toBe(false);
    for (const l of out) {
      expect(l.left).toBeGreaterThanOrEqual(0);
      expect(l.left + l.width).toBeLessThanOrEqual(400);
    }
    const crowd = Array.from({ length: 40 }, (_, i) => ({ key: `n${i}`, x: 200, y: 150, text: 'the same place' }));
    expect(placeLabels(crowd, stage).length).toBeLessThanOrEqual(4);
  });

  it('always shows the first label, moved onto the stage', () => {
    const [only] = placeLabels([{ key: 'sel', x: 395, y: 299, text: 'a long label at the very corner of the stage' }], stage);
    expect(only.key).toBe('sel');
    expect(only.left + only.width).toBeLessThanOrEqual(400);
    expect(only.top + only.height).toBeLessThanOrEqual(300);
  });
});

describe('placeLabels: forms and obstacles', () => {
  const stage = { width: 400, height: 300 };
  it('shortens to whole words rather than cut a word, and keeps clear of the dots', () => {
    const dots = [{ left: 288, top: 88, width: 24, height: 24 }];
    const [l] = placeLabels([{ key: 'a', x: 100, y: 100, text: "You said: I'm thinking about adopting a cat named Miso" }], {
      ...stage,
      maxWidth: 220,
      obstacles: dots,
      forceFirst: false,
    });
    expect(l.whole).toBe(false);
    expect(l.text).toMatch(/^I'm thinking about adopting\b.*…$/);
    expect(l.left + l.width <= 288 || l.left >= 312 || l.top + l.height <= 88 || l.top >= 112).toBe(true);
    // Nothing fits and nothing is forced: no label.
    expect(
      placeLabels([{ key: 'b', x: 100, y: 100, text: 'A long enough memory text' }], { ...stage, maxWidth: 20, forceFirst: false }),
    ).toEqual([]);
  });
});

describe('overviewLabelOrder', () => {
  it('takes the best connected and the most recent in turn, each once', () => {
    const nodes = [
      { id: 'hub', degree: 9, time: 1 },
      { id: 'new', degree: 0, time: 9 },
      { id: 'mid', degree: 3, time: 5 },
      { id: 'old', degree: 0, time: 0 },
    ];
    expect(overviewLabelOrder(nodes)).toEqual(['hub', 'new', 'mid', 'old']);
    expect(overviewLabelOrder(nodes, 2)).toEqual(['hub', 'new']);
  });
});
