// The method's parameters and ablation switches (docs/METHOD.md, section 1.7 "Ablations").
// Benchmarks flip these; every switch runs through the same code path.

export type RetrievalMode = 'timelines' | 'plain-topk';

export interface MemorySettings {
  /** Phase I-2: label relations with the model. Off: link by similarity + time, SameTopic. */
  relationAwareLinking: boolean;
  /** Phase II-2: rewrite timelines with the model. Off: raw timelines go into the prompt. */
  refinement: boolean;
  /** 'timelines': Theanine. 'plain-topk': the top-k memories alone, no graph. */
  retrievalMode: RetrievalMode;
  /** Memories retrieved per turn (Phase II). */
  k: number;
  /** Associative candidates per new memory (Phase I-1). */
  j: number;
  /**
   * Phase I-1: older memories of the new memory's own session may be associative candidates.
   * Off (the paper, Algorithm 1): candidates come from the graph before the session, G^t, only.
   */
  sameSessionCandidates: boolean;
  /** Similarity-only linking: minimum cosine similarity when both vectors are known. */
  similarityThreshold: number;
  /** Similarity-only linking without vectors: minimum word-overlap (Dice) similarity. */
  lexicalSimilarityThreshold: number;
  /** Attempts per job step before the job is reported failed. */
  maxStepAttempts: number;
  /** Memories walked at most on each side of the retrieved memory when untangling a timeline. */
  timelineMaxSteps: number;
  /** Random walks tried per retrieved memory to find a timeline not already chosen. */
  timelineSamples: number;
  /**
   * Phase II-1: a timeline starts at the oldest memory that leads to the retrieved one (the paper's
   * m_start, eq. 9). Off: at whichever memory with no incoming edge the backward walk reaches.
   */
  timelineFromOldest: boolean;
  /** How many of the latest dialogue turns form the retrieval query. */
  queryTurns: number;
  /**
   * Words of remembered material (timelines, memories, past-session segments) the reply prompt
   * may carry, counted on the text as it goes into the prompt.
   */
  contextBudgetWords: number;
  /** Largest share of the budget one (raw) timeline may take before it is trimmed around its memory. */
  timelineBudgetShare: number;
  /** Retrieval: a question naming some of the people memories are about leaves out the others' memories. */
  speakerAware: boolean;
  /** Retrieval: pseudo-relevance feedback, a second query from the top units' terms fused by rank. */
  feedbackQuery: boolean;
  /** Retrieval: a hypothetical question ("would ...", "likely") ranks memories before raw segments. */
  queryRouting: boolean;
  /** Packing: a segment goes into the prompt as the turns matching the query and their neighbours. */
  segmentExcerpts: boolean;
  /**
   * LD-Agent's persona banks: the current traits about the user and the assistant go into every
   * reply prompt, in words up to this share of contextBudgetWords on top of it (0 = off).
   */
  personaBankShare: number;
  /**
   * LD-Agent's time decay: an event memory's retrieval score halves every this many days since it
   * happened (0 = off; off by default: on LoCoMo it costs recall, see BENCHMARKS.md).
   */
  timeDecayHalfLifeDays: number;
  /**
   * Self-reflection (seed 002): the refinement call also judges whether what was found is enough
   * to answer; if not, its keywords search again (no call of its own; with refinement off, or no
   * timelines, the call runs for the judgement alone).
   */
  reflectiveRequery: boolean;
  /**
   * Make the call before a reply (refinement and self-reflection) only when the first search left
   * the person's message open (recall/gate.ts); otherwise the raw timelines go in at once.
   */
  refineWhenUnsure: boolean;
  /**
   * In a chat longer than the model's window, the earlier exchanges that match what is being
   * talked about now are recalled into the reply's prompt (recall/chat-window.ts); off, the reply
   * sees only the newest turns that fit.
   */
  earlierInChat: boolean;
  /**
   * LD-Agent's topic nouns: the overlap of the query's nouns with each unit's is fused with the
   * lexical and dense rankings (needs the part-of-speech tagger, src/models/nouns.ts).
   */
  topicNouns: boolean;
}

export const DEFAULT_MEMORY_SETTINGS: Readonly<MemorySettings> = Object.freeze({
  relationAwareLinking: true,
  refinement: true,
  retrievalMode: 'timelines',
  k: 3,
  j: 3,
  sameSessionCandidates: false,
  similarityThreshold: 0.6,
  lexicalSimilarityThreshold: 0.3,
  maxStepAttempts: 3,
  timelineMaxSteps: 24,
  timelineSamples: 8,
  timelineFromOldest: true,
  queryTurns: 2,
  contextBudgetWords: 300,
  timelineBudgetShare: 0.15,
  speakerAware: true,
  feedbackQuery: false,
  queryRouting: false,
  segmentExcerpts: false,
  personaBankShare: 0.2,
  timeDecayHalfLifeDays: 0,
  reflectiveRequery: true,
  refineWhenUnsure: true,
  earlierInChat: true,
  topicNouns: false,
});

export function withDefaults(partial?: Partial<MemorySettings>): MemorySettings {
  return { ...DEFAULT_MEMORY_SETTINGS, ...(partial ?? {}) };
}
