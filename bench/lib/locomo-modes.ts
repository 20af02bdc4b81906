// The retrieval modes of bench:locomo (bench/locomo.ts): the product's own per-turn flow
// (prepareTurn) under switches, and reference modes that rank one kind of unit with BM25.
import { memoryUnit } from '../../src/memory/ingest/memorise';
import { timelinesForRetrieved } from '../../src/memory/recall/timelines';
import { seedFrom } from '../../src/memory/rng';
import { createHybridIndex, type HybridOptions } from '../../src/memory/retrieval/hybrid';
import { promptItem } from '../../src/memory/retrieval/budget';
import { segmentUnit, turnUnit } from '../../src/memory/retrieval/units';
import type { HybridIndex, IndexedUnit } from '../../src/memory/retrieval/types';
import type { Id } from '../../src/memory/types';
import { memoryLine, prepareTurn, segmentBlock } from '../../src/memory/recall/turn';
import { promptDate } from '../../src/memory/text';
import { RefineCache } from '../../src/memory/recall/refine';
import { DEFAULT_MEMORY_SETTINGS, withDefaults, type MemorySettings, type RetrievalMode } from '../../src/memory/settings';
import type { NounExtractor } from '../../src/memory/retrieval/topics';
import type { Embedder, LanguageModel } from '../../src/ports';
import type { Ingested } from './locomo-ingest';

export const BASELINE = 'turns-bm25';
/** The retrieval signals, each a switch in MemorySettings. */
export const SIGNALS = ['speakerAware', 'feedbackQuery', 'queryRouting', 'segmentExcerpts', 'topicNouns'] as const;
const SIGNALS_OFF: Partial<MemorySettings> = Object.fromEntries(SIGNALS.map((k) => [k, false]));
/** Switches of Theanine's Phase I and II-1 where Tealeaf can follow the paper or depart from it. */
export const PAPER_SWITCHES = ['timelineFromOldest', 'sameSessionCandidates'] as const;
/** Switches that act while memorising: a mode that flips one memorises the conversation again. */
const MEMORISING_SWITCHES = new Set<keyof MemorySettings>(['sameSessionCandidates', 'relationAwareLinking', 'j']);
/** Units fetched per query: enough to fill the larger budget with the smallest units. */
const DEPTH = 200;

/** What a question's retrieval put in the prompt under a budget. */
export interface Retrieved {
  turnIds: Id[];
  units: number;
  /** Words paid from the budget. */
  words: number;
  /** The remembered material as written into the prompt (bullets, dates, speakers). */
  text: string;
  /** Timelines in the prompt (raw or refined). */
  timelines?: number;
  /** Model calls made while preparing the turn (refinement, re-query). */
  modelCalls?: number;
}

/** What the run offers the modes: the model behind --endpoint and the --embedder's query side. */
export interface RunContext {
  llm?: LanguageModel;
  queryEmbedder?: Embedder;
}

type Retriever = (query: string) => IndexedUnit[];
export interface Mode {
  name: string;
  describe: string;
  build?: (c: Ingested) => Retriever;
  skipCovered?: boolean;
  /** One of the product's retrieval modes, among which "best" is chosen. */
  product?: boolean;
  /** Retrieval and packing done by the product's per-turn code (prepareTurn). */
  turn?: (c: Ingested, run: RunContext) => (query: string, budget: number) => Promise<Retrieved>;
  /** Runs only with --embedder (it differs from another mode only in how it weighs the vectors). */
  dense?: boolean;
  /** Runs only with --endpoint: it needs the model at reply time. */
  model?: boolean;
  /** Memorising settings of this mode (the conversation is memorised again with them). */
  memorise?: Partial<MemorySettings>;
}

function indexOf(units: IndexedUnit[], nouns?: NounExtractor, weights?: HybridOptions['weights']): HybridIndex {
  const ix = createHybridIndex({ depth: DEPTH, nouns, weights });
  for (const u of units) ix.upsert(u);
  return ix;
}
const ranked = (ix: HybridIndex, q: string, kinds?: IndexedUnit['kind'][]) =>
  ix.search(q, undefined, DEPTH, kinds ? { kinds } : undefined).map((h) => h.unit);

// The baseline's turns carry their speaker's name in the index and the prompt, as memories do.
const turnUnits = (c: Ingested) => c.turns.map((t) => turnUnit(t, c.speakerOf(t)));

/**
 * How a reference mode's unit is written into the prompt: the same date headers as the product
 * path (memoryLine, segmentBlock in recall/turn.ts), so every mode pays for its dates.
 */
export function promptTextOf(c: Ingested): (u: IndexedUnit) => string {
  const byId = new Map(c.memories.map((m) => [m.id, m]));
  return (u) => {
    const m = u.kind === 'memory' ? byId.get(u.id) : undefined;
    if (m) return memoryLine(m);
    if (u.kind === 'segment') return segmentBlock(u.time, u.text);
    return `${promptDate(u.time)}: ${u.text}`;
  };
}
const segUnits = (c: Ingested) => c.segments.map(segmentUnit);
const memUnits = (c: Ingested) => c.memories.map(memoryUnit);

/** Retrieved memories, each followed by the other memories of its timeline (docs/METHOD.md, II-1). */
function withTimelines(c: Ingested, base: IndexedUnit[], k: number): IndexedUnit[] {
  const byId = new Map(c.memories.map((m) => [m.id, memoryUnit(m)]));
  const top = base
    .filter((u) => u.kind === 'memory')
    .slice(0, k)
    .map((u) => u.id);
  const timelines = timelinesForRetrieved(c.graph, top, seedFrom(top.join('|')));
  const out: IndexedUnit[] = [];
  const seen = new Set<Id>();
  const push = (u: IndexedUnit | undefined) => {
    if (u && !seen.has(u.id)) {
      seen.add(u.id);
      out.push(u);
    }
  };
  for (const t of timelines) {
    push(byId.get(t.through));
    for (const id of t.memoryIds) push(byId.get(id));
  }
  for (const u of base) push(u);
  return out;
}

/** Alternate two ranked lists (RRF of separate indexes with equal weights). */
function interleave(a: IndexedUnit[], b: IndexedUnit[]): IndexedUnit[] {
  const out: IndexedUnit[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]) out.push(a[i]!);
    if (b[i]) out.push(b[i]!);
  }
  return out;
}

interface TurnOptions {
  /** Segments indexed as their words, without the denoised copy (SeCom's step off). */
  rawSegments?: boolean;
  weights?: HybridOptions['weights'];
  /** The model refines the timelines (and re-queries a weak retrieval), as the app does with one. */
  withModel?: boolean;
}

/**
 * The product's per-turn flow (src/memory/recall/turn.ts) over one index of memories and segments, as
 * MemoryService builds it. Without the model, timelines go in raw (the refinement-off switch).
 */
function productTurn(retrievalMode: RetrievalMode, switches: Partial<MemorySettings> = {}, o: TurnOptions = {}): Mode['turn'] {
  return (c, run) => {
    const segs = o.rawSegments ? segUnits(c).map((u) => ({ ...u, indexText: undefined })) : segUnits(c);
    // Topic nouns kept as the app keeps them with the switch on; used only where the switch is on.
    const nouns = switches.topicNouns || DEFAULT_MEMORY_SETTINGS.topicNouns ? c.nouns : undefined;
    const index = indexOf([...memUnits(c), ...segs], nouns, o.weights);
    // With --embedder, every unit's vector, as the app's index holds them once embedded.
    for (const [id, v] of c.vectors ?? []) if (index.has(id)) index.setVector(id, v);
    const memoriesById = new Map(c.memories.map((m) => [m.id, m]));
    const now = Math.max(...c.turns.map((t) => t.time)) + 86_400_000;
    const llm = o.withModel ? run.llm : undefined;
    return async (query, budget) => {
      const r = await prepareTurn({
        dialogue: [{ role: 'user', text: query }],
        now,
        index,
        graph: c.graph,
        memoriesById,
        llm,
        embedder: run.queryEmbedder,
        settings: withDefaults({ ...switches, retrievalMode, refinement: !!llm, contextBudgetWords: budget }),
        refineCache: new RefineCache(),
        seed: 1,
      });
      return {
        turnIds: [...new Set(r.units.flatMap((u) => u.sourceTurnIds))],
        units: r.units.length,
        words: r.budget.used,
        text: r.units.map((u) => promptItem(u.text)).join('\n'),
        timelines: r.units.filter((u) => u.kind === 'timeline').length,
        modelCalls: r.modelCalls,
      };
    };
  };
}

/** The flow with one switch flipped from its default; a memorising switch memorises again. */
function flipped(k: keyof MemorySettings & (typeof SIGNALS | typeof PAPER_SWITCHES)[number]): Mode {
  const flip = { [k]: !DEFAULT_MEMORY_SETTINGS[k] };
  return {
    name: `turn-flip-${k}`,
    describe: `turn with ${k} flipped from its default (${String(!DEFAULT_MEMORY_SETTINGS[k])})`,
    turn: productTurn('timelines', MEMORISING_SWITCHES.has(k) ? {} : flip),
    ...(MEMORISING_SWITCHES.has(k) ? { memorise: flip } : {}),
  };
}

export const MODES: Mode[] = [
  {
    name: 'turn',
    describe: 'the product per-turn flow: memories + segments, top-3 memories through timelines (raw), under the budget',
    turn: productTurn('timelines'),
    product: true,
  },
  {
    name: 'turn-plain-topk',
    describe: 'the product per-turn flow with the plain-topk switch (no graph)',
    turn: productTurn('plain-topk'),
    product: true,
  },
  // The method as the app runs it with a model: links labelled while memorising through
  // --endpoint, and the model refines each turn's timelines (Phase II-2).
  {
    name: 'turn-refined',
    describe:
      'turn with the model at reply time: timelines refined into notes (and a weak retrieval re-queried) on every turn (the app asks only when retrieval is unsure)',
    turn: productTurn('timelines', { refineWhenUnsure: false }, { withModel: true }),
    product: true,
    model: true,
  },
  // How the dense ranking is weighed in the fusion (the app: equal weights), for tuning it where a
  // real embedding model runs: dense hits first (lexical weight 0), and dense counted twice.
  {
    name: 'turn-dense-only',
    describe: 'turn with the lexical ranking weighed 0 (dense hits first; units only BM25 finds after them)',
    turn: productTurn('timelines', {}, { weights: { lexical: 0 } }),
    dense: true,
  },
  {
    name: 'turn-dense-x2',
    describe: 'turn with the dense ranking weighed twice the lexical one',
    turn: productTurn('timelines', {}, { weights: { dense: 2 } }),
    dense: true,
  },
  // Theanine as the paper has it, or Tealeaf's departure: each of the two switches flipped.
  ...PAPER_SWITCHES.map(flipped),
  {
    name: 'turn-departures',
    describe: 'turn with both departures from the paper: timelines from any memory with no incoming edge, same-session candidates',
    turn: productTurn('timelines', { timelineFromOldest: false }),
    memorise: { sameSessionCandidates: true },
  },
  ...[30, 180, 365].map((days): Mode => ({
    name: `turn-decay-${days}d`,
    describe: `turn with LD-Agent's time decay, half-life ${days} days`,
    turn: productTurn('timelines', { timeDecayHalfLifeDays: days }),
  })),
  {
    name: 'turn-raw-segments',
    describe: "turn with segments indexed without denoising (SeCom's index copy off)",
    turn: productTurn('timelines', {}, { rawSegments: true }),
  },
  // Every retrieval signal on its own over the flow with all of them off, and the default flow with
  // each one flipped: each signal is measured on and off.
  {
    name: 'turn-no-signals',
    describe: 'turn with every retrieval signal off',
    turn: productTurn('timelines', SIGNALS_OFF),
  },
  { name: 'plain-no-signals', describe: 'turn-plain-topk with every retrieval signal off', turn: productTurn('plain-topk', SIGNALS_OFF) },
  ...SIGNALS.map((k): Mode => ({
    name: `turn-only-${k}`,
    describe: `turn with only ${k} on`,
    turn: productTurn('timelines', { ...SIGNALS_OFF, [k]: true }),
  })),
  ...SIGNALS.map(flipped),
  {
    name: BASELINE,
    describe: 'BM25 over single turns, speaker name indexed (baseline)',
    build: (c) => {
      const ix = indexOf(turnUnits(c));
      return (q) => ranked(ix, q);
    },
  },
  {
    name: 'segments',
    describe: 'BM25 over denoised segments, original text in the prompt',
    build: (c) => {
      const ix = indexOf(segUnits(c));
      return (q) => ranked(ix, q);
    },
  },
  {
    name: 'segments-raw',
    describe: 'BM25 over segments without denoising',
    build: (c) => {
      const ix = indexOf(segUnits(c).map((u) => ({ ...u, indexText: undefined })));
      return (q) => ranked(ix, q);
    },
  },
  { name: 'memories', describe: 'BM25 over memories (the pipeline index)', build: (c) => (q) => ranked(c.memoryIndex, q) },
  {
    name: 'memories+timelines',
    describe: 'memories, top-3 expanded through their timelines',
    build: (c) => (q) => withTimelines(c, ranked(c.memoryIndex, q), 3),
  },
  {
    name: 'memories+segments',
    describe: 'one index over memories and segments',
    build: (c) => {
      const ix = indexOf([...memUnits(c), ...segUnits(c)]);
      return (q) => ranked(ix, q);
    },
  },
  {
    name: 'memories+segments-skipcovered',
    describe: 'one index over memories and segments, units whose turns are already packed skipped',
    build: (c) => {
      const ix = indexOf([...memUnits(c), ...segUnits(c)]);
      return (q) => ranked(ix, q);
    },
    skipCovered: true,
  },
  {
    name: 'memories+segments-rrf',
    describe: 'separate memory and segment indexes fused by rank',
    build: (c) => {
      const m = indexOf(memUnits(c));
      const s = indexOf(segUnits(c));
      return (q) => interleave(ranked(m, q), ranked(s, q));
    },
  },
  {
    name: 'memories+turns-rrf',
    describe: 'separate memory and turn indexes fused by rank',
    build: (c) => {
      const m = indexOf(memUnits(c));
      const t = indexOf(turnUnits(c));
      return (q) => interleave(ranked(m, q), ranked(t, q));
    },
  },
  {
    name: 'memories+turns-rrf+timelines',
    describe: 'memory and turn indexes fused, top-3 memories through timelines',
    build: (c) => {
      const m = indexOf(memUnits(c));
      const t = indexOf(turnUnits(c));
      return (q) => withTimelines(c, interleave(ranked(m, q), ranked(t, q)), 3);
    },
  },
];
