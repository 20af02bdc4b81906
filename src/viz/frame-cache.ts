// Frames of the canvas timeline during a zoom or pan: while the gesture lasts, frames reuse the
// last full drawing (scaled on x, shifted on y) and the full redraw waits until the gesture
// pauses. A full draw of 10k edges costs tens of ms on a software rasteriser, a bitmap blit about one.

/** A zoom of the timeline: x' = k x + x; y is a plain shift. */
export interface FrameView {
  k: number;
  x: number;
  y: number;
}

/** Where the cached bitmap goes on the canvas (device pixels). */
export interface BlitRect {
  dx: number;
  dy: number;
  dw: number;
  dh: number;
}

/** The cached drawing, made at `from`, placed for the view `to`. */
export function blitRect(from: FrameView, to: FrameView, size: { width: number; height: number }, dpr: number): BlitRect {
  const s = to.k / from.k;
  return { dx: (to.x - s * from.x) * dpr, dy: (to.y - from.y) * dpr, dw: size.width * s, dh: size.height };
}

export class FrameCache {
  /** How long after the last gesture event a full draw happens. */
  static readonly IDLE_MS = 140;
  private view: FrameView | null = null;
  private key: readonly unknown[] = [];
  private copied = false;
  private bitmap: HTMLCanvasElement | null = null;
  private lastGesture = -Infinity;

  /** `createBitmap`: a detached canvas to keep the last full drawing in (made on first use). */
  constructor(private readonly createBitmap: () => HTMLCanvasElement) {}

  /** A zoom or pan by the user just happened. */
  gesture(now: number): void {
    this.lastGesture = now;
  }

  /** A full draw of `key` (everything the drawing depends on but the view) was made at `view`. */
  drawn(view: FrameView, key: readonly unknown[]): void {
    this.view = { ...view };
    this.key = key;
    this.copied = false;
  }

  /** Blit now (and draw in full once idle) when only the view changed during a gesture. */
  plan(key: readonly unknown[], now: number): 'blit' | 'full' {
    const same = this.view !== null && this.key.length === key.length && this.key.every((v, i) => v === key[i]);
    return same && now - this.lastGesture < FrameCache.IDLE_MS ? 'blit' : 'full';
  }

  /** Draws the last full drawing onto `canvas` for `view`. */
  blit(canvas: HTMLCanvasElement, view: FrameView, dpr: number): boolean {
    const out = canvas.getContext('2d');
    if (!out || !this.view) return false;
    if (!this.copied) {
      // First frame of a gesture: the canvas still shows the last full drawing; keep a copy.
      this.bitmap ??= this.createBitmap();
      this.bitmap.width = canvas.width;
      this.bitmap.height = canvas.height;
      this.bitmap.getContext('2d')?.drawImage(canvas, 0, 0);
      this.copied = true;
    }
    const bitmap = this.bitmap!;
    const r = blitRect(this.view, view, bitmap, dpr);
    out.setTransform(1, 0, 0, 1, 0, 0);
    out.clearRect(0, 0, canvas.width, canvas.height);
    out.drawImage(bitmap, r.dx, r.dy, r.dw, r.dh);
    return true;
  }
}
