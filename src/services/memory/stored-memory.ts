// The memory as the store holds it, read at start (and after an import) and made to fit together
// before the live index and graph are built from it: what does not fit is repaired (planRepair),
// never refused, so the app always starts.
import type { Embedder, Repository } from '../../ports';
import { planRepair, type Repair } from '../../memory/repair';
import { yieldToPage } from './jobs';

/** Every record the live memory is built from (the vectors of `embedder`'s model), repaired. */
export async function readStoredMemory(repo: Repository, embedder: Embedder | undefined): Promise<Repair> {
  // All reads at once: IndexedDB serves them while this thread deserialises the first ones.
  const [memories, edges, segments, vectors, jobs, sessions] = await Promise.all([
    repo.listMemories(),
    repo.listEdges(),
    repo.listSegments(),
    embedder ? repo.listVectors(embedder.modelId) : Promise.resolve([]),
    repo.listJobs(),
    repo.listSessions(),
  ]);
  // Each of these passes is linear over 100k records: a task of its own each, not one long one.
  await yieldToPage();
  return planRepair({ memories, edges, segments, vectors, jobs, sessionIds: new Set(sessions.map((x) => x.id)) });
}
