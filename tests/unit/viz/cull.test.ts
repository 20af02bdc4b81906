import { describe, expect, it } from 'vitest';
import { visibleEdges, visibleLanes, visibleNodes, type ScreenFrame } from '../../../src/viz/cull';
import type { LayoutEdge, LayoutLane, LayoutNode } from '../../../src/viz/lanes';

const node = (id: string, x: number, y: number): LayoutNode => ({
  id,
  x,
  y,
  lane: 0,
  row: 0,
  kind: 'event',
  superseded: false,
  time: 0,
  gapAfter: Infinity,
  gapBefore: Infinity,
  nextIsLast: false,
});
const edge = (id: string, x0: number, x1: number, y = 50): LayoutEdge => ({
  id,
  from: 'a',
  to: 'b',
  relation: 'SameTopic',
  source: { x: x0, y },
  target: { x: x1, y },
  points: [
    [x0, y],
    [x0, y],
    [x1, y],
    [x1, y],
  ],
  backward: false,
});
const lane = (id: string, y: number, height: number): LayoutLane => ({
  id,
  index: 0,
  y,
  height,
  label: id,
  rows: 1,
  memoryIds: [],
  lastActivity: 0,
  singletons: false,
});

// Zoomed in 2x and panned so layout x 100..300 fills a 400 px wide, 200 px high screen.
const frame: ScreenFrame = { k: 2, x: -200, ty: -100, width: 400, height: 200 };

describe('timeline culling', () => {
  it('keeps the nodes on screen and a margin around it, nothing further', () => {
    const nodes = [
      node('left-far', 50, 150),
      node('left-near', 85, 150),
      node('in', 200, 150),
      node('right-far', 330, 150),
      node('below', 200, 400),
    ];
    expect(visibleNodes(nodes, frame).map((n) => n.id)).toEqual(['left-near', 'in']);
  });

  it('keeps an edge that crosses the screen even when both ends are off it', () => {
    const edges = [edge('across', 0, 400, 150), edge('left', 0, 80, 150), edge('right', 320, 400, 150), edge('above', 150, 250, 0)];
    expect(visibleEdges(edges, frame).map((e) => e.id)).toEqual(['across']);
  });

  it('keeps the lanes that overlap the screen vertically', () => {
    const lanes = [lane('above', 0, 90), lane('top', 60, 50), lane('middle', 150, 40), lane('below', 310, 30)];
    expect(visibleLanes(lanes, frame).map((l) => l.id)).toEqual(['top', 'middle']);
  });
});
