import { describe, expect, it } from 'vitest';
import { FrameCache, blitRect } from '../../../src/viz/frame-cache';

describe('blitRect', () => {
  it('places the cached drawing where the new zoom puts it', () => {
    // Drawn at k=2, x=-100; now zoomed to k=4, x=-300: the bitmap doubles in width and moves so
    // that a layout point p lands at 4p - 300, as it was at 2p - 100 in the bitmap.
    const r = blitRect({ k: 2, x: -100, y: 6 }, { k: 4, x: -300, y: 26 }, { width: 800, height: 400 }, 1);
    expect(r).toEqual({ dx: -100, dy: 20, dw: 1600, dh: 400 });
    const p = 120;
    expect(r.dx + (2 * p - 100) * (r.dw / 800)).toBeCloseTo(4 * p - 300);
  });

  it('works in device pixels', () => {
    expect(blitRect({ k: 1, x: 0, y: 0 }, { k: 1, x: 10, y: 5 }, { width: 200, height: 100 }, 2)).toEqual({
      dx: 20,
      dy: 10,
      dw: 200,
      dh: 100,
    });
  });
});

describe('FrameCache.plan', () => {
  const cache = (): FrameCache =>
    new FrameCache(() => {
      throw new Error('no canvas in Node');
    });

  it('draws in full until a drawing is cached', () => {
    expect(cache().plan(['a'], 0)).toBe('full');
  });

  it('blits while a gesture goes on and the content is the same, draws in full otherwise', () => {
    const c = cache();
    const layout = {};
    c.drawn({ k: 1, x: 0, y: 0 }, [layout, 1]);
    c.gesture(1000);
    expect(c.plan([layout, 1], 1000 + FrameCache.IDLE_MS - 1)).toBe('blit');
    expect(c.plan([layout, 1], 1000 + FrameCache.IDLE_MS)).toBe('full');
    expect(c.plan([{}, 1], 1001)).toBe('full');
    expect(c.plan([layout, 2], 1001)).toBe('full');
  });
});
