// What of a store syncs, read as one change (a first sync, "keep this device's data", a backup
// import taken into the document), and that change in parts small enough to merge quickly.
import type { AppliedChange, Repository } from '../../ports';

/** Everything a store holds that syncs, as one change that puts it. */
export async function storeAsChange(store: Repository): Promise<AppliedChange> {
  const sessions = await store.listSessions();
  const turns = (await Promise.all(sessions.map((s) => store.listTurns(s.id)))).flat();
  return {
    dropped: [],
    sessions,
    turns,
    memories: await store.listMemories(),
    edges: await store.listEdges(),
    segments: await store.listSegments(),
    tombstones: [...(await store.listTombstones('session')), ...(await store.listTombstones('memory'))],
  };
}

/** What others refer to first: a receiver's `apply` leaves out a turn whose chat has not arrived. */
const ORDER = ['tombstones', 'sessions', 'turns', 'memories', 'edges', 'segments'] as const;

export function* inParts(all: AppliedChange, part: number): Generator<AppliedChange> {
  for (const kind of ORDER) {
    const list = (all[kind] ?? []) as unknown[];
    for (let i = 0; i < list.length; i += part) yield { dropped: [], [kind]: list.slice(i, i + part) };
  }
}
