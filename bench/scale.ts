// Latency and memory of retrieval at scale.
//   node --expose-gc --import tsx bench/scale.ts [--json] [--all-signals]
// --all-signals: the turn runs with every retrieval signal on (the feedback query is a
// second search; speaker-aware search, routing and excerpts cost little), not the defaults.
// Synthetic memory graphs of 1k, 10k and 100k memories: 384-d random unit vectors, 12-word texts
// drawn from a Zipf-distributed synthetic vocabulary (so BM25 posting lists look like real ones),
// and edges older -> newer inside small components (about 1.5 per memory).
// - retrieve: one turn's hybrid top-k (k = 3, BM25 + dense fused) plus one timeline per retrieved
//   memory (timelines.ts), timed end to end. Queries are 8 words and a vector near a stored memory.
// - link: Phase I for one new memory, with a scripted labeller that answers instantly (model time
//   excluded): index insert with its vector, candidate search, labelling parse, component lookup,
//   edge insert.
// - turn: the app's whole per-turn preparation (prepareTurn at the default 300-word budget: the
//   fused search over a depth of 60, timelines, packing, prompt), the query vector given.
// - graphBuildMs: MemoryGraph.from over all memories and edges, as the app does at start.
// - heapMB: V8 heap plus typed-array buffers after a full GC (both are the app's memory).
// - pathological: a layered graph with 10^8 source-to-sink paths through one memory; time of one
//   timeline through it.
import { createHybridIndex } from '../src/memory/retrieval/hybrid';
import { MemoryGraph } from '../src/memory/graph';
import { linkMemory } from '../src/memory/ingest/linking';
import { timelinesForRetrieved, untangleTimelines } from '../src/memory/recall/timelines';
import { seededRng, type Rng } from '../src/memory/rng';
import { withDefaults } from '../src/memory/settings';
import { prepareTurn } from '../src/memory/recall/turn';
import { RefineCache } from '../src/memory/recall/refine';
import type { LanguageModel } from '../src/ports';
import type { Edge, Id, Memory } from '../src/memory/types';

const DIM = 384;
const SIZES = [1000, 10000, 100000];
const QUERIES = 200;
const LINKS = 50;
const gc = (globalThis as { gc?: () => void }).gc;
/** Full GCs with pauses between, so freed typed-array buffers are really released before measuring. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 30));
  }
}

function randomUnit(rng: Rng, out = new Float32Array(DIM)): Float32Array {
  let n = 0;
  for (let i = 0; i < DIM; i++) {
    const x = Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
    out[i] = x;
    n += x * x;
  }
  const s = 1 / Math.sqrt(n);
  for (let i = 0; i < DIM; i++) out[i]! *= s;
  return out;
}

function near(rng: Rng, v: Float32Array, noise: number): Float32Array {
  const r = randomUnit(rng);
  const out = new Float32Array(DIM);
  let n = 0;
  for (let i = 0; i < DIM; i++) {
    out[i] = v[i]! + noise * r[i]!;
    n += out[i]! * out[i]!;
  }
  const s = 1 / Math.sqrt(n);
  for (let i = 0; i < DIM; i++) out[i]! *= s;
  return out;
}

/** A synthetic vocabulary with Zipf(1) frequencies. */
function vocabulary(size: number): { words: string[]; cdf: Float64Array } {
  const syll = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'po', 'da', 'fi'];
  const words: string[] = [];
  for (let i = 0; words.length < size; i++) {
    let w = '';
    let x = i + 1;
    while (x > 0) {
      w += syll[x % syll.length];
      x = Math.floor(x / syll.length);
    }
    words.push(w);
  }
  const cdf = new Float64Array(size);
  let acc = 0;
  for (let i = 0; i < size; i++) cdf[i] = acc += 1 / (i + 1);
  for (let i = 0; i < size; i++) cdf[i]! /= acc;
  return { words, cdf };
}

function sampleWord(rng: Rng, v: { words: string[]; cdf: Float64Array }): string {
  const x = rng();
  let lo = 0;
  let hi = v.cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (v.cdf[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return v.words[lo]!;
}

const text = (rng: Rng, v: ReturnType<typeof vocabulary>, n: number) => Array.from({ length: n }, () => sampleWord(rng, v)).join(' ');

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}
const r2 = (x: number) => Math.round(x * 100) / 100;

/** Answers every labelling call at once: the nearest candidate SameTopic, the rest None. */
const instantLabeller: LanguageModel = {
  modelId: 'instant',
  chat: async () => '',
  json: async (_m, schema) => {
    const count = (schema.properties as { labels: { maxItems: number } }).labels.maxItems ?? 0;
    return JSON.stringify({
      labels: Array.from({ length: count }, (_, i) => ({ candidate: i + 1, relation: i === 0 ? 'SameTopic' : 'None' })),
    });
  },
};

function memoryAt(i: number, t: string): Memory {
  // One memory in five a trait about the user, one in twenty about the assistant (as summaries
  // make them): the persona banks of every turn read them.
  const kind = i % 5 === 0 ? 'user-trait' : i % 20 === 1 ? 'assistant-trait' : 'event';
  return {
    id: `m${String(i).padStart(7, '0')}`,
    kind,
    text: t,
    time: i * 60_000,
    sourceTurnIds: [`t${i}`],
    sessionId: `s${Math.floor(i / 20)}`,
    edited: false,
    createdAt: i,
  };
}

async function measure(n: number) {
  const rng = seededRng(n);
  const vocab = vocabulary(20000);
  await settle();
  const before = process.memoryUsage();
  const index = createHybridIndex({ dim: DIM });
  const graph = new MemoryGraph();
  const memories = new Map<Id, Memory>();
  const vectors: Float32Array[] = [];
  const edgeList: Edge[] = [];
  // Components of ~30 memories spread over time; each new memory links to 1-2 older ones in its
  // component (what Phase I produces: the most recent labelled memory per component).
  const components = Math.max(1, Math.floor(n / 30));
  const lastIn: Id[][] = Array.from({ length: components }, () => []);
  let edges = 0;
  for (let i = 0; i < n; i++) {
    const m = memoryAt(i, text(rng, vocab, 12));
    const v = randomUnit(rng);
    memories.set(m.id, m);
    index.upsert({ id: m.id, kind: 'memory', text: m.text, time: m.time, sessionId: m.sessionId, sourceTurnIds: m.sourceTurnIds }, v);
    graph.addMemory(m.id, m.time, m.createdAt);
    if (vectors.length < 1000) vectors.push(v);
    const c = Math.floor(rng() * components);
    const olders = lastIn[c]!;
    const links = olders.length === 0 ? 0 : rng() < 0.5 ? 1 : 2;
    for (let j = 0; j < links && j < olders.length; j++) {
      const from = olders[olders.length - 1 - Math.floor(rng() * Math.min(5, olders.length))]!;
      const e: Edge = { id: `e:${from}->${m.id}`, from, to: m.id, relation: 'SameTopic', origin: 'similarity', createdAt: i };
      if (graph.addEdge(e)) {
        edges++;
        edgeList.push(e);
      }
    }
    olders.push(m.id);
  }
  await settle();
  const after = process.memoryUsage();
  const heapMB = (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / 2 ** 20;

  // Graph build from the stored records, as MemoryService.load does at start (median of 3).
  const builds: number[] = [];
  for (let b = 0; b < 3; b++) {
    const t0 = performance.now();
    const g = MemoryGraph.from(memories.values(), edgeList);
    builds.push(performance.now() - t0);
    if (g.edgeCount !== edges) throw new Error('graph rebuild lost edges');
  }

  // Retrieval: warm up, then time QUERIES turns.
  const times: number[] = [];
  let denseFound = 0;
  for (let q = 0; q < QUERIES + 20; q++) {
    const target = Math.floor(rng() * Math.min(n, vectors.length));
    const qv = near(rng, vectors[target]!, 0.6);
    const query = text(rng, vocab, 8);
    const t0 = performance.now();
    const hits = index.search(query, qv, 3);
    const timelines = timelinesForRetrieved(
      graph,
      hits.map((h) => h.unit.id),
      q,
    );
    const dt = performance.now() - t0;
    if (timelines.length === 0 && hits.length > 0) throw new Error('no timelines');
    if (q >= 20) {
      times.push(dt);
      // Recall of the dense side alone (sign-bit scan above 2048 vectors is approximate).
      if (index.vectors!.search(qv, 3).some((h) => h.id === memoryAt(target, '').id)) denseFound++;
    }
  }

  // The whole per-turn preparation (prepareTurn: retrieval over the index at the default budget,
  // timelines, raw since no model, prompt assembly).
  const allSignals = process.argv.includes('--all-signals');
  const turnSettings = withDefaults({
    refinement: false,
    ...(allSignals ? { speakerAware: true, feedbackQuery: true, queryRouting: true, segmentExcerpts: true } : {}),
  });
  const turnTimes: number[] = [];
  // The same turns without the persona banks, interleaved with the others (same machine load).
  const noBankSettings = { ...turnSettings, personaBankShare: 0 };
  const turnNoBankTimes: number[] = [];
  for (let q = 0; q < QUERIES / 2 + 10; q++) {
    const target = Math.floor(rng() * Math.min(n, vectors.length));
    const qv = near(rng, vectors[target]!, 0.6);
    const query = text(rng, vocab, 8);
    const embedder = { modelId: 'fixed', dimension: DIM, embed: async () => [qv] };
    for (const [settings, times] of q % 2
      ? ([
          [turnSettings, turnTimes],
          [noBankSettings, turnNoBankTimes],
        ] as const)
      : ([
          [noBankSettings, turnNoBankTimes],
          [turnSettings, turnTimes],
        ] as const)) {
      const t0 = performance.now();
      await prepareTurn({
        dialogue: [{ role: 'user', text: query }],
        now: n * 60_000,
        index,
        graph,
        memoriesById: memories,
        embedder,
        settings,
        refineCache: new RefineCache(),
        seed: q,
      });
      const dt = performance.now() - t0;
      if (q >= 10) times.push(dt);
    }
  }

  // Linking (Phase I), scripted instant labeller.
  const settings = withDefaults({ relationAwareLinking: true });
  const linkTimes: number[] = [];
  for (let l = 0; l < LINKS + 5; l++) {
    const m = memoryAt(n + l, text(rng, vocab, 12));
    const v = randomUnit(rng);
    const t0 = performance.now();
    memories.set(m.id, m);
    graph.addMemory(m.id, m.time, m.createdAt);
    index.upsert({ id: m.id, kind: 'memory', text: m.text, time: m.time, sessionId: m.sessionId, sourceTurnIds: m.sourceTurnIds }, v);
    const plan = await linkMemory({
      memory: m,
      graph,
      index,
      lookup: (id) => memories.get(id),
      settings,
      llm: instantLabeller,
      vector: v,
      now: m.createdAt,
    });
    for (const e of plan.edges) graph.addEdge(e);
    const dt = performance.now() - t0;
    if (l >= 5) linkTimes.push(dt);
  }
  return {
    retrieveP50Ms: r2(percentile(times, 0.5)),
    retrieveP95Ms: r2(percentile(times, 0.95)),
    linkP50Ms: r2(percentile(linkTimes, 0.5)),
    turnP50Ms: r2(percentile(turnTimes, 0.5)),
    turnWithoutPersonaBanksP50Ms: r2(percentile(turnNoBankTimes, 0.5)),
    graphBuildMs: Math.round(percentile(builds, 0.5)),
    heapMB: Math.round(heapMB),
    edges,
    denseTop3HasNeighbour: r2(denseFound / QUERIES),
  };
}

function pathological() {
  // Layers of width W fully connected to the next: W^L paths on each side of the middle memory.
  const W = 10;
  const L = 4;
  const graph = new MemoryGraph();
  const layer = (l: number) => Array.from({ length: l === L ? 1 : W }, (_, i) => `p${l}:${i}`);
  const layers = Array.from({ length: 2 * L + 1 }, (_, l) => layer(l));
  layers.forEach((ids, l) => ids.forEach((id) => graph.addMemory(id, l * 1000, 0)));
  for (let l = 0; l + 1 < layers.length; l++) {
    for (const a of layers[l]!)
      for (const b of layers[l + 1]!) graph.addEdge({ id: `${a}->${b}`, from: a, to: b, relation: 'Cause', origin: 'model', createdAt: 0 });
  }
  const paths = W ** L * W ** L;
  const through = layers[L]![0]!;
  const times: number[] = [];
  for (let i = 0; i < 120; i++) {
    const t0 = performance.now();
    const t = untangleTimelines(graph, through, { seed: i });
    times.push(performance.now() - t0);
    if (t.memoryIds.length !== 2 * L + 1) throw new Error(`bad timeline length ${t.memoryIds.length}`);
  }
  return {
    timelineMs: r2(percentile(times.slice(20), 0.5)),
    timelineP95Ms: r2(percentile(times.slice(20), 0.95)),
    pathsThroughNode: paths,
    edges: graph.edgeCount,
  };
}

async function main(): Promise<void> {
  if (!gc) console.error('note: run with node --expose-gc for a stable heap figure');
  const out: Record<string, unknown> = {};
  for (const n of SIZES) {
    out[n] = await measure(n);
    await settle();
  }
  out.pathological = pathological();
  if (process.argv.includes('--json')) console.log(JSON.stringify(out, null, 2));
  else for (const [k, v] of Object.entries(out)) console.log(k.padEnd(13), JSON.stringify(v));
}

await main();
