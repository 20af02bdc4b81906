import { describe, expect, it } from 'vitest';
import { TimelineViewport } from '../../../src/app/explorer/timeline/viewport.svelte';

function viewport(width = 1000, height = 400, contentHeight = 1000): TimelineViewport {
  const vp = new TimelineViewport();
  vp.width = width;
  vp.height = height;
  vp.contentHeight = contentHeight;
  return vp;
}

describe('TimelineViewport', () => {
  it('clamps the vertical pan between the first and the last lane', () => {
    const vp = viewport();
    expect(vp.clampY(50)).toBe(0);
    // 400 - 6 - 1000 - 12 = -618: the last lane's bottom at the stage's bottom, with air.
    expect(vp.clampY(-5000)).toBe(-618);
    expect(vp.clampY(-300)).toBe(-300);
    // Lanes shorter than the stage never move.
    expect(viewport(1000, 400, 100).clampY(-50)).toBe(0);
  });

  it('takes d3 zoom transforms, following a drag vertically and clamping it', () => {
    const vp = viewport();
    vp.zoomed({ k: 2, x: -100, y: 0 });
    expect([vp.k, vp.x, vp.y]).toEqual([2, -100, 0]);
    vp.zoomed({ k: 2, x: -120, y: -40 }); // a drag: x and y move together
    expect([vp.x, vp.y]).toEqual([-120, -40]);
    vp.zoomed({ k: 3, x: -200, y: 500 }); // a wheel zoom: the vertical pan stays
    expect(vp.y).toBe(-40);
    vp.zoomed({ k: 3, x: -200, y: -10_000 }); // a long drag down: clamped
    expect(vp.y).toBe(-618);
  });

  it('carries the asked-for vertical pan through d3 (which has no y of ours)', () => {
    const vp = viewport();
    const t = vp.request(4, -50, -200);
    expect(t).toEqual({ k: 4, x: -50, y: 0 });
    vp.zoomed(t);
    expect([vp.k, vp.x, vp.y]).toEqual([4, -50, -200]);
  });

  it('fit shows the whole time range from the top', () => {
    const vp = viewport();
    vp.zoomed(vp.request(8, -3000, -300));
    vp.zoomed(vp.fit());
    expect([vp.k, vp.x, vp.y]).toEqual([1, 0, 0]);
  });

  it('maps the zoom to the overview brush and back', () => {
    const vp = viewport();
    expect(vp.brushSelection()).toBeNull();
    vp.zoomed(vp.fromBrush(200, 450));
    expect(vp.k).toBeCloseTo(4);
    expect(vp.x).toBeCloseTo(-800);
    const sel = vp.brushSelection()!;
    expect(sel[0]).toBeCloseTo(200);
    expect(sel[1]).toBeCloseTo(450);
    vp.zoomed(vp.fromBrush(300, 301)); // a click on the overview: everything
    expect(vp.k).toBe(1);
  });

  it('reveal leaves a memory on screen alone and brings one off screen into view', () => {
    const vp = viewport();
    vp.zoomed(vp.request(4, -2000, 0));
    expect(vp.reveal(600, 100)).toBeNull(); // 4 * 600 - 2000 = 400: on screen
    const t = vp.reveal(300, 100)!; // at -800: centred
    vp.zoomed(t);
    expect(vp.sx(300)).toBeCloseTo(500);
    const down = vp.reveal(300, 900)!; // below the stage: scrolled to the middle (clamped)
    vp.zoomed(down);
    expect(900 + vp.ty).toBeGreaterThan(TimelineViewport.EDGE_Y);
    expect(900 + vp.ty).toBeLessThan(400 - TimelineViewport.EDGE_Y);
  });
});

describe('TimelineViewport keeps the view within the data', () => {
  it('never pans left of the first memory or right of the last', () => {
    const vp = viewport(1000, 400);
    expect(vp.clampX(300)).toBe(0);
    expect(vp.clampX(-5000, 4)).toBe(-3000);
    expect(vp.clampX(-1200, 4)).toBe(-1200);
    expect(vp.clampX(-10, 1)).toBe(0);
  });

  it('selecting a memory near an edge does not centre it on empty time', () => {
    const vp = viewport(1000, 400);
    // Unzoomed, the oldest memory sits at the left margin (x = 24): nothing moves.
    expect(vp.reveal(24, 100)).toBeNull();
    expect(vp.reveal(976, 100)).toBeNull();
    // Zoomed in on the middle, then the oldest memory: the view goes to the left end, no further.
    vp.zoomed(vp.request(4, -1500, 0));
    vp.zoomed(vp.reveal(24, 100)!);
    expect(vp.x).toBe(0);
    expect(vp.sx(24)).toBe(96);
    // And the newest: the right end.
    vp.zoomed(vp.reveal(976, 100)!);
    expect(vp.x).toBe(-3000);
    expect(vp.sx(976)).toBe(904);
    // A memory in the middle is still centred.
    vp.zoomed(vp.reveal(500, 100)!);
    expect(vp.sx(500)).toBe(500);
  });
});
