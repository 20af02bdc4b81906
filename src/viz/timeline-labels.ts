// Where a timeline memory's text label goes. Right of its dot, in the room before the next dot of
// its row; the last dot of a row, when the stage ends right after it (a thread's newest memory, the
// one a user looks for first), puts its label left instead, in the half of the gap before it that
// the previous dot's label leaves free.
import type { LayoutNode } from './lanes';

export interface LabelRoom {
  /** Characters of the excerpt. */
  chars: number;
  side: 'right' | 'left';
}

export interface LabelView {
  /** Zoom. */
  k: number;
  /** Screen x of a layout x. */
  sx: (x: number) => number;
  width: number;
}

const MIN_ROOM = 70;
const MAX_CHARS = 56;
const CHAR_WIDTH = 6.4;
/** Between a label and the next dot. */
const MARGIN = 16;

const chars = (room: number): number => (room > MIN_ROOM ? Math.min(MAX_CHARS, Math.floor(room / CHAR_WIDTH)) : 0);

/** The last dot of a row with no room right of it before the stage ends. */
function labelGoesLeft(screenX: number, gapAfter: number, width: number): boolean {
  return gapAfter === Infinity && width - screenX - MARGIN <= MIN_ROOM;
}

type Node = Pick<LayoutNode, 'x' | 'gapAfter' | 'gapBefore' | 'nextIsLast'>;

/** The label of a dot, or null where there is no room for one. */
export function timelineLabel(n: Node, view: LabelView): LabelRoom | null {
  const x = view.sx(n.x);
  if (labelGoesLeft(x, n.gapAfter, view.width)) {
    const left = chars(Math.min((n.gapBefore * view.k) / 2, x) - MARGIN);
    return left ? { chars: left, side: 'left' } : null;
  }
  let room = Math.min(n.gapAfter * view.k, view.width - x) - MARGIN;
  // The next dot is its row's last and labels to its left: leave it half of the gap.
  if (n.nextIsLast && labelGoesLeft(x + n.gapAfter * view.k, Infinity, view.width))
    room = Math.min(room, (n.gapAfter * view.k) / 2 - MARGIN);
  const right = chars(room);
  return right ? { chars: right, side: 'right' } : null;
}
