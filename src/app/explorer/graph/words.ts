// What the graph view says to a screen reader: its name (how much is drawn) and the selection.
import type { Id } from '../../../memory/types';
import type { MemoryIndex } from '../../../viz/memory-index';
import { formatDate } from '../format';

export function graphLabel(s: { complete: boolean; total: number; totalEdges: number; shown: number; shownEdges: number }): string {
  const what = s.complete
    ? `${s.total} memories, ${s.totalEdges} links`
    : `${s.shown} of ${s.total} memories and ${s.shownEdges} of ${s.totalEdges} links shown`;
  return `Memory graph: ${what}. Arrow keys move between memories, Enter opens one. Use the List tab for a text version.`;
}

/** The selected memory read out: its text, date and number of links. */
export function graphAnnounce(index: MemoryIndex, id: Id | null): string {
  const m = id ? index.memories.get(id) : undefined;
  if (!m) return '';
  const links = index.graph.incoming(m.id).length + index.graph.outgoing(m.id).length;
  return `${m.text}. ${formatDate(m.time)}. ${links} link${links === 1 ? '' : 's'}.`;
}
