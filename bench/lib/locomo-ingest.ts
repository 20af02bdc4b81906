// Ingests one LoCoMo conversation through the real memorise pipeline (summarise -> link ->
// segment), with a scripted model whose only job is to answer the summarising call with that
// session's LoCoMo observations (no LLM runs; relation-aware linking is off, so linking uses the
// similarity switch and makes no call; segments come from the embedding-free splitter).
import { InMemoryRepository } from '../../tests/support/in-memory-repository';
import { MemoryGraph } from '../../src/memory/graph';
import { createMemoriseJob, runMemoriseJob, type Segmenter } from '../../src/memory/ingest/memorise';
import { withDefaults } from '../../src/memory/settings';
import { locomoSessionRecords, observationSummariser, type LocomoConversation, type LocomoSession } from '../../src/memory/locomo';
import { createHybridIndex } from '../../src/memory/retrieval/hybrid';
import { loadNounExtractor } from '../../src/models/nouns';
import type { HybridIndex } from '../../src/memory/retrieval/types';
import type { NounExtractor } from '../../src/memory/retrieval/topics';
import { segmentSession, type SplitterOptions } from '../../src/memory/ingest/segments';
import type { Id, Memory, Segment, Turn } from '../../src/memory/types';

export interface Ingested {
  conv: LocomoConversation;
  turns: Turn[];
  memories: Memory[];
  segments: Segment[];
  graph: MemoryGraph;
  /** The pipeline's own index (memories). */
  memoryIndex: HybridIndex;
  speakerOf: (t: Turn) => string;
  /** dia_id -> turn id */
  turnIdOf: Map<string, Id>;
  modelCalls: number;
  /** The part-of-speech tagger's noun extractor, for indexes that keep topic nouns. */
  nouns: NounExtractor;
}

export async function ingestLocomo(conv: LocomoConversation, prefix: string, splitter?: SplitterOptions): Promise<Ingested> {
  const repo = new InMemoryRepository();
  const graph = new MemoryGraph();
  const memoriesMap = new Map<Id, Memory>();
  const memoryIndex = createHybridIndex();
  const settings = withDefaults({ relationAwareLinking: false, refinement: false });
  const speakerOf = (t: Turn) => (t.role === 'user' ? conv.speakerA : conv.speakerB);
  const names = [conv.speakerA, conv.speakerB];
  // LLM-free: the observation summariser gives no topics, so segments come from the fallback
  // splitter (the pipeline's `ranges` are always empty here and are not forwarded).
  const segmenter: Segmenter = ({ turns }) => segmentSession(turns, { speakerLabel: speakerOf, names, splitter });
  let current: LocomoSession | undefined;
  const llm = observationSummariser(() => current);
  const allTurns: Turn[] = [];
  let modelCalls = 0;
  for (const s of conv.sessions) {
    current = s;
    const { session, turns } = locomoSessionRecords(conv, s, prefix);
    // Fixed clock: the benchmark is deterministic.
    const now = () => session.lastActivityAt + 1;
    const job = createMemoriseJob(session.id, now());
    // Stored with its session, as the app does: a job step writes only while its job record exists.
    await repo.apply({ sessions: [session], turns, jobs: [job] });
    allTurns.push(...turns);
    const out = await runMemoriseJob(job, {
      repo,
      llm,
      index: memoryIndex,
      graph,
      memories: memoriesMap,
      settings,
      segmenter,
      includeNotes: false,
      now,
    });
    if (out.status !== 'done') throw new Error(`memorise ${session.id}: ${out.status} ${out.reason ?? ''} ${out.job.lastError ?? ''}`);
    modelCalls += out.modelCalls;
  }
  const turnIdOf = new Map<string, Id>();
  for (const t of allTurns) if (t.externalId) turnIdOf.set(t.externalId, t.id);
  return {
    conv,
    turns: allTurns,
    memories: [...memoriesMap.values()],
    segments: await repo.listSegments(),
    graph,
    memoryIndex,
    speakerOf,
    turnIdOf,
    modelCalls,
    nouns: await loadNounExtractor(),
  };
}
