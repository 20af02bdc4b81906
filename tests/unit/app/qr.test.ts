// The QR code Settings draws (src/app/settings/qr.ts): its SVG path, drawn into pixels, decodes
// (with jsqr, a separate decoder) back to the exact pairing link, the tricky relay included.
import { describe, expect, it } from 'vitest';
import jsQR from 'jsqr';
import { qrSquares } from '../../../src/app/settings/qr';
import { pairLink } from '../../../src/services/sync/pair-link';

/** Draws the path's unit squares (and only them) black on white, `scale` pixels per module. */
function raster(size: number, path: string, scale = 4): Uint8ClampedArray {
  const w = size * scale;
  const px = new Uint8ClampedArray(w * w * 4).fill(255);
  const squares = [...path.matchAll(/M(\d+) (\d+)h1v1h-1z/g)];
  expect(squares.map((m) => m[0]).join('')).toBe(path);
  for (const [, xs, ys] of squares) {
    const [x, y] = [Number(xs), Number(ys)];
    for (let dy = 0; dy < scale; dy++)
      for (let dx = 0; dx < scale; dx++) {
        const i = ((y * scale + dy) * w + x * scale + dx) * 4;
        px[i] = px[i + 1] = px[i + 2] = 0;
      }
  }
  return px;
}

describe('qrSquares', () => {
  for (const relay of ['http://127.0.0.1:8787', 'https://relay.example.org/r?room=a+b&key=c=d&x=%26']) {
    it(`decodes back to the link (relay ${relay})`, () => {
      const link = pairLink('http://127.0.0.1:41234/', 'K3QF-7ZC2-M9PA-X4TB-0HJR-6VWE', relay);
      const { size, path } = qrSquares(link);
      const decoded = jsQR(raster(size, path), size * 4, size * 4, { inversionAttempts: 'dontInvert' });
      expect(decoded?.data).toBe(link);
    });
  }
  it('keeps the 4-module quiet zone light on every side', () => {
    const { size, path } = qrSquares(
      pairLink('https://tealeaf.example.org/', 'K3QF-7ZC2-M9PA-X4TB-0HJR-6VWE', 'https://relay.example.org'),
    );
    const cells = [...path.matchAll(/M(\d+) (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(cells.length).toBeGreaterThan(100);
    expect(Math.min(...cells.flat())).toBe(4);
    expect(Math.max(...cells.flat())).toBe(size - 5);
  });
});
