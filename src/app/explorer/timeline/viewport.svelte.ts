// The timeline's view state: zoom on x (x' = k x + x, d3's transform), a plain vertical pan y,
// and the stage size. Kept apart from the component so the rules (clamping, zoom, fit, bringing
// a memory into view) run in unit tests; the component feeds it d3 zoom events and sizes.

export interface ViewTransform {
  k: number;
  x: number;
  y: number;
}

export class TimelineViewport {
  /** Room above the first lane. */
  static readonly TOP = 6;
  static readonly SCALE_EXTENT: [number, number] = [1, 20000];
  /** A selected memory closer than this to the left or right edge is brought into view. */
  static readonly EDGE_X = 30;
  static readonly EDGE_Y = 10;

  k = $state(1);
  x = $state(0);
  y = $state(0);
  width = $state(0);
  height = $state(0);
  /** Height of the laid-out lanes. */
  contentHeight = $state(0);

  /** d3's last transform: its y only tells how far a drag moved (our y is separate, clamped). */
  private last: ViewTransform = { k: 1, x: 0, y: 0 };
  /** The y asked for with the next transform (d3 does not carry it). */
  private pendingY: number | null = null;

  /** Top of the lanes on screen. */
  get ty(): number {
    return this.y + TimelineViewport.TOP;
  }

  /** Layout x to screen x. */
  sx(x: number): number {
    return this.k * x + this.x;
  }

  /** The vertical pan stays between the first lane at the top and the last one at the bottom. */
  clampY(y: number): number {
    const min = Math.min(0, this.height - TimelineViewport.TOP - this.contentHeight - 12);
    return Math.max(min, Math.min(0, y));
  }

  /** A d3 zoom event arrived: take its zoom; follow a drag vertically too. */
  zoomed(t: ViewTransform): void {
    let y = this.y;
    if (this.pendingY !== null) {
      y = this.pendingY;
      this.pendingY = null;
    } else if (t.k === this.last.k) y += t.y - this.last.y;
    this.last = { k: t.k, x: t.x, y: t.y };
    this.k = t.k;
    this.x = t.x;
    this.y = this.clampY(y);
  }

  /** The d3 transform that shows (k, x) with the vertical pan y (applied on the next zoomed()). */
  request(k: number, x: number, y: number): ViewTransform {
    this.pendingY = y;
    return { k, x, y: this.last.y };
  }

  /** The whole time range, lanes from the top. */
  fit(): ViewTransform {
    return this.request(1, 0, 0);
  }

  /** The span of the overview (layout x at zoom 1) shown now; null when all of it is. */
  brushSelection(): [number, number] | null {
    if (this.k <= 1.0001) return null;
    const b0 = Math.min(this.width, Math.max(0, -this.x / this.k));
    const b1 = Math.max(b0, Math.min(this.width, (this.width - this.x) / this.k));
    return [b0, b1];
  }

  /** The view that shows the overview span [s0, s1]; a span under 2 px shows everything. */
  fromBrush(s0: number, s1: number): ViewTransform {
    if (s1 - s0 < 2) return this.request(1, 0, this.y);
    const k = this.width / (s1 - s0);
    return this.request(k, -s0 * k, this.y);
  }

  /**
   * The horizontal pan kept within the data: the view never shows time before the first memory
   * or after the last (layout x 0..width at zoom 1 is exactly the data's extent with margins).
   */
  clampX(x: number, k = this.k): number {
    return Math.min(0, Math.max(this.width - k * this.width, x));
  }

  /**
   * The view that brings the node at layout (x, y) on screen, or null when it already is (or is
   * as far in as the data allows): centred on the axis that needs it, as far as the data allows.
   */
  reveal(nx: number, ny: number): ViewTransform | null {
    if (this.width === 0 || this.height === 0) return null;
    const x = this.sx(nx);
    const y = ny + this.ty;
    const xOk = x >= TimelineViewport.EDGE_X && x <= this.width - TimelineViewport.EDGE_X;
    const yOk = y >= TimelineViewport.EDGE_Y && y <= this.height - TimelineViewport.EDGE_Y;
    const tx = xOk ? this.x : this.clampX(this.width / 2 - this.k * nx);
    const ty = yOk ? this.y : this.clampY(this.height / 2 - ny - TimelineViewport.TOP);
    if (tx === this.x && ty === this.y) return null;
    return this.request(this.k, tx, ty);
  }
}
