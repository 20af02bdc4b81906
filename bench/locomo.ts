// LoCoMo retrieval under a context budget (docs/METHOD.md, section 6, "The offline retrieval
// benchmark").
//   npx tsx bench/locomo.ts --data <file or directory of LoCoMo json> [--json] [--modes a,b]
//     [--endpoint <OpenAI-compatible URL> --model <name> [--api-key <key>] [--cache <dir>]]
//     [--embedder <local transformers.js model folder> [--pooling mean|cls]]
// Each conversation goes through the real memorise pipeline (bench/lib/locomo-ingest.ts). By
// default it is LLM-free and embedding-free: LoCoMo's observations stand in for the summarising
// call, so the figures are an upper bound, and retrieval is lexical. --endpoint has a model
// summarise (the product path); --embedder adds the app's dense ranking to the product modes.
// Then every question of categories 1-4 retrieves under budgets of 300 and 1000 words. Two metrics
// (bench/lib/locomo-metrics.ts), overall, by category and by file:
// - recall: share of the question's evidence turns among the source turns of the packed units;
// - answer hit: for questions with a short gold answer, whether it appears in the remembered text.
// Every mode pays for every word it puts into the prompt: list bullets, dates, speakers' names.
// The modes 'turn' and 'turn-plain-topk' run the app's own per-turn code (prepareTurn,
// src/memory/recall/turn.ts) with contextBudgetWords = the budget; "best" is the better of those
// two; 'turn-no-*' modes switch one retrieval signal off. Evidence ids that name no turn of the
// conversation (a handful of LoCoMo annotation errors) are dropped; questions left with no evidence
// are skipped.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseLocomoConversation } from '../src/memory/locomo';
import { memoryUnit } from '../src/memory/ingest/memorise';
import { timelinesForRetrieved } from '../src/memory/recall/timelines';
import { seedFrom } from '../src/memory/rng';
import { createHybridIndex, type HybridOptions } from '../src/memory/retrieval/hybrid';
import { packByBudget, promptItem, promptItemCost } from '../src/memory/retrieval/budget';
import { segmentUnit, turnUnit } from '../src/memory/retrieval/units';
import type { HybridIndex, IndexedUnit } from '../src/memory/retrieval/types';
import type { Id } from '../src/memory/types';
import { memoryLine, prepareTurn, segmentBlock } from '../src/memory/recall/turn';
import { promptDate } from '../src/memory/text';
import { answerHit, shortAnswerForms, Tally } from './lib/locomo-metrics';
import { RefineCache } from '../src/memory/recall/refine';
import { DEFAULT_MEMORY_SETTINGS, withDefaults, type MemorySettings, type RetrievalMode } from '../src/memory/settings';
import { ingestLocomo, type Ingested } from './lib/locomo-ingest';
import type { NounExtractor } from '../src/memory/retrieval/topics';
import type { Embedder } from '../src/ports';
import type { Pooling } from '../src/models/catalog';
import { localEmbedder } from './lib/bench-models';
import { serverModel } from './lib/qa/model-cache';

const BUDGETS = [300, 1000] as const;
const BASELINE = 'turns-bm25';
/** The retrieval signals of issue 13, each a switch in MemorySettings. */
const SIGNALS = ['speakerAware', 'feedbackQuery', 'queryRouting', 'segmentExcerpts', 'topicNouns'] as const;
const SIGNALS_OFF: Partial<MemorySettings> = Object.fromEntries(SIGNALS.map((k) => [k, false]));
const CATEGORY: Record<string, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
/** Units fetched per query: enough to fill the larger budget with the smallest units. */
const DEPTH = 200;

type Retriever = (query: string) => IndexedUnit[];
/** What a question's retrieval put in the prompt under a budget. */
interface Retrieved {
  turnIds: Id[];
  units: number;
  /** Words paid from the budget. */
  words: number;
  /** The remembered material as written into the prompt (bullets, dates, speakers). */
  text: string;
}
interface Mode {
  name: string;
  describe: string;
  build?: (c: Ingested) => Retriever;
  skipCovered?: boolean;
  /** One of the product's retrieval modes, among which "best" is chosen. */
  product?: boolean;
  /** Retrieval and packing done by the product's per-turn code (prepareTurn). */
  turn?: (c: Ingested) => (query: string, budget: number) => Promise<Retrieved>;
  /** Runs only with --embedder (it differs from another mode only in how it weighs the vectors). */
  dense?: boolean;
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
function promptTextOf(c: Ingested): (u: IndexedUnit) => string {
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

/** The --embedder model, its query vectors kept (each question is asked by many modes). */
let queryEmbedder: Embedder | undefined;
/** Closed when the run ends. */
let embedRuntime: { dispose(): void } | undefined;
function rememberingQueries(inner: Embedder): Embedder {
  const seen = new Map<string, Float32Array>();
  return {
    modelId: inner.modelId,
    dimension: inner.dimension,
    async embed(texts, signal) {
      const missing = [...new Set(texts.filter((t) => !seen.has(t)))];
      const vs = missing.length ? await inner.embed(missing, signal) : [];
      missing.forEach((t, i) => seen.set(t, vs[i]!));
      return texts.map((t) => seen.get(t)!);
    },
  };
}

/**
 * The product's per-turn flow (src/memory/recall/turn.ts) over one index of memories and segments, as
 * MemoryService builds it; no model, so timelines go in raw (the refinement-off switch).
 */
function productTurn(
  retrievalMode: RetrievalMode,
  switches: Partial<MemorySettings> = {},
  rawSegments = false,
  weights?: HybridOptions['weights'],
): Mode['turn'] {
  return (c) => {
    // rawSegments: segments indexed as their words, without the denoised copy (SeCom's step off).
    const segs = rawSegments ? segUnits(c).map((u) => ({ ...u, indexText: undefined })) : segUnits(c);
    // Topic nouns kept as the app keeps them with the switch on; used only where the switch is on.
    const nouns = switches.topicNouns || DEFAULT_MEMORY_SETTINGS.topicNouns ? c.nouns : undefined;
    const index = indexOf([...memUnits(c), ...segs], nouns, weights);
    // With --embedder, every unit's vector, as the app's index holds them once embedded.
    for (const [id, v] of c.vectors ?? []) if (index.has(id)) index.setVector(id, v);
    const memoriesById = new Map(c.memories.map((m) => [m.id, m]));
    const now = Math.max(...c.turns.map((t) => t.time)) + 86_400_000;
    return async (query, budget) => {
      const r = await prepareTurn({
        dialogue: [{ role: 'user', text: query }],
        now,
        index,
        graph: c.graph,
        memoriesById,
        embedder: queryEmbedder,
        settings: withDefaults({ ...switches, retrievalMode, refinement: false, contextBudgetWords: budget }),
        refineCache: new RefineCache(),
        seed: 1,
      });
      return {
        turnIds: [...new Set(r.units.flatMap((u) => u.sourceTurnIds))],
        units: r.units.length,
        words: r.budget.used,
        text: r.units.map((u) => promptItem(u.text)).join('\n'),
      };
    };
  };
}

const MODES: Mode[] = [
  {
    name: 'turn',
    describe: 'the product per-turn flow: memories + segments, top-3 memories through timelines, under the budget',
    turn: productTurn('timelines'),
    product: true,
  },
  {
    name: 'turn-plain-topk',
    describe: 'the product per-turn flow with the plain-topk switch (no graph)',
    turn: productTurn('plain-topk'),
    product: true,
  },
  // How the dense ranking is weighed in the fusion (the app: equal weights), for tuning it where a
  // real embedding model runs: dense hits first (lexical weight 0), and dense counted twice.
  {
    name: 'turn-dense-only',
    describe: 'turn with the lexical ranking weighed 0 (dense hits first; units only BM25 finds after them)',
    turn: productTurn('timelines', {}, false, { lexical: 0 }),
    dense: true,
  },
  {
    name: 'turn-dense-x2',
    describe: 'turn with the dense ranking weighed twice the lexical one',
    turn: productTurn('timelines', {}, false, { dense: 2 }),
    dense: true,
  },
  ...[30, 180, 365].map((days): Mode => ({
    name: `turn-decay-${days}d`,
    describe: `turn with LD-Agent's time decay, half-life ${days} days`,
    turn: productTurn('timelines', { timeDecayHalfLifeDays: days }),
  })),
  {
    name: 'turn-raw-segments',
    describe: "turn with segments indexed without denoising (SeCom's index copy off)",
    turn: productTurn('timelines', {}, true),
  },
  // Every retrieval signal on its own over the flow with all of them off, and the default flow with
  // each one flipped: each signal is measured on and off.
  {
    name: 'turn-no-signals',
    describe: 'turn with every retrieval signal off (the flow before issue 13)',
    turn: productTurn('timelines', SIGNALS_OFF),
  },
  { name: 'plain-no-signals', describe: 'turn-plain-topk with every retrieval signal off', turn: productTurn('plain-topk', SIGNALS_OFF) },
  ...SIGNALS.map((k): Mode => ({
    name: `turn-only-${k}`,
    describe: `turn with only ${k} on`,
    turn: productTurn('timelines', { ...SIGNALS_OFF, [k]: true }),
  })),
  ...SIGNALS.map((k): Mode => ({
    name: `turn-flip-${k}`,
    describe: `turn with ${k} flipped from its default (${String(!DEFAULT_MEMORY_SETTINGS[k])})`,
    turn: productTurn('timelines', { [k]: !DEFAULT_MEMORY_SETTINGS[k] }),
  })),
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

interface Question {
  category: number;
  query: string;
  evidence: Id[];
  /** Forms of a short gold answer (answer hit), or undefined when the answer is long or absent. */
  answer?: string[];
}

function questionsOf(c: Ingested): Question[] {
  const out: Question[] = [];
  for (const q of c.conv.qa) {
    if (q.category < 1 || q.category > 4) continue;
    const evidence = [...new Set(q.evidence.map((d) => c.turnIdOf.get(d)).filter((x): x is Id => x !== undefined))];
    if (evidence.length === 0) continue;
    out.push({ category: q.category, query: q.question, evidence, answer: shortAnswerForms(q.answer) });
  }
  return out;
}

/** A metric at both budgets with the number of questions it averages over. */
type Metric = Record<string, number>;
interface ModeResult {
  recall: Metric;
  byCategory: Record<string, Metric>;
  answerHit: Metric;
  answerHitByCategory: Record<string, Metric>;
  /** Per file: recall and answer hit at both budgets (the spread of a change across files). */
  byFile: Record<string, { recall: Metric; answerHit: Metric }>;
  avgUnits: Metric;
  avgWords: Metric;
}

function files(path: string): string[] {
  if (statSync(path).isDirectory())
    return readdirSync(path)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => join(path, f));
  return [path];
}

/** {"300": mean, "1000": mean, n} for the keys `${prefix}${budget}`. */
function metric(t: Tally, prefix: string): Metric {
  const out: Metric = {};
  for (const b of BUDGETS) out[b] = t.mean(`${prefix}${b}`) ?? 0;
  out.n = t.count(`${prefix}${BUDGETS[0]}`);
  return out;
}

async function runMode(mode: Mode, ingested: Ingested[], names: string[]): Promise<ModeResult> {
  const recall = new Tally();
  const hit = new Tally();
  const size = new Tally();
  for (const [ci, c] of ingested.entries()) {
    const retrieve = mode.build?.(c);
    const turn = mode.turn?.(c);
    const render = promptTextOf(c);
    for (const q of questionsOf(c)) {
      const list = retrieve?.(q.query) ?? [];
      for (const b of BUDGETS) {
        let got: Retrieved;
        if (turn) got = await turn(q.query, b);
        else {
          const packed = packByBudget(list, b, { skipCovered: mode.skipCovered, cost: (u) => promptItemCost(render(u)) });
          got = {
            turnIds: packed.turnIds,
            units: packed.units.length,
            words: packed.used,
            text: packed.units.map((p) => promptItem(render(p.unit))).join('\n'),
          };
        }
        const have = new Set(got.turnIds);
        const r = q.evidence.filter((e) => have.has(e)).length / q.evidence.length;
        for (const key of [`${b}`, `${q.category}:${b}`, `f${ci}:${b}`]) recall.add(key, r);
        if (q.answer) {
          const h = answerHit(q.answer, got.text) ? 1 : 0;
          for (const key of [`${b}`, `${q.category}:${b}`, `f${ci}:${b}`]) hit.add(key, h);
        }
        size.add(`units${b}`, got.units);
        size.add(`words${b}`, got.words);
      }
    }
  }
  const byCategory: Record<string, Metric> = {};
  const answerHitByCategory: Record<string, Metric> = {};
  for (const cat of [1, 2, 3, 4]) {
    if (recall.count(`${cat}:${BUDGETS[0]}`) > 0) byCategory[cat] = metric(recall, `${cat}:`);
    if (hit.count(`${cat}:${BUDGETS[0]}`) > 0) answerHitByCategory[cat] = metric(hit, `${cat}:`);
  }
  const byFile = Object.fromEntries(names.map((name, i) => [name, { recall: metric(recall, `f${i}:`), answerHit: metric(hit, `f${i}:`) }]));
  const avg = (prefix: string) => Object.fromEntries(BUDGETS.map((b) => [b, Math.round((size.mean(`${prefix}${b}`) ?? 0) * 10) / 10]));
  return {
    recall: metric(recall, ''),
    byCategory,
    answerHit: metric(hit, ''),
    answerHitByCategory,
    byFile,
    avgUnits: avg('units'),
    avgWords: avg('words'),
  };
}

const UPPER_BOUND_NOTE =
  "No model endpoint: LoCoMo's own observations stand in for the summarising call (memories written by a " +
  'strong model with exact source turns), so these figures are an upper bound for what a small local model would give.';

const USAGE =
  'usage: tsx bench/locomo.ts --data <file or directory of LoCoMo json> [--json] [--modes name,name]\n' +
  '         [--endpoint <OpenAI-compatible URL> --model <name> [--api-key <key>] [--cache <dir>]]\n' +
  '         [--embedder <local transformers.js model folder> [--pooling mean|cls]]';

const MODEL_NOTE = 'Summaries, link labels and topic segments come from the model behind --endpoint: the product path.';
const LEXICAL_NOTE =
  'No embedder: retrieval is lexical (BM25 and the retrieval signals); the app also fuses a dense ranking once its embedding model is loaded (--embedder measures that).';
const DENSE_NOTE = (id: string) =>
  `Dense retrieval with ${id} in the product modes (turn...), fused with the lexical ranking as in the app; the reference modes and the baseline stay lexical.`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const data = opt('--data');
  if (!data) {
    console.error(USAGE);
    process.exit(2);
  }
  const json = args.includes('--json');
  // --splitter min,max,cutoff: explore segment sizes (defaults: DEFAULT_SPLITTER).
  const sp = opt('--splitter');
  const splitter = sp ? (([minTurns, maxTurns, cutoff]) => ({ minTurns, maxTurns, cutoff }))(sp.split(',').map(Number)) : undefined;
  // --modes a,b: run only these modes (the baseline and the product modes always run).
  const mo = opt('--modes');
  const only = mo ? new Set(mo.split(',')) : undefined;
  // --endpoint: the model summarises every session (the product path) instead of LoCoMo's observations.
  const endpoint = opt('--endpoint');
  const modelName = opt('--model');
  if (endpoint && !modelName) {
    console.error(`--endpoint needs --model <name>\n${USAGE}`);
    process.exit(2);
  }
  const llm =
    endpoint && modelName
      ? serverModel({
          endpoint,
          model: modelName,
          apiKey: opt('--api-key') ?? process.env.OPENAI_API_KEY,
          cacheDir: opt('--cache') ?? '.tmp/locomo-cache',
        })
      : undefined;
  // --embedder: the product modes fuse a dense ranking from this model, as the app does once its
  // embedding model is loaded.
  const embedderDir = opt('--embedder');
  const pooling = opt('--pooling') as Pooling | undefined;
  if (pooling && pooling !== 'mean' && pooling !== 'cls') {
    console.error(`--pooling is mean or cls\n${USAGE}`);
    process.exit(2);
  }
  const embedder = embedderDir ? localEmbedder(embedderDir, pooling) : undefined;
  queryEmbedder = embedder ? rememberingQueries(embedder) : undefined;
  embedRuntime = embedder;
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const paths = files(data);
  const names = paths.map((p) => p.split('/').pop()!);
  const ingested: Ingested[] = [];
  for (const [i, p] of paths.entries())
    ingested.push(
      await ingestLocomo(parseLocomoConversation(JSON.parse(readFileSync(p, 'utf8'))), `c${i}`, {
        splitter,
        llm,
        embedder,
        log: llm || embedder ? progress : undefined,
      }),
    );

  const modes: Record<string, ModeResult & { describe: string }> = {};
  for (const mode of MODES) {
    if (only && !only.has(mode.name) && !mode.product && mode.name !== BASELINE) continue;
    if (mode.dense && !embedder) continue;
    modes[mode.name] = { describe: mode.describe, ...(await runMode(mode, ingested, names)) };
  }
  const questions = ingested.reduce((a, c) => a + questionsOf(c).length, 0);
  const score = (m: ModeResult) => m.recall[300]! + m.recall[1000]!;
  // "best" is chosen among the product's own per-turn flow (its retrieval modes), so the headline
  // figure is what the app does; the other modes stay in "modes" as references.
  const product = new Set(MODES.filter((m) => m.product).map((m) => m.name));
  const bestName = Object.keys(modes)
    .filter((k) => product.has(k))
    .sort((a, b) => score(modes[b]!) - score(modes[a]!))[0]!;
  const summary = (name: string) => {
    const m = modes[name]!;
    return {
      mode: name,
      recall: m.recall,
      byCategory: m.byCategory,
      answerHit: m.answerHit,
      answerHitByCategory: m.answerHitByCategory,
      byFile: m.byFile,
    };
  };
  const summariser = llm ? { kind: 'model', endpoint, model: modelName, calls: { ...llm.stats } } : { kind: 'observations' };
  // Which modes use it: denseNote.
  const dense = embedder ? { id: embedder.modelId, dimension: embedder.dimension } : null;
  const result = {
    note: llm ? MODEL_NOTE : UPPER_BOUND_NOTE,
    denseNote: embedder ? DENSE_NOTE(embedder.modelId) : LEXICAL_NOTE,
    summariser,
    embedder: dense,
    data: names,
    conversations: ingested.length,
    questions,
    shortAnswerQuestions: modes[BASELINE]!.answerHit.n,
    memories: ingested.reduce((a, c) => a + c.memories.length, 0),
    segments: ingested.reduce((a, c) => a + c.segments.length, 0),
    edges: ingested.reduce((a, c) => a + c.graph.edgeCount, 0),
    modelCallsWhileIngesting: ingested.reduce((a, c) => a + c.modelCalls, 0),
    baseline: summary(BASELINE),
    best: summary(bestName),
    modes,
  };
  if (json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  const f = (x: number | undefined) => (x ?? 0).toFixed(3);
  console.log(
    `LoCoMo retrieval: ${result.conversations} conversation(s), ${questions} questions (categories 1-4), ${result.shortAnswerQuestions} with a short answer`,
  );
  console.log(result.note);
  console.log(result.denseNote);
  console.log('mode                           recall @300/@1000   answer hit @300/@1000   units   words');
  for (const [name, m] of Object.entries(modes)) {
    console.log(
      `${name.padEnd(30)} ${f(m.recall[300])} / ${f(m.recall[1000])}       ${f(m.answerHit[300])} / ${f(m.answerHit[1000])}           ${m.avgUnits[300]}/${m.avgUnits[1000]}  ${m.avgWords[300]}/${m.avgWords[1000]}  ${m.describe}`,
    );
  }
  for (const name of [BASELINE, bestName]) {
    const m = modes[name]!;
    console.log(`${name === BASELINE ? 'baseline' : 'best'} (${name}) by category, recall | answer hit, @300/@1000 (n):`);
    for (const cat of Object.keys(m.byCategory)) {
      const r = m.byCategory[cat]!;
      const h = m.answerHitByCategory[cat];
      console.log(
        `  ${cat} ${CATEGORY[cat] ?? ''}: ${f(r[300])}/${f(r[1000])} (${r.n}) | ${h ? `${f(h[300])}/${f(h[1000])} (${h.n})` : '-'}`,
      );
    }
  }
}

try {
  await main();
} finally {
  embedRuntime?.dispose();
}
