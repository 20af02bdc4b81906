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
// src/memory/recall/turn.ts) with contextBudgetWords = the budget, and with --endpoint so does
// 'turn-refined' (the model refines the timelines at reply time); "best" is the best of those.
// Every mode is also reported at the app's default budget (atDefaultBudget), with what timelines
// and refinement add there. The modes are in bench/lib/locomo-modes.ts, the scoring in
// bench/lib/locomo-report.ts. Evidence ids that name no turn of the conversation (a handful of
// LoCoMo annotation errors) are dropped; questions left with no evidence are skipped.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseLocomoConversation, type LocomoConversation } from '../src/memory/locomo';
import type { Embedder } from '../src/ports';
import type { Pooling } from '../src/models/catalog';
import type { MemorySettings } from '../src/memory/settings';
import { ingestLocomo, type Ingested } from './lib/locomo-ingest';
import { localEmbedder } from './lib/bench-models';
import { serverModel } from './lib/qa/model-cache';
import { BASELINE, MODES, type Mode } from './lib/locomo-modes';
import { atBudget, DEFAULT_BUDGET, methodSteps, printReport, questionsOf, runMode, type ModeResult } from './lib/locomo-report';

/** The --embedder model, its query vectors kept (each question is asked by many modes). */
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
/** Closed when the run ends. */
let embedRuntime: { dispose(): void } | undefined;

function files(path: string): string[] {
  if (statSync(path).isDirectory())
    return readdirSync(path)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => join(path, f));
  return [path];
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

const REFINED_NOTE =
  "turn-refined: the model behind --endpoint refines each turn's timelines into notes (Phase II-2); a note replaces its timeline in the prompt, an empty one drops it.";
const NO_MODEL_NOTE =
  'Model-free: links are by similarity (no labels) and timelines go in raw (no refinement), so these figures measure the retrieval machinery, not what relation labels and refinement add (--endpoint runs turn-refined).';

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
  embedRuntime = embedder;
  const run = { llm, queryEmbedder: embedder ? rememberingQueries(embedder) : undefined };
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const paths = files(data);
  const names = paths.map((p) => p.split('/').pop()!);
  const conversations: LocomoConversation[] = paths.map((p) => parseLocomoConversation(JSON.parse(readFileSync(p, 'utf8'))));
  // Memorised once per memorising setting (a mode that flips one memorises again).
  const memorised = new Map<string, Promise<Ingested[]>>();
  const ingestWith = (settings: Partial<MemorySettings> = {}): Promise<Ingested[]> => {
    const key = JSON.stringify(settings);
    if (!memorised.has(key))
      memorised.set(
        key,
        (async () => {
          const out: Ingested[] = [];
          for (const [i, conv] of conversations.entries())
            out.push(await ingestLocomo(conv, `c${i}`, { splitter, llm, embedder, settings, log: llm || embedder ? progress : undefined }));
          return out;
        })(),
      );
    return memorised.get(key)!;
  };
  const ingested = await ingestWith();

  const runs = (mode: Mode) => {
    const named = only?.has(mode.name) ?? false;
    if (only && !named && !mode.product && mode.name !== BASELINE) return false;
    if (mode.dense && !embedder) return false;
    if (mode.model && !llm) return false;
    // With a model, memorising again costs a labelling call per memory: only when asked for by name.
    return !(mode.memorise && llm && !named);
  };
  const modes: Record<string, ModeResult & { describe: string }> = {};
  for (const mode of MODES) {
    if (!runs(mode)) continue;
    const conv = mode.memorise ? await ingestWith(mode.memorise) : ingested;
    modes[mode.name] = { describe: mode.describe, ...(await runMode(mode, conv, names, run)) };
  }
  const questions = ingested.reduce((a, c) => a + questionsOf(c).length, 0);
  const score = (m: ModeResult) => m.recall[300]! + m.recall[1000]!;
  // "best" is chosen among the product's own per-turn flow (its retrieval modes), so the headline
  // figure is what the app does; the other modes stay in "modes" as references.
  const product = Object.keys(modes).filter((k) => MODES.find((m) => m.name === k)?.product);
  const bestName = [...product].sort((a, b) => score(modes[b]!) - score(modes[a]!))[0]!;
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
  // Every mode at the app's default budget, and the best product mode there (recall, then answer hit).
  const atDefault = Object.fromEntries(Object.entries(modes).map(([name, m]) => [name, atBudget(m, DEFAULT_BUDGET)]));
  const bestAtDefault = [...product].sort(
    (a, b) => atDefault[b]!.recall - atDefault[a]!.recall || atDefault[b]!.answerHit - atDefault[a]!.answerHit,
  )[0]!;
  const summariser = llm ? { kind: 'model', endpoint, model: modelName, calls: { ...llm.stats } } : { kind: 'observations' };
  // Which modes use it: denseNote.
  const dense = embedder ? { id: embedder.modelId, dimension: embedder.dimension } : null;
  const result = {
    note: llm ? MODEL_NOTE : UPPER_BOUND_NOTE,
    denseNote: embedder ? DENSE_NOTE(embedder.modelId) : LEXICAL_NOTE,
    methodNote: llm ? REFINED_NOTE : NO_MODEL_NOTE,
    summariser,
    embedder: dense,
    data: names,
    conversations: ingested.length,
    questions,
    shortAnswerQuestions: modes[BASELINE]!.answerHit.n!,
    memories: ingested.reduce((a, c) => a + c.memories.length, 0),
    segments: ingested.reduce((a, c) => a + c.segments.length, 0),
    edges: ingested.reduce((a, c) => a + c.graph.edgeCount, 0),
    modelCallsWhileIngesting: ingested.reduce((a, c) => a + c.modelCalls, 0),
    baseline: summary(BASELINE),
    best: summary(bestName),
    atDefaultBudget: { words: DEFAULT_BUDGET, best: bestAtDefault, modes: atDefault, method: methodSteps(atDefault) },
    modes,
  };
  if (json) console.log(JSON.stringify(result, null, 2));
  else {
    printReport(result);
    console.log(result.methodNote);
  }
}

try {
  await main();
} finally {
  embedRuntime?.dispose();
}
