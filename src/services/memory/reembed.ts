// Embedding every memory and segment that has no vector for the current embedding model: after
// the first download, a model switch, or an import. Resumable by construction: it only looks at
// what is missing, and each batch is committed on its own.
import type { Embedder, Repository } from '../../ports';
import type { Id } from '../../memory/types';
import type { LiveIndex } from './live-memory';
import type { JobSnapshot } from './jobs';

const BATCH = 32;

export interface EmbedMissingInput {
  embedder: Embedder;
  /** False once the user switched models: the next run starts over with the new one. */
  stillCurrent: () => boolean;
  /** Every unit the index should have a vector for. */
  unitIds: Id[];
  index: LiveIndex;
  repo: Repository;
  signal: AbortSignal;
  onProgress: (job: JobSnapshot) => void;
}

/** True when anything was missing (and so was embedded, or the run was cut short). */
export async function embedMissing({
  embedder,
  stillCurrent,
  unitIds,
  index,
  repo,
  signal,
  onProgress,
}: EmbedMissingInput): Promise<boolean> {
  const ids = unitIds.filter((id) => !index.vectors?.has(id));
  for (let i = 0; i < ids.length; i += BATCH) {
    if (signal.aborted || !stillCurrent()) return true;
    const batch = ids.slice(i, i + BATCH).filter((id) => index.has(id));
    const units = batch.map((id) => index.get(id)!);
    // The same text the memorise job embeds (context + text for notes), so a vector never depends
    // on which path made it.
    const vectors = await embedder.embed(
      units.map((u) => (u.kind === 'memory' ? (u.indexText ?? u.text) : u.text)),
      signal,
    );
    // The store leaves out vectors of units deleted during the call.
    const applied = await repo.apply({
      vectors: batch.map((unitId, j) => ({ unitId, modelId: embedder.modelId, vector: vectors[j] })),
    });
    for (const v of applied.vectors ?? []) if (index.has(v.unitId)) index.setVector(v.unitId, v.vector);
    onProgress({
      id: 'reembed',
      status: 'running',
      step: 'embed',
      progress: `${Math.min(i + BATCH, ids.length)}/${ids.length}`,
      label: 'Indexing memories for search by meaning',
    });
  }
  return ids.length > 0;
}
