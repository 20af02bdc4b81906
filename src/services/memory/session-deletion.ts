// What deleting a chat removes (MemoryService.deleteSession): its turns, passages and memorising
// job; its memories when asked, and those an unfinished job had made so far. Tombstones keep a
// re-import of the same history from bringing any of it back.
import type { ChangeSet, Repository } from '../../ports';
import type { Id } from '../../memory/types';

export async function sessionDeletion(
  repo: Repository,
  sessionId: Id,
  deleteMemories: boolean,
  deletedAt = Date.now(),
): Promise<ChangeSet> {
  const session = await repo.getSession(sessionId);
  const unfinished = session !== undefined && session.status !== 'memorised';
  const [turns, segments, jobs, memories] = await Promise.all([
    repo.listTurns(sessionId),
    repo.listSegmentsBySession(sessionId),
    repo.listJobs(),
    deleteMemories || unfinished ? repo.listMemories() : Promise.resolve([]),
  ]);
  // What the user made or edited themselves ("remember that …") is not a job's partial set.
  const gone = memories.filter((m) => m.sessionId === sessionId && (deleteMemories || !m.edited)).map((m) => m.id);
  return {
    deleteSessions: [sessionId],
    deleteTurns: turns.map((t) => t.id),
    deleteSegments: segments.map((x) => x.id),
    deleteJobs: jobs.filter((j) => j.sessionId === sessionId).map((j) => j.id),
    deleteMemories: gone,
    tombstones: [
      { kind: 'session', id: sessionId, deletedAt },
      ...(deleteMemories ? gone.map((id) => ({ kind: 'memory' as const, id, deletedAt })) : []),
    ],
  };
}
