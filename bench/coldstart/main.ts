// The cold-start benchmark page. Two modes, chosen by the query string:
//   ?seed&n=10000  writes n synthetic memories (12-word texts), ~1.3 edges per memory and one
//                  384-d vector per memory into IndexedDB through the app's own store;
//   ?measure       (after a reload) times what the app does at start: open the database, then
//                  MemoryService.load() (list memories, edges and segments, build the hybrid index
//                  and the memory graph, list the embedding model's vectors and attach them).
//   ?breakdown     the same two halves timed apart: reading the stores, then building.
//   ?experiment    alternative ways to read the same data (primary key vs index, packed vectors).
// The result is left in window.coldstart for the driver (bench/coldstart.mjs).
import { IdbRepository } from '../../src/store';
import { MemoryService } from '../../src/services/memory/memory';
import { SettingsService } from '../../src/services/settings';
import { createHybridIndex } from '../../src/memory/retrieval/hybrid';
import { MemoryGraph } from '../../src/memory/graph';
import { memoryUnit } from '../../src/memory/ingest/memorise';
import { seededRng, type Rng } from '../../src/memory/rng';
import type { Embedder } from '../../src/ports';
import type { Edge, Memory, VectorRecord } from '../../src/memory/types';

const MODEL = 'coldstart-bench-384';
const DIM = 384;
const T0 = Date.UTC(2020, 0, 1);

export interface ColdstartResult {
  mode: 'seed' | 'measure' | 'breakdown' | 'experiment';
  ms: Record<string, number>;
  counts: { memories: number; edges: number; vectors: number };
  error?: string;
}

declare global {
  interface Window {
    coldstart?: ColdstartResult;
  }
}

/** Load only needs the embedder's identity; nothing is embedded at start. */
const embedder: Embedder = { modelId: MODEL, dimension: DIM, embed: async () => [] };

const WORDS = (
  'garden trip sister coffee painting concert dog hike beach exam project recipe bakery guitar novel ' +
  'museum marathon camping violin school promotion wedding cousin puppy kayak pottery festival ' +
  'library yoga sunset mountain river train airport visa apartment neighbour bicycle lesson'
).split(' ');

function unitVector(rng: Rng): Float32Array {
  const v = new Float32Array(DIM);
  let n = 0;
  for (let i = 0; i < DIM; i++) {
    v[i] = rng() * 2 - 1;
    n += v[i]! * v[i]!;
  }
  const s = 1 / Math.sqrt(n);
  for (let i = 0; i < DIM; i++) v[i]! *= s;
  return v;
}

async function seed(n: number): Promise<ColdstartResult> {
  const rng = seededRng(n);
  const memories: Memory[] = [];
  const edges: Edge[] = [];
  const vectors: VectorRecord[] = [];
  // Components of ~30 memories; each new memory links to 1-2 recent ones of its component.
  const components = Math.max(1, Math.floor(n / 30));
  const lastIn: string[][] = Array.from({ length: components }, () => []);
  for (let i = 0; i < n; i++) {
    const id = crypto.randomUUID();
    const text = Array.from({ length: 12 }, () => WORDS[Math.floor(rng() * WORDS.length)]).join(' ');
    const time = T0 + i * 3_600_000;
    memories.push({
      id,
      kind: 'event',
      text,
      time,
      sourceTurnIds: [`turn-${i}`],
      sessionId: `session-${Math.floor(i / 20)}`,
      edited: false,
      createdAt: time,
    });
    vectors.push({ unitId: id, modelId: MODEL, vector: unitVector(rng) });
    const olders = lastIn[Math.floor(rng() * components)]!;
    const links = olders.length === 0 ? 0 : rng() < 0.5 ? 1 : 2;
    const seen = new Set<string>();
    for (let j = 0; j < links; j++) {
      const from = olders[olders.length - 1 - Math.floor(rng() * Math.min(5, olders.length))]!;
      if (seen.has(from)) continue;
      seen.add(from);
      edges.push({ id: crypto.randomUUID(), from, to: id, relation: 'SameTopic', origin: 'similarity', createdAt: time });
    }
    olders.push(id);
  }
  const t0 = performance.now();
  const repo = await IdbRepository.open();
  await repo.apply({ memories, edges, vectors });
  // For the 'experiment' mode only: the same vectors packed into one record (ids + one Float32Array),
  // kept in the settings store because the schema has no store for it.
  const packed = new Float32Array(n * DIM);
  vectors.forEach((v, i) => packed.set(v.vector, i * DIM));
  await repo.db.put('settings', { key: 'coldstart-bench:packed-vectors', value: { ids: vectors.map((v) => v.unitId), data: packed } });
  repo.close();
  return { mode: 'seed', ms: { seed: performance.now() - t0 }, counts: { memories: n, edges: edges.length, vectors: n } };
}

async function measure(): Promise<ColdstartResult> {
  // The page must stay responsive while the index builds: the longest main-thread task is measured.
  let longestTask = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) longestTask = Math.max(longestTask, e.duration);
  });
  observer.observe({ type: 'longtask', buffered: true });
  const t0 = performance.now();
  const repo = await IdbRepository.open();
  const t1 = performance.now();
  const service = new MemoryService(
    repo,
    new SettingsService(repo),
    () => undefined,
    () => embedder,
  );
  await service.load();
  const t2 = performance.now();
  const counts = { memories: service.memories.size, edges: service.graph.edgeCount, vectors: service.index.vectors?.size ?? 0 };
  repo.close();
  await new Promise((r) => setTimeout(r, 100)); // long-task entries arrive after the task
  observer.disconnect();
  return { mode: 'measure', ms: { open: t1 - t0, load: t2 - t1, total: t2 - t0, longestTask }, counts };
}

/** MemoryService.load's two halves apart (same calls, no segments here). */
async function breakdown(): Promise<ColdstartResult> {
  const t0 = performance.now();
  const repo = await IdbRepository.open();
  const t1 = performance.now();
  // One store at a time here, to see which read costs what (load() reads the first three together).
  const memories = await repo.listMemories();
  const tm = performance.now();
  const edges = await repo.listEdges();
  const te = performance.now();
  const segments = await repo.listSegments();
  const vectors = await repo.listVectors(MODEL);
  const t2 = performance.now();
  const graph = MemoryGraph.from(memories, edges);
  const t3 = performance.now();
  const index = createHybridIndex();
  for (const m of memories) index.upsert(memoryUnit(m));
  const t4 = performance.now();
  for (const v of vectors) if (index.has(v.unitId)) index.setVector(v.unitId, v.vector);
  const t5 = performance.now();
  repo.close();
  return {
    mode: 'breakdown',
    ms: {
      open: t1 - t0,
      readMemories: tm - t1,
      readEdges: te - tm,
      readVectors: t2 - te,
      read: t2 - t1,
      graph: t3 - t2,
      lexical: t4 - t3,
      vectors: t5 - t4,
      total: t5 - t0,
    },
    counts: { memories: memories.length + segments.length, edges: graph.edgeCount, vectors: index.vectors?.size ?? 0 },
  };
}

/** Alternative reads, to show where start-up time could be won in the store (not the app's path). */
async function experiment(): Promise<ColdstartResult> {
  const repo = await IdbRepository.open();
  const time = async (f: () => Promise<unknown>) => {
    const t = performance.now();
    await f();
    return performance.now() - t;
  };
  const ms = {
    memoriesByTimeIndex: await time(() => repo.listMemories()),
    memoriesPrimaryKey: await time(() => repo.db.getAll('memories')),
    vectorsByModelIndex: await time(() => repo.listVectors(MODEL)),
    vectorsPacked: await time(() => repo.db.get('settings', 'coldstart-bench:packed-vectors')),
    allFourInParallel: await time(() => Promise.all([repo.listMemories(), repo.listEdges(), repo.listSegments(), repo.listVectors(MODEL)])),
  };
  repo.close();
  return { mode: 'experiment', ms, counts: { memories: 0, edges: 0, vectors: 0 } };
}

async function main(): Promise<void> {
  const q = new URLSearchParams(location.search);
  let result: ColdstartResult;
  try {
    if (q.has('seed')) result = await seed(Number(q.get('n')) || 10_000);
    else if (q.has('breakdown')) result = await breakdown();
    else if (q.has('experiment')) result = await experiment();
    else result = await measure();
  } catch (e) {
    result = {
      mode: 'measure',
      ms: {},
      counts: { memories: 0, edges: 0, vectors: 0 },
      error: e instanceof Error ? `${e.message}\n${e.stack}` : String(e),
    };
  }
  window.coldstart = result;
  document.getElementById('out')!.textContent = JSON.stringify(result, null, 2);
}

void main();
