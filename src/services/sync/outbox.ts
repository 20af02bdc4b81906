// What a local write leaves for sync (docs/SYNC.md, "In the app"): its synced part, under an
// out-box key that sorts in write order; the keys of the document's update log; and the part of a
// remote write the other views mirror.
import type { AppliedChange } from '../../ports';

const pad = (n: number) => n.toString().padStart(12, '0');

/** An out-box row's key: time, then this tab's count, then a random tail (tabs write at once). */
export const outboxKey = (now: number, n: number): string => `out:${pad(now)}-${pad(n)}-${Math.random().toString(36).slice(2, 8)}`;

/** The document's update log, in order (`doc:u:<n>`). */
export const logKey = (n: number): string => `doc:u:${pad(n)}`;

/** Only these kinds sync (vectors and jobs stay per device: SYNC.md, "Mapping our records"). */
export function syncedPart(c: AppliedChange): AppliedChange | undefined {
  const part: AppliedChange = {
    dropped: [],
    sessions: c.sessions,
    turns: c.turns,
    memories: c.memories,
    edges: c.edges,
    segments: c.segments,
    tombstones: c.tombstones,
    deleteSessions: c.deleteSessions,
    deleteTurns: c.deleteTurns,
    deleteMemories: c.deleteMemories,
    deleteEdges: c.deleteEdges,
    deleteSegments: c.deleteSegments,
    deleteTombstones: c.deleteTombstones,
    marks: c.marks,
  };
  const any = Object.entries(part).some(([k, v]) => k !== 'dropped' && Array.isArray(v) && v.length > 0);
  return any ? part : undefined;
}

/** The part of a write the live memory mirrors (MemoryService), or nothing when it touched none. */
function memoryPart(c: AppliedChange): AppliedChange | undefined {
  const part: AppliedChange = {
    dropped: [],
    memories: c.memories,
    edges: c.edges,
    segments: c.segments,
    deleteMemories: c.deleteMemories,
    deleteEdges: c.deleteEdges,
    deleteSegments: c.deleteSegments,
  };
  return Object.values(part).some((v) => Array.isArray(v) && v.length > 0) ? part : undefined;
}

/**
 * Tells this tab's views (and other tabs) what a remote write wrote, as another tab's write would;
 * the memory part goes with it, so the live memory is mirrored, not read again whole.
 */
export function tellViews(applied: AppliedChange, memory?: BroadcastChannel, chat?: BroadcastChannel): void {
  const part = memoryPart(applied);
  if (part) memory?.postMessage({ type: 'memory-changed', change: part });
  if (applied.sessions?.length || applied.turns?.length || applied.deleteSessions?.length || applied.deleteTurns?.length)
    chat?.postMessage({ type: 'session-changed', sessionId: '' });
}
