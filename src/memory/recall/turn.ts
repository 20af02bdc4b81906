// The per-turn flow (Phase II + III), pure: one retrieval over memories and raw segments of past
// sessions (fused lexical + dense), one timeline untangled through each of the top-k retrieved
// memories and refined in one cached call, everything packed under the context budget and put in
// the prompt in time order (SeCom). The caller streams the reply and stores `usedMemory` with the
// assistant turn.
import type { ChatMessage, Embedder, LanguageModel } from '../../ports';
import type { Id, Memory, Millis, RetrievalScore, Role, Timeline, UsedMemory } from '../types';
import type { HybridIndex, SearchHit } from '../retrieval/types';
import type { MemoryGraph } from '../graph';
import type { MemorySettings } from '../settings';
import { RefineCache, refineTimelines } from './refine';
import { formatTimeline, timelineKey, timelinesForRetrieved } from './timelines';
import { personaBank, personaBankBlock } from './persona-bank';
import { BudgetPacker, promptItem, promptItemCost } from '../retrieval/budget';
import { searchForTurn } from '../retrieval/turn-search';
import { decayed } from '../retrieval/decay';
import { fuseRankings, isWeakRetrieval, requeryKeywords } from './requery';
import { segmentExcerpt } from '../retrieval/excerpt';
import { approxTokens, promptDate } from '../text';
import { pastNote } from '../past';

export interface DialogueTurn {
  role: Role;
  text: string;
  time?: Millis;
}

export interface PrepareTurnInput {
  /** The current session so far; the last turn is normally the user's new message. */
  dialogue: readonly DialogueTurn[];
  /** Overrides the retrieval query (default: the last settings.queryTurns turns). */
  query?: string;
  now: Millis;
  /** One index over memories and segments (other unit kinds are ignored). */
  index: HybridIndex;
  graph: MemoryGraph;
  memoriesById: ReadonlyMap<Id, Memory>;
  llm?: LanguageModel;
  embedder?: Embedder;
  settings: MemorySettings;
  refineCache: RefineCache;
  /** Seeds the timeline walks; keep it stable within a session so the refinement cache can hit. */
  seed: number;
  /** Opening line of the system prompt. */
  persona?: string;
  signal?: AbortSignal;
}

/** One item of remembered material as it went into the prompt. */
export interface PromptUnit {
  kind: 'memory' | 'segment' | 'timeline';
  /** The memory or segment id; for a timeline, the retrieved memory it runs through. */
  id: Id;
  /** The text as written into the prompt (without the list bullet). */
  text: string;
  /** Words counted against the budget (the list bullet included). */
  cost: number;
  /** Time that orders the prompt (a timeline sits at its retrieved memory). */
  time: Millis;
  /** Position in the fused ranking (0 = best). */
  rank: number;
  score: RetrievalScore;
  /** Source turns of everything in the item (a timeline: of all its memories). */
  sourceTurnIds: Id[];
  /** Memories the item shows (a segment: none). */
  memoryIds: Id[];
}

export interface PreparedTurn {
  /** The messages for the reply call: system prompt, then the dialogue. */
  messages: ChatMessage[];
  systemPrompt: string;
  usedMemory: UsedMemory;
  /** What went into the prompt, in prompt (time) order. */
  units: PromptUnit[];
  /** Words of remembered material in the prompt, and the limit (settings.contextBudgetWords). */
  budget: { used: number; limit: number };
  /** Model calls made while preparing (refinement: 0 or 1). */
  modelCalls: number;
  /** Approximate tokens (chars / 4) of everything sent: the refinement call plus the reply prompt. */
  promptTokens: number;
  problems: string[];
}

export const DEFAULT_PERSONA = 'You are Tealeaf, a warm and thoughtful companion who talks with one person over months and years.';

/** Candidates fetched from the index: enough to fill the budget with small units (memories are ~10 words). */
export function retrievalDepth(settings: Pick<MemorySettings, 'contextBudgetWords' | 'k'>): number {
  return Math.min(400, Math.max(50, 2 * settings.k, Math.ceil(settings.contextBudgetWords / 5)));
}

function retrievalQuery(input: PrepareTurnInput): string {
  if (input.query !== undefined) return input.query;
  return input.dialogue
    .slice(-Math.max(1, input.settings.queryTurns))
    .map((t) => t.text)
    .join('\n');
}

function dialogueText(dialogue: readonly DialogueTurn[]): string {
  return dialogue
    .slice(-6)
    .map((t) => `${t.role}: ${t.text}`)
    .join('\n');
}

export function memoryLine(m: Memory, memoriesById?: ReadonlyMap<Id, Memory>): string {
  return `${promptDate(m.time)}: ${m.text}${pastNote(m, memoriesById)}`;
}

export function segmentBlock(time: Millis, text: string): string {
  // Only the date as header: every header word is paid from the budget.
  return `${promptDate(time)}:\n${text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}`;
}

function noteBlock(t: Timeline, note: string, memoriesById: ReadonlyMap<Id, Memory>): string {
  const first = memoriesById.get(t.memoryIds[0]!)?.time;
  const last = memoriesById.get(t.memoryIds[t.memoryIds.length - 1]!)?.time;
  if (first === undefined || last === undefined) return note;
  const span = promptDate(first) === promptDate(last) ? promptDate(first) : `${promptDate(first)} to ${promptDate(last)}`;
  return `${span}: ${note}`;
}

/**
 * The longest contiguous part of the timeline around its retrieved memory whose raw text fits in
 * maxWords, growing nearest-first on both sides: a long timeline cannot crowd out the rest of the
 * budget, and what is kept is what lies closest in the story to the memory that was retrieved.
 */
export function fitTimeline(t: Timeline, memoriesById: ReadonlyMap<Id, Memory>, maxWords: number): Timeline {
  const cost = (lo: number, hi: number) =>
    promptItemCost(
      formatTimeline({ memoryIds: t.memoryIds.slice(lo, hi + 1), relations: t.relations.slice(lo, hi), through: t.through }, memoriesById),
    );
  if (cost(0, t.memoryIds.length - 1) <= maxWords) return t;
  const at = Math.max(0, t.memoryIds.indexOf(t.through));
  let lo = at;
  let hi = at;
  for (let grew = true; grew;) {
    grew = false;
    if (lo > 0 && cost(lo - 1, hi) <= maxWords) {
      lo--;
      grew = true;
    }
    if (hi < t.memoryIds.length - 1 && cost(lo, hi + 1) <= maxWords) {
      hi++;
      grew = true;
    }
  }
  return { memoryIds: t.memoryIds.slice(lo, hi + 1), relations: t.relations.slice(lo, hi), through: t.through };
}

export function buildSystemPrompt(now: Millis, memoryBlocks: readonly string[], persona = DEFAULT_PERSONA, personaBlock = ''): string {
  const parts = [persona, `Today is ${promptDate(now)}.`];
  if (personaBlock) parts.push(personaBlock);
  if (memoryBlocks.length > 0) {
    parts.push(
      'What you remember from earlier conversations is below, in the order it happened: single memories, ' +
        'timelines of related memories (oldest first) and excerpts of past conversations. Use it only ' +
        'where it is relevant to what the person says now, and ignore anything that does not fit or would ' +
        'mislead. In these memories "you" is the person you are talking with and "Tealeaf" is you. Things marked as no longer true ("true until" a date) describe the past, not the present. Do not invent memories, ' +
        'and if the person states something about the past that contradicts what you remember, gently say so.',
      memoryBlocks.map(promptItem).join('\n'),
    );
  }
  return parts.join('\n\n');
}

interface TimelineBlock {
  timeline: Timeline;
  text: string;
  refined?: string;
}

export async function prepareTurn(input: PrepareTurnInput): Promise<PreparedTurn> {
  const { settings, memoriesById } = input;
  const problems: string[] = [];
  const query = retrievalQuery(input);
  let queryVector: Float32Array | undefined;
  if (input.embedder && query.trim() !== '') {
    try {
      [queryVector] = await input.embedder.embed([query], input.signal);
    } catch (err) {
      if (input.signal?.aborted) throw err;
      problems.push(`query embedding failed, lexical only: ${String(err)}`);
    }
  }
  const limit = Math.max(0, settings.contextBudgetWords);
  // One ranking over both kinds; a memory the index still has but the store no longer does is dropped.
  const searched: SearchHit[] =
    query.trim() === '' || limit === 0
      ? []
      : searchForTurn({
          index: input.index,
          query,
          queryVector,
          k: retrievalDepth(settings),
          kinds: ['memory', 'segment'],
          signals: {
            speakerAware: settings.speakerAware,
            feedback: settings.feedbackQuery,
            routing: settings.queryRouting,
            topics: settings.topicNouns,
          },
        }).filter((h) => h.unit.kind === 'segment' || (h.unit.kind === 'memory' && memoriesById.has(h.unit.id)));
  // Self-reflection (seed 002): a weak first retrieval gets one call for keywords and a second
  // search, fused by rank with the first.
  let requery = '';
  let requeryCalls = 0;
  let fusedSearch = searched;
  if (settings.reflectiveRequery && input.llm && limit > 0 && input.index.size > 0 && query.trim() !== '' && isWeakRetrieval(searched)) {
    requeryCalls = 1;
    requery = await requeryKeywords(input.llm, dialogueText(input.dialogue), input.signal);
    if (requery) {
      const second = searchForTurn({
        index: input.index,
        query: requery,
        queryVector,
        k: retrievalDepth(settings),
        kinds: ['memory', 'segment'],
        signals: { speakerAware: settings.speakerAware, feedback: false, routing: false, topics: settings.topicNouns },
      }).filter((h) => h.unit.kind === 'segment' || (h.unit.kind === 'memory' && memoriesById.has(h.unit.id)));
      fusedSearch = fuseRankings(searched, second);
    }
  }
  // LD-Agent's time decay of event memories (off at 0).
  const ranked = decayed(
    fusedSearch,
    input.now,
    settings.timeDecayHalfLifeDays,
    (h) => h.unit.kind === 'memory' && memoriesById.get(h.unit.id)?.kind === 'event',
  );

  // Phase II-1/II-2: one timeline through each of the top-k retrieved memories, refined in one call.
  const timelineOf = new Map<Id, TimelineBlock>();
  const irrelevant = new Set<Id>();
  let modelCalls = requeryCalls;
  let refineTokens = 0;
  if (settings.retrievalMode === 'timelines') {
    const through = ranked
      .filter((h) => h.unit.kind === 'memory')
      .slice(0, settings.k)
      .map((h) => h.unit.id);
    const maxWords = Math.max(1, Math.floor(limit * settings.timelineBudgetShare));
    const seen = new Set<string>();
    const timelines = timelinesForRetrieved(input.graph, through, input.seed, {
      maxSteps: settings.timelineMaxSteps,
      samples: settings.timelineSamples,
      fromOldest: settings.timelineFromOldest,
    })
      .map((t) => fitTimeline(t, memoriesById, maxWords))
      .filter((t) => !seen.has(timelineKey(t)) && !!seen.add(timelineKey(t)));
    const result = await refineTimelines({
      llm: settings.refinement ? input.llm : undefined,
      dialogue: dialogueText(input.dialogue),
      timelines,
      memoriesById,
      cache: input.refineCache,
      signal: input.signal,
    });
    modelCalls += result.modelCalls;
    refineTokens = result.messages ? approxTokens(result.messages.map((m) => m.content).join('\n')) : 0;
    const refined = settings.refinement && !!input.llm && timelines.length > 0;
    if (settings.refinement) problems.push(...result.problems);
    timelines.forEach((t, i) => {
      if (!refined) return timelineOf.set(t.through, { timeline: t, text: result.raw[i]! });
      const note = result.notes[i] ?? '';
      // An empty note: the model found nothing in this timeline that helps now.
      if (note.trim() === '') for (const id of t.memoryIds) irrelevant.add(id);
      else timelineOf.set(t.through, { timeline: t, text: noteBlock(t, note, memoriesById), refined: note });
    });
  }

  const units = pack(ranked, limit, timelineOf, irrelevant, memoriesById, settings.segmentExcerpts ? query : undefined);
  const blocks = units.map((u) => u.text);
  // Persona banks (LD-Agent): current traits on every turn, beyond what retrieval brought.
  const inPrompt = new Set(units.flatMap((u) => u.memoryIds));
  const bank = personaBank(memoriesById.values(), { maxWords: Math.floor(limit * settings.personaBankShare), exclude: inPrompt });
  const systemPrompt = buildSystemPrompt(input.now, blocks, input.persona, personaBankBlock(bank));
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt },
    ...input.dialogue.map((t) => ({ role: t.role, content: t.text })),
  ];
  const byRank = [...units].sort((a, b) => a.rank - b.rank);
  const memoryIds: Id[] = [];
  for (const u of byRank) for (const id of u.memoryIds) if (!memoryIds.includes(id)) memoryIds.push(id);
  const timelineUnits = byRank.filter((u) => u.kind === 'timeline');
  const timelines = timelineUnits.map((u) => timelineOf.get(u.id)!);
  const usedMemory: UsedMemory = {
    memoryIds,
    ...(bank.user.length + bank.assistant.length > 0 ? { personaIds: [...bank.user, ...bank.assistant].map((m) => m.id) } : {}),
    ...(requery ? { requery } : {}),
    segmentIds: byRank.filter((u) => u.kind === 'segment').map((u) => u.id),
    timelines: timelines.map((b) => b.timeline),
    ...(timelines.some((b) => b.refined !== undefined) ? { refined: timelines.map((b) => b.refined ?? '') } : {}),
    scores: byRank.map((u) => u.score),
  };
  return {
    messages,
    systemPrompt,
    usedMemory,
    units,
    budget: { used: units.reduce((a, u) => a + u.cost, 0), limit },
    modelCalls,
    promptTokens: refineTokens + approxTokens(messages.map((m) => m.content).join('\n')),
    problems,
  };
}

/**
 * Greedy by rank under the budget: a retrieved memory with a timeline goes in as its timeline
 * (or, if that does not fit, as itself); a single memory whose source turns are all already in the
 * prompt is skipped (it would spend budget on evidence the prompt has in fuller words). Segments and
 * timelines are never skipped that way: the raw words and the relations say more than the turn ids.
 * Returned in time order, ties by rank.
 */
function pack(
  ranked: readonly SearchHit[],
  limit: number,
  timelineOf: ReadonlyMap<Id, TimelineBlock>,
  irrelevant: ReadonlySet<Id>,
  memoriesById: ReadonlyMap<Id, Memory>,
  /** Segments go in as excerpts around the turns matching this query (undefined: whole). */
  excerptQuery?: string,
): PromptUnit[] {
  const packer = new BudgetPacker<PromptUnit>(limit);
  const inTimeline = new Set<Id>();
  ranked.forEach((hit, rank) => {
    const unit = hit.unit;
    if (unit.kind === 'segment') {
      // Never skipped for coverage: memories summarise, the segment has the original words.
      const part = excerptQuery === undefined ? undefined : segmentExcerpt(unit.text, unit.sourceTurnIds, excerptQuery);
      const text = segmentBlock(unit.time, part?.text ?? unit.text);
      const cost = promptItemCost(text);
      if (packer.fits(cost))
        packer.take({
          kind: 'segment',
          id: unit.id,
          text,
          cost,
          time: unit.time,
          rank,
          score: hit.score,
          sourceTurnIds: part?.turnIds ?? unit.sourceTurnIds,
          memoryIds: [],
        });
      return;
    }
    const m = memoriesById.get(unit.id)!;
    if (inTimeline.has(m.id) || irrelevant.has(m.id)) return;
    const tl = timelineOf.get(m.id);
    if (tl) {
      const ids = tl.timeline.memoryIds;
      // Memories of the timeline already in the prompt on their own give their place back.
      const dup = packer.taken.filter((u) => u.kind === 'memory' && ids.includes(u.id));
      const cost = promptItemCost(tl.text);
      const refund = dup.reduce((a, u) => a + u.cost, 0);
      if (packer.fits(cost, refund)) {
        for (const d of dup) packer.remove(d);
        const turns = [...new Set(ids.flatMap((id) => memoriesById.get(id)?.sourceTurnIds ?? []))];
        for (const id of ids) inTimeline.add(id);
        packer.take({
          kind: 'timeline',
          id: m.id,
          text: tl.text,
          cost,
          time: m.time,
          rank,
          score: hit.score,
          sourceTurnIds: turns,
          memoryIds: [m.id, ...ids.filter((id) => id !== m.id)],
        });
        return;
      }
    }
    if (packer.isCovered(m.sourceTurnIds)) return;
    const text = memoryLine(m, memoriesById);
    const cost = promptItemCost(text);
    if (packer.fits(cost))
      packer.take({
        kind: 'memory',
        id: m.id,
        text,
        cost,
        time: m.time,
        rank,
        score: hit.score,
        sourceTurnIds: m.sourceTurnIds,
        memoryIds: [m.id],
      });
  });
  // Time order for the prompt (SeCom).
  return packer.inTimeOrder();
}
