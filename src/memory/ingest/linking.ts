// Phase I (docs/METHOD.md, section 1.3): link one new memory into the graph.
// 1. Associative candidates: top-j memories by hybrid similarity. Excluded: the memory itself and
//    the other memories of its batch (session): the paper takes candidates from G^t, the graph as
//    it was before the session (Algorithm 1). With the sameSessionCandidates switch, older batch
//    members may be candidates too (newer ones consider this memory when their own turn comes, so
//    each pair is looked at once).
// 2. Relation-aware labelling of all j candidates in ONE model call (labelling.ts), or, with the
//    switch off, SameTopic for every candidate above a similarity threshold (no call).
// 3. For each connected component holding a labelled candidate (a component of G^t, as in the
//    paper), link only to the most recent labelled candidate in it. Edges go older -> newer; the
//    label was asked in that direction.
//    (One exception, for changes: a pair the change rule retires or asks about always gets its
//    edge; change.ts says when a change retires the older memory and when the user is asked.)
// Within a session, the older memories that the new one could change are labelled in the same call
// for the change question only (session-change.ts): they get an edge only as a change.
// Nothing is written here: the caller commits the returned plan and then updates graph and index.
import type { LanguageModel } from '../../ports';
import type { Edge, Id, Memory, Millis, Relation, RelationLabel } from '../types';
import type { HybridIndex, SearchHit } from '../retrieval/types';
import type { MemoryGraph } from '../graph';
import { DEFAULT_MEMORY_SETTINGS, type MemorySettings } from '../settings';
import { compareChronological, isOlder } from '../order';
import { detailFor, labelOutputTokens, labellingMessages, parseRelationLabels, relationLabelSchema } from './labelling';
import { estimateMessages, fittedJson } from '../fit';
import { cosine, wordOverlap } from '../text';
import { pastNote } from '../past';
import { changeDecision } from './change';
import { sessionChangeCandidates } from './session-change';

export interface LinkCandidate {
  id: Id;
  label: RelationLabel;
  /** Similarity used by the similarity-only switch (dense cosine when known, else word overlap). */
  similarity: number;
  /** True when the candidate received the edge. */
  linked: boolean;
  /** An older memory of the same session, asked about only as a change (session-change.ts). */
  changeOnly?: boolean;
}

export interface LinkPlan {
  /** New edges; one the user is to be asked about carries askEnded. */
  edges: Edge[];
  /** Updated copies of memories a change retired through a "Changed" edge (change.ts). */
  superseded: Memory[];
  candidates: LinkCandidate[];
  modelCalls: number;
  problems: string[];
}

export interface LinkInput {
  memory: Memory;
  graph: MemoryGraph;
  index: HybridIndex;
  lookup: (id: Id) => Memory | undefined;
  settings: MemorySettings;
  /** Required when settings.relationAwareLinking is on. */
  llm?: LanguageModel;
  /** The new memory's vector, when an embedder is loaded. */
  vector?: Float32Array;
  /** Vectors of candidates, to measure cosine similarity for the similarity-only switch. */
  vectorOf?: (id: Id) => Float32Array | undefined;
  /** Ids of the memories formed in the same batch (session), the new memory included. */
  batch?: ReadonlySet<Id>;
  /** Source excerpts shown to the labeller (the paper gives it the origin dialogue). */
  excerpt?: (memory: Memory) => Promise<string | undefined> | string | undefined;
  now: Millis;
  signal?: AbortSignal;
}

export function edgeId(from: Id, to: Id): Id {
  return `edge:${from}->${to}`;
}

/** The associative candidates of Phase I-1. */
export function findCandidates(
  input: Pick<LinkInput, 'memory' | 'graph' | 'index' | 'lookup' | 'vector' | 'batch'>,
  j: number,
  sameSession: boolean = DEFAULT_MEMORY_SETTINGS.sameSessionCandidates,
): SearchHit[] {
  const { memory, graph, index, batch } = input;
  const exclude = new Set<Id>([memory.id]);
  if (batch) {
    for (const id of batch) {
      if (!sameSession) {
        exclude.add(id);
        continue;
      }
      const other = input.lookup(id);
      if (other && !isOlder(other, memory)) exclude.add(id);
    }
  }
  // Ask for a few more than j: stale index entries (memories no longer in the graph) are skipped.
  const hits = index.search(memory.text, input.vector, j + 4, { kinds: ['memory'], exclude });
  return hits.filter((h) => graph.has(h.unit.id) && input.lookup(h.unit.id) !== undefined).slice(0, j);
}

function similarityOf(input: LinkInput, hit: SearchHit | undefined, candidate: Memory): { value: number; dense: boolean } {
  const other = input.vectorOf?.(candidate.id);
  if (input.vector && other) return { value: cosine(input.vector, other), dense: true };
  // The index's dense score is the dot product of unit vectors, i.e. the cosine.
  if (input.vector && hit?.score.dense !== undefined) return { value: hit.score.dense, dense: true };
  return { value: wordOverlap(input.memory.text, candidate.text), dense: false };
}

/** Whether a and b are connected (direction ignored) through memories outside `outside`. */
function connectedOutside(graph: MemoryGraph, a: Id, b: Id, outside: ReadonlySet<Id>): boolean {
  const seen = new Set<Id>([a]);
  const stack: Id[] = [a];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (id === b) return true;
    for (const e of [...graph.outgoing(id), ...graph.incoming(id)]) {
      const next = e.from === id ? e.to : e.from;
      if (seen.has(next) || outside.has(next)) continue;
      seen.add(next);
      stack.push(next);
    }
  }
  return false;
}

export async function linkMemory(input: LinkInput): Promise<LinkPlan> {
  const { memory, graph, settings } = input;
  const problems: string[] = [];
  const hits = findCandidates(input, settings.j, settings.sameSessionCandidates);
  // After the j ordinary candidates: the session's older memories, for the change question only.
  const general = hits.map((h) => input.lookup(h.unit.id)!);
  const candidates = [...general, ...sessionChangeCandidates(input, settings.j, new Set(general.map((c) => c.id)))];
  const changeOnly = (i: number) => i >= general.length;
  const sims = candidates.map((c, i) => similarityOf(input, hits[i], c));
  let labels: RelationLabel[];
  let modelCalls = 0;

  if (candidates.length === 0) {
    labels = [];
  } else if (settings.relationAwareLinking) {
    if (!input.llm) throw new Error('relation-aware linking needs a language model');
    const excerpt = async (m: Memory) => (input.excerpt ? await input.excerpt(m) : undefined);
    const shown = { text: memory.text, time: memory.time, excerpt: await excerpt(memory) };
    const others = await Promise.all(
      // A candidate that stopped being true is labelled as the past it is.
      candidates.map(async (c) => ({
        text: `${c.text}${pastNote(c, input.lookup)}`,
        time: c.time,
        excerpt: await excerpt(c),
        earlier: isOlder(c, memory),
      })),
    );
    const full = estimateMessages(labellingMessages(shown, others));
    modelCalls = 1;
    const { text: raw } = await fittedJson({
      llm: input.llm,
      // Less of each memory and its excerpt in a small window; every candidate is still asked about.
      build: (tokens) => labellingMessages(shown, others, detailFor(tokens, full)),
      output: labelOutputTokens(candidates.length),
      schema: relationLabelSchema(candidates.length),
      temperature: 0,
      signal: input.signal,
    });
    const parsed = parseRelationLabels(raw, candidates.length);
    labels = parsed.labels;
    problems.push(...parsed.problems);
  } else {
    labels = sims.map((s) =>
      s.value >= (s.dense ? settings.similarityThreshold : settings.lexicalSimilarityThreshold) ? 'SameTopic' : 'None',
    );
  }

  // Group labelled candidates by connected component and keep the most recent of each. The paper
  // groups by the components of G^t, the graph before this session (Algorithm 1, line 7); the graph
  // now also holds the edges linked earlier in this session, which may have joined two of them.
  // Those edges all touch a memory of the session, so two candidates that share a component now
  // shared one in G^t only if they are connected without passing through one. With
  // sameSessionCandidates, G^t is not the reference: the component as it is now.
  const beforeSession = !settings.sameSessionCandidates ? input.batch : undefined;
  const groups = new Map<Id, number[][]>();
  labels.forEach((label, i) => {
    if (label === 'None' || changeOnly(i)) return;
    const comp = graph.componentId(candidates[i].id);
    if (comp === undefined) return;
    const parts = groups.get(comp) ?? [];
    const part = beforeSession
      ? parts.find((p) => connectedOutside(graph, candidates[p[0]].id, candidates[i].id, beforeSession))
      : parts[0];
    if (part) part.push(i);
    else parts.push([i]);
    groups.set(comp, parts);
  });
  const mostRecent = (part: number[]) => part.reduce((best, i) => (compareChronological(candidates[i], candidates[best]) > 0 ? i : best));

  // One exception to "one edge per component": a pair that the change rule retires or asks about
  // always gets its edge, even when a more recent labelled memory shares its component. Otherwise a
  // change could go unrecorded (docs/METHOD.md, section 4: the older memory is marked superseded,
  // kept, and linked to what changed it; or the user is asked).
  const pairOf = (i: number): [Memory, Memory] => (isOlder(candidates[i], memory) ? [candidates[i], memory] : [memory, candidates[i]]);
  const decisions = labels.map((label, i) => changeDecision(...pairOf(i), label));
  const chosen = new Set([...groups.values()].flatMap((parts) => parts.map(mostRecent)));
  decisions.forEach((d, i) => {
    if (d !== 'keep' && graph.componentId(candidates[i].id) !== undefined) chosen.add(i);
  });

  const edges: Edge[] = [];
  const superseded: Memory[] = [];
  const linked = new Set<number>();
  for (const i of [...chosen].sort((a, b) => a - b)) {
    const relation = labels[i] as Relation;
    const [older, newer] = pairOf(i);
    if (graph.hasEdge(older.id, newer.id) || graph.hasEdge(newer.id, older.id)) continue;
    edges.push({
      id: edgeId(older.id, newer.id),
      from: older.id,
      to: newer.id,
      relation,
      origin: settings.relationAwareLinking ? 'model' : 'similarity',
      createdAt: input.now,
      ...(decisions[i] === 'ask' ? { askEnded: true } : {}),
    });
    linked.add(i);
    // Ended at the newer memory's time (pastUntil): the change, not the day it was memorised.
    if (decisions[i] === 'retire') superseded.push({ ...older, supersededBy: newer.id });
  }

  return {
    edges,
    superseded,
    candidates: candidates.map((c, i) => ({
      id: c.id,
      label: labels[i],
      similarity: sims[i].value,
      linked: linked.has(i),
      ...(changeOnly(i) ? { changeOnly: true } : {}),
    })),
    modelCalls,
    problems,
  };
}
