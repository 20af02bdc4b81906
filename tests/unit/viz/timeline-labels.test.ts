// Timeline labels: in priority order, each right or left of its dot in the room its row leaves;
// no two label boxes and no label and dot target intersect; a label is whole words or not shown.
import { describe, expect, it } from 'vitest';
import { dotBox, labelPriority, placeTimelineLabels, targetAt, type Box } from '../../../src/viz/timeline-labels';
import { estimateWidth } from '../../../src/viz/label-text';

const measure = estimateWidth(6.4);
const intersects = (a: Box, b: Box) =>
  a.left < b.left + b.width && b.left < a.left + a.width && a.top < b.top + b.height && b.top < a.top + a.height;

// One row of a busy week: dots 30 to 60 px apart, each memory a long "You said: ..." sentence.
const TEXTS = [
  "You said: I'm thinking about adopting a cat named Miso",
  'You said: They offered 66k plus relocation to Lisbon',
  "You said: I'm training for a half marathon in October",
  'You said: My sister Ana is visiting in May',
  'You said: I started learning the cello with Mrs Okafor',
  'You said: The tomato plants finally have flowers',
];
const row = TEXTS.map((text, i) => ({ key: `m${i}`, x: 40 + [0, 150, 300, 420, 560, 820][i], y: 50, text }));
const stage = { width: 900, height: 200, measure };

/** The shortcut: each label right of its dot, whole, in time order, cut to the room before the next dot. */
function greedyByTime() {
  return row.map((c, i) => {
    const room = (row[i + 1]?.x ?? stage.width) - c.x - 16;
    const chars = Math.floor(room / 6.4);
    const text = c.text.length <= chars ? c.text : `${c.text.slice(0, Math.max(0, chars - 1))}…`;
    return { key: c.key, text, left: c.x + 8, top: 38, width: measure(c.text), height: 24 };
  });
}

describe('placeTimelineLabels', () => {
  it('the greedy-by-time shortcut overlaps and cuts words; the placement does neither', () => {
    const shortcut = greedyByTime();
    expect(shortcut.some((a, i) => shortcut.some((b, j) => i < j && intersects(a, b)))).toBe(true);
    expect(shortcut.some((l) => /\w…$/.test(l.text) && !TEXTS.some((t) => new RegExp(`\\b${l.text.slice(0, -1)}\\b`).test(t)))).toBe(true);

    const placed = placeTimelineLabels(row, row, stage);
    expect(placed.length).toBeGreaterThanOrEqual(3);
    const dots = row.map((d) => dotBox(d.x, d.y));
    for (const [i, a] of placed.entries()) {
      for (const b of placed.slice(i + 1)) expect(intersects(a, b), `${a.text} / ${b.text}`).toBe(false);
      for (const [j, d] of dots.entries()) if (row[j].key !== a.key) expect(intersects(a, d), `${a.text} over ${row[j].key}`).toBe(false);
      expect(a.left).toBeGreaterThanOrEqual(0);
      expect(a.left + a.width).toBeLessThanOrEqual(stage.width);
      expect(a.height).toBeGreaterThanOrEqual(24);
      // Whole words of its memory: the text itself, or a title ending on a whole word.
      const full = row.find((c) => c.key === a.key)!.text;
      const body = a.text.replace(/…$/, '');
      expect(full.includes(body) || full.replace('You said: ', '').includes(body.replace(/^./, (c) => c.toLowerCase()))).toBe(true);
      if (a.text.endsWith('…')) expect(new RegExp(`${body.split(' ').at(-1)}(\\s|$)`).test(full)).toBe(true);
    }
  });

  it('places in priority order: the first candidate gets the label it would have alone', () => {
    for (const c of row) {
      const alone = placeTimelineLabels([c], row, stage)[0];
      if (!alone) continue;
      const first = placeTimelineLabels([c, ...row.filter((o) => o !== c)], row, stage);
      expect(first[0]).toEqual(alone);
    }
  });

  it('goes left of the dot when the right has no room, and leaves a label out rather than cut it', () => {
    const edge = [{ key: 'end', x: 890, y: 50, text: 'You said: I moved to Porto last spring' }];
    const [l] = placeTimelineLabels(edge, edge, stage);
    expect(l.side).toBe('left');
    expect(l.left + l.width).toBeLessThanOrEqual(890 - 12);
    const tight = [
      { key: 'a', x: 100, y: 50, text: 'You said: something long enough to need room' },
      { key: 'b', x: 124, y: 50, text: 'x' },
      { key: 'c', x: 76, y: 50, text: 'y' },
    ];
    expect(placeTimelineLabels(tight.slice(0, 1), tight, { ...stage, tiers: 0 })).toEqual([]);
    // With tiers, it goes under the row, joined to its dot.
    const [under] = placeTimelineLabels(tight.slice(0, 1), tight, stage);
    expect(under.side).toBe('below');
    expect(under.top).toBeGreaterThanOrEqual(50 + 12);
    expect(under.left).toBeGreaterThan(100);
  });

  it('one row of 23 dots 55 px apart (no room in the row): labels in tiers, none over another or a dot', () => {
    const dots = Array.from({ length: 23 }, (_, i) => ({
      key: `d${i}`,
      x: 20 + i * 55,
      y: 40,
      text: `You said: ${TEXTS[i % 6].slice(10)}`,
    }));
    const wide = { width: 1280, height: 400, measure };
    const placed = placeTimelineLabels(dots, dots, wide);
    expect(placed.length).toBeGreaterThanOrEqual(15);
    const boxes = dots.map((d) => dotBox(d.x, d.y));
    for (const [i, a] of placed.entries()) {
      for (const b of placed.slice(i + 1)) expect(intersects(a, b)).toBe(false);
      for (const b of boxes) expect(intersects(a, b)).toBe(false);
      expect(a.top + a.height).toBeLessThanOrEqual(400);
    }
  });
});

describe('targetAt', () => {
  it('a click on a label is its memory; on a dot, within its 24 px square', () => {
    const placed = placeTimelineLabels(row.slice(5), row, stage);
    const l = placed[0];
    expect(targetAt(l.left + l.width - 2, l.top + 3, placed, row)).toBe('m5');
    expect(targetAt(row[0].x + 11, row[0].y - 11, placed, row)).toBe('m0');
    expect(targetAt(row[0].x + 13, row[0].y, placed, row)).toBeNull();
  });
});

describe('labelPriority', () => {
  it('selection, matches, each thread newest, then best connected, then most recent', () => {
    const nodes = [
      { id: 'a', lane: 0, time: 1 },
      { id: 'b', lane: 0, time: 5 },
      { id: 'c', lane: 1, time: 2 },
      { id: 'd', lane: 1, time: 3 },
      { id: 'e', lane: 1, time: 1 },
      { id: 'f', lane: 1, time: 0 },
    ];
    const degree = (id: string) => (id === 'f' ? 4 : 0);
    expect(labelPriority({ nodes, selected: 'e', hits: ['c', 'zz'], degree })).toEqual(['e', 'c', 'b', 'd', 'f', 'a']);
  });
});
