// Ingests one LoCoMo conversation through the real memorise pipeline (summarise -> embed -> link
// -> segment), session by session, as the app's memorise job does.
// - Without a model (the default), a scripted model answers the summarising call with that
//   session's LoCoMo observations (no LLM runs; relation-aware linking is off, so linking uses the
//   similarity switch and makes no call; segments come from the embedding-free splitter): an upper
//   bound, since a strong model wrote those observations.
// - With a model (`llm`, e.g. a server behind --endpoint), that model summarises every session and
//   labels links with the app's default settings, and its topics split the segments: the product
//   path.
// - With an embedder, memories are embedded and linked by the job as in the app, and segments are
//   embedded afterwards as the app's background re-embedding does; `vectors` holds every unit's.
import { InMemoryRepository } from '../../tests/support/in-memory-repository';
import { MemoryGraph } from '../../src/memory/graph';
import { createMemoriseJob, runMemoriseJob, type Segmenter } from '../../src/memory/ingest/memorise';
import { withDefaults, type MemorySettings } from '../../src/memory/settings';
import { locomoSessionRecords, observationSummariser, type LocomoConversation, type LocomoSession } from '../../src/memory/locomo';
import { createHybridIndex } from '../../src/memory/retrieval/hybrid';
import { loadNounExtractor } from '../../src/models/nouns';
import type { HybridIndex } from '../../src/memory/retrieval/types';
import type { NounExtractor } from '../../src/memory/retrieval/topics';
import { segmentSession, type SplitterOptions } from '../../src/memory/ingest/segments';
import { segmentUnit } from '../../src/memory/retrieval/units';
import type { Embedder, LanguageModel } from '../../src/ports';
import type { Id, Memory, Segment, Turn } from '../../src/memory/types';

export interface Ingested {
  conv: LocomoConversation;
  turns: Turn[];
  memories: Memory[];
  segments: Segment[];
  graph: MemoryGraph;
  /** The pipeline's own index (memories; segments too when `llm` was given, as bench:qa uses it). */
  memoryIndex: HybridIndex;
  speakerOf: (t: Turn) => string;
  /** dia_id -> turn id */
  turnIdOf: Map<string, Id>;
  modelCalls: number;
  /** The part-of-speech tagger's noun extractor, for indexes that keep topic nouns. */
  nouns: NounExtractor;
  /** Every memory's and segment's vector, when an embedder was given. */
  vectors?: Map<Id, Float32Array>;
  /** When the conversation's last session ended. */
  end: number;
}

export interface IngestOptions {
  splitter?: SplitterOptions;
  /** The summarising model; absent: LoCoMo's observations stand in for it. */
  llm?: LanguageModel;
  /** Settings for the model path (default: the app's defaults with refinement off). */
  settings?: Partial<MemorySettings>;
  embedder?: Embedder;
  log?: (line: string) => void;
}

export async function ingestLocomo(conv: LocomoConversation, prefix: string, options: IngestOptions = {}): Promise<Ingested> {
  const { llm: model, embedder, splitter } = options;
  const repo = new InMemoryRepository();
  const graph = new MemoryGraph();
  const memoriesMap = new Map<Id, Memory>();
  const memoryIndex = createHybridIndex();
  const settings = model
    ? withDefaults({ refinement: false, ...options.settings })
    : withDefaults({ relationAwareLinking: false, refinement: false, ...options.settings });
  const speakerOf = (t: Turn) => (t.role === 'user' ? conv.speakerA : conv.speakerB);
  const names = [conv.speakerA, conv.speakerB];
  // LLM-free, the observation summariser gives no topics, so segments come from the fallback
  // splitter; a model's topics (`ranges`) split the session as in the app.
  const segmenter: Segmenter = ({ turns, ranges, signal }) =>
    segmentSession(turns, { ranges: model ? ranges : undefined, signal, speakerLabel: speakerOf, names, splitter });
  let current: LocomoSession | undefined;
  const llm = model ?? observationSummariser(() => current);
  const allTurns: Turn[] = [];
  let modelCalls = 0;
  let end = 0;
  for (const [i, s] of conv.sessions.entries()) {
    current = s;
    const { session, turns } = locomoSessionRecords(conv, s, prefix);
    // Fixed clock: the benchmark is deterministic.
    const now = () => session.lastActivityAt + 1;
    end = Math.max(end, session.lastActivityAt);
    const job = createMemoriseJob(session.id, now());
    // Stored with its session, as the app does: a job step writes only while its job record exists.
    await repo.apply({ sessions: [session], turns, jobs: [job] });
    allTurns.push(...turns);
    const out = await runMemoriseJob(job, {
      repo,
      llm,
      embedder,
      index: memoryIndex,
      graph,
      memories: memoriesMap,
      settings,
      segmenter,
      // The observations carry no image notes; a model sees the turns as the app shows them.
      includeNotes: model ? undefined : false,
      now,
    });
    if (out.status !== 'done') throw new Error(`memorise ${session.id}: ${out.status} ${out.reason ?? ''} ${out.job.lastError ?? ''}`);
    modelCalls += out.modelCalls;
    options.log?.(`${prefix}: memorised session ${i + 1}/${conv.sessions.length} (${memoriesMap.size} memories)`);
  }
  const segments = await repo.listSegments();
  let vectors: Map<Id, Float32Array> | undefined;
  if (embedder) {
    vectors = new Map((await repo.listVectors(embedder.modelId)).map((v) => [v.unitId, v.vector]));
    // Segments as the app's background re-embedding embeds them: their text (services/reembed.ts).
    const units = segments.map(segmentUnit);
    const vs = await embedder.embed(units.map((u) => u.text));
    units.forEach((u, j) => vectors!.set(u.id, vs[j]!));
    options.log?.(`${prefix}: embedded ${vectors.size} units with ${embedder.modelId}`);
  }
  const turnIdOf = new Map<string, Id>();
  for (const t of allTurns) if (t.externalId) turnIdOf.set(t.externalId, t.id);
  return {
    conv,
    turns: allTurns,
    memories: [...memoriesMap.values()],
    segments,
    graph,
    memoryIndex,
    speakerOf,
    turnIdOf,
    modelCalls,
    nouns: await loadNounExtractor(),
    vectors,
    end,
  };
}
