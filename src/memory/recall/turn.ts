// The per-turn flow (Phase II + III), pure: one retrieval over memories and raw segments of past
// sessions (fused lexical + dense), one timeline untangled through each of the top-k retrieved
// memories, one cached call that refines them for this dialogue and judges whether what was found
// is enough (if not, its keywords search again), everything packed under the context budget and
// put in the prompt in time order (SeCom). The caller streams the reply and stores `usedMemory`
// with the assistant turn.
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
import { fuseRankings } from './requery';
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
  /** Model calls made while preparing (refinement and self-reflection share one: 0 or 1). */
  modelCalls: number;
  /** Approximate tokens (chars / 4) of everything sent: the refinement call plus the reply prompt. */
  promptTokens: number;
  problems: string[];
}

/** Words of a passage the self-reflection is shown (the reply prompt gets it whole). */
const REFLECT_PASSAGE_WORDS = 60;

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
  const embed = async (text: string): Promise<Float32Array | undefined> => {
    if (!input.embedder || text.trim() === '') return undefined;
    try {
      return (await input.embedder.embed([text], input.signal))[0];
    } catch (err) {
      if (input.signal?.aborted) throw err;
      problems.push(`query embedding failed, lexical only: ${String(err)}`);
      return undefined;
    }
  };
  const limit = Math.max(0, settings.contextBudgetWords);
  const searchable = query.trim() !== '' && limit > 0;
  // One ranking over both kinds; a memory the index still has but the store no longer does is dropped.
  const search = (text: string, queryVector: Float32Array | undefined, first: boolean): SearchHit[] =>
    searchForTurn({
      index: input.index,
      query: text,
      queryVector,
      k: retrievalDepth(settings),
      kinds: ['memory', 'segment'],
      signals: {
        speakerAware: settings.speakerAware,
        feedback: first && settings.feedbackQuery,
        routing: first && settings.queryRouting,
        topics: settings.topicNouns,
      },
    }).filter((h) => h.unit.kind === 'segment' || (h.unit.kind === 'memory' && memoriesById.has(h.unit.id)));
  // LD-Agent's time decay of event memories (off at 0).
  const rank = (hits: readonly SearchHit[]) =>
    decayed(
      hits,
      input.now,
      settings.timeDecayHalfLifeDays,
      (h) => h.unit.kind === 'memory' && memoriesById.get(h.unit.id)?.kind === 'event',
    );
  const searched = searchable ? search(query, await embed(query), true) : [];
  let ranked = rank(searched);

  // Phase II-1: one timeline through each of the top-k retrieved memories.
  const withTimelines = settings.retrievalMode === 'timelines';
  const maxWords = Math.max(1, Math.floor(limit * settings.timelineBudgetShare));
  const seen = new Set<string>();
  const timelinesThrough = (hits: readonly SearchHit[], skip: ReadonlySet<Id>) =>
    timelinesForRetrieved(
      input.graph,
      hits
        .filter((h) => h.unit.kind === 'memory' && !skip.has(h.unit.id))
        .slice(0, settings.k)
        .map((h) => h.unit.id),
      input.seed,
      { maxSteps: settings.timelineMaxSteps, samples: settings.timelineSamples, fromOldest: settings.timelineFromOldest },
    )
      .map((t) => fitTimeline(t, memoriesById, maxWords))
      .filter((t) => !seen.has(timelineKey(t)) && !!seen.add(timelineKey(t)));
  const timelines = withTimelines ? timelinesThrough(ranked, new Set()) : [];

  // Phase II-2 and self-reflection (seed 002) in one call: notes for the timelines in the light of
  // this dialogue, and whether what was found is enough to answer. With refinement off, or no
  // timelines, the same call runs with none to refine: the judgement still gets made.
  const refine = settings.refinement && !!input.llm && timelines.length > 0;
  const reflect = settings.reflectiveRequery && !!input.llm && searchable && input.index.size > 0;
  const shown = reflect
    ? reflectionCandidates(ranked, refine ? timelines : [], refine ? [] : timelines, settings.k, memoriesById, query)
    : undefined;
  const result = await refineTimelines({
    llm: refine || reflect ? input.llm : undefined,
    dialogue: dialogueText(input.dialogue),
    timelines: refine ? timelines : [],
    others: shown?.lines,
    reflect,
    memoriesById,
    cache: input.refineCache,
    signal: input.signal,
  });
  const modelCalls = result.modelCalls;
  const refineTokens = result.messages ? approxTokens(result.messages.map((m) => m.content).join('\n')) : 0;
  problems.push(...result.problems);
  const timelineOf = new Map<Id, TimelineBlock>();
  const irrelevant = new Set<Id>();
  timelines.forEach((t, i) => {
    if (!refine) return timelineOf.set(t.through, { timeline: t, text: formatTimeline(t, memoriesById) });
    const note = result.notes[i] ?? '';
    // An empty note: the model found nothing in this timeline that helps now (this turn only:
    // the note is cached for this very dialogue).
    if (note.trim() === '') for (const id of t.memoryIds) irrelevant.add(id);
    else timelineOf.set(t.through, { timeline: t, text: noteBlock(t, note, memoriesById), refined: note });
  });

  // Not enough: a second search with the model's keywords, fused by rank with the first. Timelines
  // through memories it brings to the top go in raw (refining them would take a third call).
  const reflection = result.reflection;
  const requery = reflection && !reflection.enough ? reflection.keywords.join(' ') : '';
  if (requery) {
    ranked = rank(fuseRankings(searched, search(requery, await embed(requery), false)));
    if (withTimelines) {
      const covered = new Set([...timelines.flatMap((t) => t.memoryIds)]);
      for (const t of timelinesThrough(ranked, covered)) timelineOf.set(t.through, { timeline: t, text: formatTimeline(t, memoriesById) });
    }
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
  const packed = byRank.filter((u) => u.kind === 'timeline').map((u) => timelineOf.get(u.id)!);
  const usedMemory: UsedMemory = {
    memoryIds,
    ...(bank.user.length + bank.assistant.length > 0 ? { personaIds: [...bank.user, ...bank.assistant].map((m) => m.id) } : {}),
    ...(reflection ? { reflected: reflection.enough ? 'enough' : requery ? 'searched' : 'no-keywords' } : {}),
    // The keywords were written from what the call showed: they follow those sources (derived.ts).
    ...(requery ? { requery, reflectedOn: shown!.ids } : {}),
    segmentIds: byRank.filter((u) => u.kind === 'segment').map((u) => u.id),
    timelines: packed.map((b) => b.timeline),
    ...(packed.some((b) => b.refined !== undefined) ? { refined: packed.map((b) => b.refined ?? '') } : {}),
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
 * What the self-reflection is shown beside the `numbered` timelines it refines: `raw` timelines
 * (refinement off), then the first ranking's top-k units that no timeline holds (passages; memories in plain
 * top-k mode), as prompt lines. `ids`: every memory and passage shown, refined timelines included.
 */
function reflectionCandidates(
  ranked: readonly SearchHit[],
  numbered: readonly Timeline[],
  raw: readonly Timeline[],
  k: number,
  memoriesById: ReadonlyMap<Id, Memory>,
  query: string,
): { lines: string[]; ids: Id[] } {
  const lines = raw.map((t) => formatTimeline(t, memoriesById));
  const ids = new Set<Id>([...numbered, ...raw].flatMap((t) => t.memoryIds));
  for (const hit of ranked.slice(0, k)) {
    const u = hit.unit;
    if (ids.has(u.id)) continue;
    ids.add(u.id);
    if (u.kind === 'memory') lines.push(memoryLine(memoriesById.get(u.id)!, memoriesById));
    else {
      const words = (segmentExcerpt(u.text, u.sourceTurnIds, query)?.text ?? u.text).replace(/\n/g, ' / ').split(/\s+/);
      lines.push(
        `${promptDate(u.time)}: ${words.slice(0, REFLECT_PASSAGE_WORDS).join(' ')}${words.length > REFLECT_PASSAGE_WORDS ? ' …' : ''}`,
      );
    }
  }
  return { lines, ids: [...ids] };
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
