// Canvas renderer for large graphs, with level of detail: what is drawn depends on how many
// things are on screen, so a 5,000-memory graph still redraws within a frame while zooming.
// Strokes are batched per relation and fills per kind (a handful of draw calls per frame).

import type { Id, MemoryKind, Relation } from '../memory/types';
import { RELATIONS } from '../memory/types';
import { kindStyle, relationStyle, MEMORY_KINDS, type KindShape } from './relations';
import type { CurveEnd, Point } from './curves';

const endOf = (p: Point): CurveEnd => ({ x: p[0], y: p[1] });

export interface CanvasNode {
  id: Id;
  x: number;
  y: number;
  kind: MemoryKind;
  superseded: boolean;
}

export interface CanvasEdge {
  id: Id;
  relation: Relation;
  /** Cubic Bezier (4 points) or a straight segment (2 points), in layout coordinates. */
  readonly points: readonly Point[];
  /** Its end points, when reading `points` would build the curve (a timeline's lazy edges). */
  readonly source?: CurveEnd;
  readonly target?: CurveEnd;
}

/** Layout -> screen: sx = kx * x + tx, sy = ky * y + ty. */
export interface CanvasView {
  kx: number;
  ky: number;
  tx: number;
  ty: number;
  width: number;
  height: number;
  dpr: number;
}

export interface Emphasis {
  /** When set, nodes/edges outside it are drawn faded. */
  nodes: ReadonlySet<Id> | null;
  edges: ReadonlySet<Id> | null;
  selected: Id | null;
  hovered: Id | null;
  /** Search hits get a halo. */
  hits: ReadonlySet<Id> | null;
}

export interface DrawStats {
  nodes: number;
  /** Edges on screen. */
  edges: number;
  /** Of those, the edges drawn (a sample past MAX_STROKED). */
  stroked: number;
  detail: 'full' | 'reduced' | 'dots';
}

const FADED = 0.14;
/** The most edges stroked in one frame, emphasised ones aside. */
export const MAX_STROKED = 15_000;

/** The colours the canvas takes from the page's tokens (app.css), so it follows the theme. */
export interface Palette {
  surface: string;
  accent: string;
  muted: string;
  hit: string;
}

/** The light theme's tokens, for callers without a page (tests, benchmarks). */
export const DEFAULT_PALETTE: Palette = { surface: '#ffffff', accent: '#1f4d3a', muted: '#5f6a65', hit: '#f79009' };

/** Reads --surface, --accent, --muted and --hit (e.g. from getComputedStyle); a missing one keeps its default. */
export function paletteFrom(style: Pick<CSSStyleDeclaration, 'getPropertyValue'>): Palette {
  const read = (name: string, fallback: string): string => style.getPropertyValue(name).trim() || fallback;
  return {
    surface: read('--surface', DEFAULT_PALETTE.surface),
    accent: read('--accent', DEFAULT_PALETTE.accent),
    muted: read('--muted', DEFAULT_PALETTE.muted),
    hit: read('--hit', DEFAULT_PALETTE.hit),
  };
}

export function drawGraph(
  ctx: CanvasRenderingContext2D,
  nodes: readonly CanvasNode[],
  edges: readonly CanvasEdge[],
  view: CanvasView,
  emphasis: Emphasis,
  radius: number,
  palette: Palette = DEFAULT_PALETTE,
): DrawStats {
  const { kx, ky, tx, ty, width, height, dpr } = view;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const sx = (x: number): number => kx * x + tx;
  const sy = (y: number): number => ky * y + ty;
  const pad = 12;

  // Cull nodes first: the count on screen picks the level of detail.
  const visible: CanvasNode[] = [];
  for (const n of nodes) {
    const x = sx(n.x);
    const y = sy(n.y);
    if (x >= -pad && x <= width + pad && y >= -pad && y <= height + pad) visible.push(n);
  }
  const detail: DrawStats['detail'] = visible.length > 2500 ? 'dots' : visible.length > 900 ? 'reduced' : 'full';

  // Edges: cull by the bounding box of the end points (curves stay close to it).
  const byRelation = new Map<Relation, CanvasEdge[]>();
  // Very long on-screen spans are drawn solid: dashing a curve that runs far off screen costs
  // time for every dash, visible or not.
  const longSpan = new Map<Relation, CanvasEdge[]>();
  const faded: CanvasEdge[] = [];
  let edgeCount = 0;
  for (const e of edges) {
    // Culled by the ends alone: only the edges drawn build their curves.
    const a = e.source ?? endOf(e.points[0]);
    const b = e.target ?? endOf(e.points[e.points.length - 1]);
    const ax = sx(a.x),
      bx = sx(b.x),
      ay = sy(a.y),
      by = sy(b.y);
    if ((ax < -pad && bx < -pad) || (ax > width + pad && bx > width + pad)) continue;
    if ((ay < -pad - 30 && by < -pad - 30) || (ay > height + pad && by > height + pad)) continue;
    edgeCount++;
    if (emphasis.edges && !emphasis.edges.has(e.id)) faded.push(e);
    else {
      const target = Math.abs(bx - ax) > width * 1.5 ? longSpan : byRelation;
      const list = target.get(e.relation);
      if (list) list.push(e);
      else target.set(e.relation, [e]);
    }
  }
  const dashes = edgeCount < 2500;
  const arrows = edgeCount < 1500 && detail !== 'dots';

  // Past MAX_STROKED edges on screen the strokes only thicken a wash, while rasterising each costs
  // its length (100,000 from one memory: 0.4 s a frame): every stride-th of each list (in input
  // order, so a frame keeps the last frame's sample) is drawn, and all the emphasised ones. Only
  // the edges drawn build their curves (lanes.ts).
  const stride = Math.ceil(edgeCount / MAX_STROKED);
  let stroked = 0;
  const tracePath = (list: readonly CanvasEdge[], sampled = true): void => {
    ctx.beginPath();
    for (const [j, e] of list.entries()) {
      if (sampled && j % stride !== 0) continue;
      stroked++;
      const p = e.points;
      ctx.moveTo(sx(p[0][0]), sy(p[0][1]));
      if (p.length === 4) ctx.bezierCurveTo(sx(p[1][0]), sy(p[1][1]), sx(p[2][0]), sy(p[2][1]), sx(p[3][0]), sy(p[3][1]));
      else ctx.lineTo(sx(p[p.length - 1][0]), sy(p[p.length - 1][1]));
    }
  };

  if (faded.length) {
    ctx.globalAlpha = FADED;
    ctx.strokeStyle = palette.muted;
    ctx.lineWidth = 1;
    ctx.setLineDash([]);
    tracePath(faded);
    ctx.stroke();
  }
  const baseAlpha = emphasis.edges ? 1 : edgeCount > 4000 ? 0.35 : edgeCount > 1500 ? 0.55 : 0.9;
  for (const rel of RELATIONS) {
    const long = longSpan.get(rel);
    if (long) {
      ctx.globalAlpha = baseAlpha * 0.8;
      ctx.strokeStyle = relationStyle(rel).colour;
      ctx.lineWidth = 1;
      ctx.setLineDash([]);
      tracePath(long, !emphasis.edges);
      ctx.stroke();
    }
    const list = byRelation.get(rel);
    if (!list) continue;
    const style = relationStyle(rel);
    ctx.globalAlpha = baseAlpha;
    ctx.strokeStyle = style.colour;
    ctx.lineWidth = detail === 'dots' ? 1 : style.width;
    ctx.setLineDash(dashes && style.dash ? style.dash.split(' ').map(Number) : []);
    tracePath(list, !emphasis.edges);
    ctx.stroke();
    if (arrows) {
      ctx.setLineDash([]);
      ctx.fillStyle = style.colour;
      ctx.beginPath();
      for (const e of list) arrowHead(ctx, e.points, sx, sy, radius + 1);
      ctx.fill();
    }
  }
  ctx.setLineDash([]);

  // Nodes, batched per kind; faded ones first so emphasised ones sit on top.
  const isFaded = (n: CanvasNode): boolean => emphasis.nodes !== null && !emphasis.nodes.has(n.id) && n.id !== emphasis.selected;
  for (const pass of [true, false]) {
    for (const kind of MEMORY_KINDS) {
      const style = kindStyle(kind);
      ctx.globalAlpha = pass ? FADED : 1;
      if (detail === 'dots') {
        ctx.fillStyle = style.fill;
        for (const n of visible) {
          if (n.kind !== kind || isFaded(n) !== pass) continue;
          ctx.fillRect(sx(n.x) - 1.5, sy(n.y) - 1.5, 3, 3);
        }
        continue;
      }
      const r = detail === 'reduced' ? radius * 0.75 : radius;
      ctx.beginPath();
      const hollow: CanvasNode[] = [];
      for (const n of visible) {
        if (n.kind !== kind || isFaded(n) !== pass) continue;
        if (n.superseded) hollow.push(n);
        else shape(ctx, style.shape, sx(n.x), sy(n.y), r);
      }
      ctx.fillStyle = style.fill;
      ctx.fill();
      if (hollow.length) {
        // Superseded: hollow marker with a strike through it.
        ctx.beginPath();
        for (const n of hollow) shape(ctx, style.shape, sx(n.x), sy(n.y), r);
        ctx.fillStyle = palette.surface;
        ctx.fill();
        ctx.strokeStyle = style.stroke;
        ctx.lineWidth = 1.5;
        ctx.stroke();
        ctx.beginPath();
        for (const n of hollow) {
          ctx.moveTo(sx(n.x) - r - 2, sy(n.y) + r + 2);
          ctx.lineTo(sx(n.x) + r + 2, sy(n.y) - r - 2);
        }
        ctx.stroke();
      }
    }
  }
  ctx.globalAlpha = 1;

  // Rings: search hits, hover, selection.
  const ring = (id: Id | null, colour: string, w: number, extra: number): void => {
    if (!id) return;
    const n = nodes.find((m) => m.id === id);
    if (!n) return;
    ctx.beginPath();
    ctx.arc(sx(n.x), sy(n.y), radius + extra, 0, Math.PI * 2);
    ctx.strokeStyle = colour;
    ctx.lineWidth = w;
    ctx.stroke();
  };
  if (emphasis.hits && emphasis.hits.size) {
    ctx.beginPath();
    for (const n of visible) {
      if (!emphasis.hits.has(n.id)) continue;
      ctx.moveTo(sx(n.x) + radius + 3.5, sy(n.y));
      ctx.arc(sx(n.x), sy(n.y), radius + 3.5, 0, Math.PI * 2);
    }
    ctx.strokeStyle = palette.hit;
    ctx.lineWidth = 2.5;
    ctx.stroke();
  }
  ring(emphasis.hovered, palette.accent, 1.5, 4);
  ring(emphasis.selected, palette.accent, 2.5, 5);
  return { nodes: visible.length, edges: edgeCount, stroked, detail };
}

function shape(ctx: CanvasRenderingContext2D, s: KindShape, x: number, y: number, r: number): void {
  switch (s) {
    case 'circle':
      ctx.moveTo(x + r, y);
      ctx.arc(x, y, r, 0, Math.PI * 2);
      return;
    case 'diamond': {
      const d = r * 1.3;
      ctx.moveTo(x, y - d);
      ctx.lineTo(x + d, y);
      ctx.lineTo(x, y + d);
      ctx.lineTo(x - d, y);
      ctx.closePath();
      return;
    }
    case 'square': {
      const q = r * 0.9;
      ctx.rect(x - q, y - q, 2 * q, 2 * q);
      return;
    }
    case 'triangle': {
      const t = r * 1.25;
      ctx.moveTo(x, y - t);
      ctx.lineTo(x + t * 0.95, y + t * 0.7);
      ctx.lineTo(x - t * 0.95, y + t * 0.7);
      ctx.closePath();
      return;
    }
    case 'triangle-down': {
      const t = r * 1.25;
      ctx.moveTo(x, y + t);
      ctx.lineTo(x + t * 0.95, y - t * 0.7);
      ctx.lineTo(x - t * 0.95, y - t * 0.7);
      ctx.closePath();
    }
  }
}

/** Arrow head at the end of a path, backed off by `offset` px along the end tangent. */
function arrowHead(
  ctx: CanvasRenderingContext2D,
  p: readonly Point[],
  sx: (x: number) => number,
  sy: (y: number) => number,
  offset: number,
): void {
  const end = p[p.length - 1];
  const before = p[p.length - 2];
  const ex = sx(end[0]),
    ey = sy(end[1]);
  let dx = ex - sx(before[0]);
  let dy = ey - sy(before[1]);
  let len = Math.hypot(dx, dy);
  if (len < 1e-6) {
    // Degenerate tangent (control point on the end): fall back to the chord.
    dx = ex - sx(p[0][0]);
    dy = ey - sy(p[0][1]);
    len = Math.hypot(dx, dy);
    if (len < 1e-6) return;
  }
  const ux = dx / len,
    uy = dy / len;
  const tipX = ex - ux * offset,
    tipY = ey - uy * offset;
  const size = 7;
  ctx.moveTo(tipX, tipY);
  ctx.lineTo(tipX - ux * size - uy * size * 0.5, tipY - uy * size + ux * size * 0.5);
  ctx.lineTo(tipX - ux * size + uy * size * 0.5, tipY - uy * size - ux * size * 0.5);
  ctx.closePath();
}
