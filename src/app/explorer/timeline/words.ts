// What the timeline says to a screen reader when a memory is selected.
import type { LayoutNode, TimelineLayout } from '../../../viz/lanes';
import { formatDate } from '../format';

/** "<text>. <date>. 2 of 5 in thread 1." */
export function timelineAnnounce(layout: TimelineLayout, n: LayoutNode, text: string): string {
  const lane = layout.lanes[n.lane];
  const i = lane.memoryIds.indexOf(n.id) + 1;
  return `${text}. ${formatDate(n.time)}. ${i} of ${lane.memoryIds.length} in thread ${lane.index + 1}.`;
}
