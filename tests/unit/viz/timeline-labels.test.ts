// Timeline labels: right of the dot in the room before the next one; the last dot of a row at the
// stage's right edge labels to its left, and its neighbour leaves it half of the gap.
import { describe, expect, it } from 'vitest';
import { timelineLabel } from '../../../src/viz/timeline-labels';
import { layoutLanes, threads } from '../../../src/viz/lanes';
import { DAY, edge, mem } from './fixtures';

const view = (width: number, k = 1, x0 = 0) => ({ k, sx: (x: number) => k * x + x0, width });
const node = (x: number, gapAfter: number, gapBefore: number, nextIsLast = false) => ({ x, gapAfter, gapBefore, nextIsLast });

describe('timelineLabel', () => {
  it('goes right, as long as the room before the next dot or the stage edge allows', () => {
    expect(timelineLabel(node(0, 200, Infinity), view(1000))).toEqual({ chars: Math.floor(184 / 6.4), side: 'right' });
    expect(timelineLabel(node(0, 2000, Infinity), view(1000))).toEqual({ chars: 56, side: 'right' });
    // Too little room: no label rather than one cut to a few letters.
    expect(timelineLabel(node(0, 60, Infinity), view(1000))).toBeNull();
    // Zoom widens the gaps.
    expect(timelineLabel(node(0, 60, Infinity), view(1000, 3))).toEqual({ chars: Math.floor(164 / 6.4), side: 'right' });
  });

  it('the last dot at the right edge labels to its left, in half of the gap; its neighbour keeps the other half', () => {
    const last = node(990, Infinity, 600);
    expect(timelineLabel(last, view(1000))).toEqual({ chars: Math.floor((300 - 16) / 6.4), side: 'left' });
    const before = node(390, 600, Infinity, true);
    expect(timelineLabel(before, view(1000))).toEqual({ chars: Math.floor((300 - 16) / 6.4), side: 'right' });
    // Not at the edge: the last dot labels right, and its neighbour has the whole gap.
    expect(timelineLabel(node(700, Infinity, 300), view(1000))).toEqual({ chars: Math.floor(284 / 6.4), side: 'right' });
    expect(timelineLabel(node(400, 300, Infinity, true), view(1000))).toEqual({ chars: Math.floor(284 / 6.4), side: 'right' });
    // A last dot at the edge with a close neighbour: no room on either side.
    expect(timelineLabel(node(990, Infinity, 100), view(1000))).toBeNull();
  });

  it('the layout says which dot comes last in its row and the gap before each', () => {
    const memories = [mem('a', 1 * DAY), mem('b', 31 * DAY), mem('c', 61 * DAY)];
    const layout = layoutLanes(threads(memories, [edge('1', 'a', 'b'), edge('2', 'b', 'c')]), { width: 1000, laneHeight: 20 });
    const nodes = layout.nodes.filter((n) => n.row === 0).sort((a, b) => a.x - b.x);
    expect(nodes.length).toBe(3);
    expect(nodes.map((n) => n.nextIsLast)).toEqual([false, true, false]);
    expect(nodes[0].gapBefore).toBe(Infinity);
    expect(nodes[1].gapBefore).toBe(nodes[0].gapAfter);
    expect(nodes[2].gapBefore).toBe(nodes[1].gapAfter);
    expect(nodes[2].gapAfter).toBe(Infinity);
  });
});
