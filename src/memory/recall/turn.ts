// The per-turn flow (Phase II + III), pure: one retrieval over memories and raw segments of past
// sessions (fused lexical + dense), one timeline untangled through each of the top-k retrieved
// memories, one cached call that refines them for this dialogue and judges whether what was found
// is enough (if not, its keywords search again), everything packed under the context budget and
// put in the prompt in time order (SeCom). The caller streams the reply and stores `usedMemory`
// with the assistant turn.
import type { ChatMessage, Embedder, LanguageModel, ModelWindow } from '../../ports';
import type { Id, Memory, Millis, UsedMemory } from '../types';
import type { HybridIndex, SearchHit } from '../retrieval/types';
import type { MemoryGraph } from '../graph';
import type { MemorySettings } from '../settings';
import { RefineCache, refineTimelines } from './refine';
import { formatTimeline, timelineKey, timelinesForRetrieved } from './timelines';
import { personaBank, personaBankBlock } from './persona-bank';
import { searchForTurn } from '../retrieval/turn-search';
import { decayed } from '../retrieval/decay';
import { fuseRankings } from './requery';
import { estimateMessages, estimateTokens, fitPrompt, outputFor, windowOf } from '../fit';
import { excerptText, recallEarlierTurns } from './chat-window';
import { noteBlock, buildSystemPrompt, memoryBlock } from './prompt-text';
import { layReply, type Layout } from './layout';
import { fitTimeline, pack, reflectionCandidates, type PromptUnit, type TimelineBlock } from './pack';
import { bearsOn, retrievalUnsure } from './gate';
import { instructionsBlock, instructionsFor, type InstructionFit } from './instructions';
import type { SentChat } from './sent-chat';
import type { DialogueTurn } from './dialogue';

export { DEFAULT_PERSONA, buildSystemPrompt, memoryLine, segmentBlock } from './prompt-text';
export { fitTimeline, type PromptUnit } from './pack';
export type { DialogueTurn } from './dialogue';

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
  /** Below 1 after the engine refused the reply prompt as too long: build it that much smaller. */
  budgetScale?: number;
  /** The previous reply's prompt in this chat (PreparedTurn.sent): extended where it still holds. */
  sent?: SentChat;
  /**
   * Vectors of this chat's turns embedded so far (of `excerptText`, by the `embedder`), by turn id:
   * given, earlier exchanges are searched by meaning and words, and the message is embedded for it
   * (returned as `messageVector`). Absent: by words only.
   */
  chatVectors?: ReadonlyMap<Id, Float32Array>;
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
  /** Tokens of everything sent: the refinement call's prompt plus the reply prompt. */
  promptTokens: number;
  /**
   * Tokens the model reads and writes before the reply's first token: the refinement call's
   * prompt and answer, then the reply prompt (what a small model spends seconds on).
   */
  tokensBeforeReply: number;
  /** The reply's output cap, sized to the model's window (pass it as maxTokens). */
  maxTokens: number;
  /** Turns of this chat in the prompt as messages, and the earlier ones recalled into it. */
  chat: { recent: number; earlierTurnIds: Id[]; left: number };
  /** The standing instructions sent, and those left out for want of room (instructions.ts). */
  instructions: InstructionFit;
  /** This prompt as sent, to pass as `sent` for the chat's next reply. */
  sent?: SentChat;
  /** Whether it extends `sent` exactly: an engine that kept what it read reads only what is new. */
  extended?: boolean;
  /** Tokens of the reply prompt, and those new since the previous request where it extends it. */
  replyTokens: number;
  readTokens: number;
  /** The person's message embedded for the search of earlier exchanges (with `chatVectors` and an embedder). */
  messageVector?: Float32Array;
  problems: string[];
}

/** The reply's output cap where the engine allows it (a quarter of a 4,096-token window). */
export const REPLY_TOKENS = 1024;
/** The shortest reply worth asking for when the prompt leaves less room than REPLY_TOKENS. */
export const MIN_REPLY_TOKENS = 128;
/**
 * The least room a continuing chat's reply prompt leaves for the answer (half of REPLY_TOKENS):
 * the prompt may grow into the rest of REPLY_TOKENS, which replies of a few hundred words never
 * use, before the window moves. More where the chat's recent replies were longer (replyRoomFor).
 */
const REPLY_ROOM_MIN = 512;
/** Replies of the chat that set the room for the next one, and the margin over the longest of them. */
const REPLY_ROOM_TURNS = 4;
const REPLY_ROOM_MARGIN = 1.25;
/** Share of the reply prompt's tokens that remembered material may take at most. */
const MEMORY_SHARE = 0.35;
/** Tokens per budget word of remembered material (dates, bullets and names included), estimated high. */
const TOKENS_PER_WORD = 1.6;
// Shares of the reply prompt in the layout that the next turn extends (layout.ts). What memory adds
// to a message stays in the prompt as sent for the turns after it, until the window moves, so it
// is paid on every one of them: at 4,096 tokens and replies of 200 to 300 words, blocks of 300
// words each left room for two turns before the whole prompt was read again. Chosen by
// bench:prefill (BENCHMARKS.md) between the share of replies that read only what is new and the
// evidence of earlier turns still in the prompt.
/** Memory found for a message in a continuing chat (only what bears on it): 215 tokens at 4,096. */
const BLOCK_SHARE = 0.07;
/** Earlier turns of the chat recalled for a message, where the room allows it and the next turn keeps its own. */
const EARLIER_MAX_SHARE = 0.15;
/** The same when the whole prompt is read anyway: after the window moved, or to make room for a strong match. */
const EARLIER_FRESH_SHARE = 0.3;
/** Recalled earlier turns the block needs at least (none: memory found for the message is enough). */
const EARLIER_SHARE = 0;
/** Tokens a reply is expected to take in the room kept for the next turn (about 250 words). */
const REPLY_RESERVE = 350;
/** Share of the room a fresh start keeps of the chat, so that many turns extend it before the next. */
const KEEP_SHARE = 0.2;

/** The "window" of a turn prepared without a model: nothing is sent, the method's budget holds. */
const UNSENT: ModelWindow = { contextTokens: 1_000_000, maxOutputTokens: REPLY_TOKENS };

/**
 * Tokens a reply prompt leaves at least for the answer, of the `cap` it may have: the longest of
 * the chat's last few replies with a margin (as the model counts, by `ratio`), at least
 * REPLY_ROOM_MIN; the whole cap before the chat's first reply. The answer is still asked with up
 * to `cap` where the prompt leaves that much: only a prompt near the window's end gives it less.
 */
export function replyRoomFor(dialogue: readonly Pick<DialogueTurn, 'role' | 'text'>[], cap: number, ratio = 1): number {
  const replies = dialogue.filter((t) => t.role === 'assistant').slice(-REPLY_ROOM_TURNS);
  if (replies.length === 0) return cap;
  const longest = Math.max(...replies.map((t) => estimateTokens(t.text))) * Math.min(1, ratio);
  return Math.min(cap, Math.max(REPLY_ROOM_MIN, Math.ceil(longest * REPLY_ROOM_MARGIN)));
}

/** The memory word budget this window allows: the method's budget, or less in a small window. */
export function memoryWordsFor(settings: Pick<MemorySettings, 'contextBudgetWords'>, promptTokens: number): number {
  return Math.max(0, Math.min(settings.contextBudgetWords, Math.floor((promptTokens * MEMORY_SHARE) / TOKENS_PER_WORD)));
}

/** Candidates fetched from the index: enough to fill the budget with small units (memories are ~10 words). */
export function retrievalDepth(settings: Pick<MemorySettings, 'contextBudgetWords' | 'k'>): number {
  return Math.min(400, Math.max(50, 2 * settings.k, Math.ceil(settings.contextBudgetWords / 5)));
}

function lastUserText(dialogue: readonly DialogueTurn[]): string | undefined {
  for (let i = dialogue.length - 1; i >= 0; i--) if (dialogue[i]!.role === 'user') return dialogue[i]!.text;
  return undefined;
}

/** Words of a reply the query keeps: what it was about, for a short follow-up ("and then?"). */
const QUERY_REPLY_WORDS = 30;

function retrievalQuery(input: PrepareTurnInput): string {
  if (input.query !== undefined) return input.query;
  // A long reply in the query drowns the person's own words (in a continuing chat the turn before
  // the message is the reply): only its opening goes in.
  return input.dialogue
    .slice(-Math.max(1, input.settings.queryTurns))
    .map((t) => (t.role === 'assistant' ? t.text.split(/\s+/).slice(0, QUERY_REPLY_WORDS).join(' ') : t.text))
    .join('\n');
}

export async function prepareTurn(input: PrepareTurnInput): Promise<PreparedTurn> {
  const { settings, memoriesById } = input;
  const problems: string[] = [];
  const query = retrievalQuery(input);
  const embedAll = async (texts: string[]): Promise<Array<Float32Array | undefined>> => {
    if (!input.embedder || texts.every((t) => t.trim() === '')) return texts.map(() => undefined);
    try {
      return await input.embedder.embed(texts, input.signal);
    } catch (err) {
      if (input.signal?.aborted) throw err;
      problems.push(`query embedding failed, lexical only: ${String(err)}`);
      return texts.map(() => undefined);
    }
  };
  const embed = async (text: string) => (await embedAll([text]))[0];
  // The reply must fit the model's window with room for its answer: the memory budget shrinks in
  // a small window, and the chat itself is windowed (chat-window.ts).
  // Without a model (retrieval benchmarks) nothing is sent, so no window bounds the budget.
  const window = input.llm ? windowOf(input.llm) : UNSENT;
  const maxTokens = outputFor(window, REPLY_TOKENS);
  const limit = memoryWordsFor(settings, window.contextTokens - maxTokens);
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
    }).filter(
      // Standing instructions go into every prompt on their own (instructions.ts), not as recalled memories.
      (h) =>
        h.unit.kind === 'segment' || (h.unit.kind === 'memory' && (memoriesById.get(h.unit.id)?.kind ?? 'instruction') !== 'instruction'),
    );
  // LD-Agent's time decay of event memories (off at 0).
  const rank = (hits: readonly SearchHit[]) =>
    decayed(
      hits,
      input.now,
      settings.timeDecayHalfLifeDays,
      (h) => h.unit.kind === 'memory' && memoriesById.get(h.unit.id)?.kind === 'event',
    );
  // The person's message, for the search of earlier exchanges, embedded in the same call as the query.
  const lastMessage = lastUserText(input.dialogue) ?? query;
  const messageText = excerptText({ role: 'user', text: lastMessage });
  const wantsMessage = !!input.chatVectors && settings.earlierInChat && messageText.trim() !== '';
  const toEmbed = [...(searchable ? [query] : []), ...(wantsMessage && messageText !== query ? [messageText] : [])];
  const vectors = toEmbed.length > 0 ? await embedAll(toEmbed) : [];
  const queryVector = searchable ? vectors[0] : undefined;
  const messageVector = wantsMessage ? vectors[toEmbed.indexOf(messageText)] : undefined;
  const searched = searchable ? search(query, queryVector, true) : [];
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
  // timelines, the same call runs with none to refine: the judgement still gets made. With
  // refineWhenUnsure, the call (and its wait before the reply) is made only when what was found
  // leaves the question open (gate.ts); otherwise the raw timelines go in.
  // With refineWhenUnsure, not in a continuing chat either: there the engine holds what it read
  // for the previous reply, and a call before this one would make the person wait and, on web-llm,
  // read the whole prompt again (the call replaces the chat's conversation). On a chat's first
  // message nothing is held yet.
  const continuing = input.dialogue.some((t) => t.role === 'assistant');
  const ask =
    !!input.llm &&
    searchable &&
    input.index.size > 0 &&
    (!settings.refineWhenUnsure ||
      (!continuing && retrievalUnsure(ranked, timelines, settings.k, memoriesById, lastUserText(input.dialogue) ?? query)));
  const refine = ask && settings.refinement && timelines.length > 0;
  const reflect = ask && settings.reflectiveRequery;
  const shown = reflect
    ? reflectionCandidates(ranked, refine ? timelines : [], refine ? [] : timelines, settings.k, memoriesById, query)
    : undefined;
  const result = await refineTimelines({
    llm: refine || reflect ? input.llm : undefined,
    dialogue: input.dialogue,
    timelines: refine ? timelines : [],
    others: shown?.lines,
    reflect,
    memoriesById,
    cache: input.refineCache,
    signal: input.signal,
  });
  const modelCalls = result.modelCalls;
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

  // The reply prompt (layout.ts): what holds for the chat first and the same every turn, then the
  // dialogue as it was sent, then the new message with what memory found for it. The standing
  // instructions and the facts about the person sit in the system prompt, sized for the window and
  // not by this turn's search, so it stays the same while they do. fitPrompt builds it again
  // smaller until it fits, and says in words when even the instructions and the message do not.
  const nominal = window.contextTokens - maxTokens;
  // The prompt may grow up to the room the reply is expected to need (replyRoomFor); the shares of
  // memory and recalled turns stay those of the nominal prompt.
  const replyRoom = replyRoomFor(input.dialogue, maxTokens, input.sent?.ratio);
  const ceiling = window.contextTokens - replyRoom;
  const scale = Math.min(1, input.budgetScale ?? 1);
  // Standing instructions: their own share of the window, the same on every rebuild (they never give way).
  const instructions = instructionsFor(memoriesById.values(), window, REPLY_TOKENS);
  const bank = personaBank(memoriesById.values(), { maxWords: Math.floor(limit * scale * settings.personaBankShare) });
  const head = buildSystemPrompt(input.now, input.persona, personaBankBlock(bank), instructionsBlock(instructions.sent), limit > 0);
  let layout: Layout | undefined;
  let earlierBy: NonNullable<UsedMemory['earlierBy']> = 'words';
  let units: PromptUnit[] = [];
  const build = (tokens: number): ChatMessage[] => {
    const share = Math.min(1, tokens / ceiling);
    const sized = Math.floor(nominal * share);
    const memoryTokens = Math.floor(Math.min(limit * TOKENS_PER_WORD, nominal * BLOCK_SHARE) * share);
    // The chat's first message has the whole memory budget (nothing of the chat takes room yet).
    const freshMemoryTokens = continuing ? memoryTokens : Math.floor(limit * TOKENS_PER_WORD * share);
    const earlierTokens = settings.earlierInChat ? Math.floor(sized * EARLIER_SHARE) : 0;
    const earlierMax = settings.earlierInChat ? Math.floor(sized * EARLIER_MAX_SHARE) : 0;
    const earlierFresh = settings.earlierInChat ? Math.floor(sized * EARLIER_FRESH_SHARE) : 0;
    layout = layReply({
      head,
      dialogue: input.dialogue,
      sent: input.sent,
      ratio: input.sent?.ratio,
      memoriesById,
      segmentText: (id) => input.index.get(id)?.text,
      tokens,
      blockTokens: memoryTokens + earlierTokens,
      blockMax: memoryTokens + earlierMax,
      freshBlockMax: freshMemoryTokens + earlierFresh,
      reserve: memoryTokens + earlierTokens + Math.min(maxTokens, REPLY_RESERVE),
      keepShare: KEEP_SHARE,
      block: (room, inPrompt, left, whole, wide) => {
        // Recalled earlier turns take what the memory items leave, up to their share.
        const words = Math.floor(Math.min(whole ? freshMemoryTokens : memoryTokens, room) / TOKENS_PER_WORD);
        const notShown = ranked.filter(
          (h) =>
            !(h.unit.kind === 'segment' ? inPrompt.segmentIds : inPrompt.memoryIds).has(h.unit.id) &&
            // In a prompt that is extended, only what bears on the message (it stays for later turns).
            (whole || bearsOn(lastMessage, h.unit.text)),
        );
        units = pack(notShown, words, timelineOf, irrelevant, memoriesById, settings.segmentExcerpts ? query : undefined);
        const unitTokens = estimateTokens(units.map((u) => u.text).join('\n')) + 24;
        // The earlier exchanges are searched with the person's last message alone: the turn before
        // it is in the prompt anyway, and mixing it in cost a fifth of the evidence found (bench:fit).
        const earlier = recallEarlierTurns(
          left,
          lastMessage,
          Math.min(whole ? earlierFresh : wide ? room : earlierMax, room - unitTokens),
          inPrompt.turnIds,
          // The turns the prompt holds after them (a change told there marks what it changed as past).
          { later: input.dialogue.slice(left.length, -1), vectors: input.chatVectors, queryVector: messageVector },
        );
        earlierBy = earlier.by;
        const shownMemories = units.flatMap((u) => u.memoryIds);
        return {
          text: memoryBlock(
            units.map((u) => u.text),
            earlier.blocks,
          ),
          memories: [...new Set(shownMemories)].map((id) => ({ id, text: memoriesById.get(id)?.text ?? '' })),
          segments: units.filter((u) => u.kind === 'segment').map((u) => ({ id: u.id, text: input.index.get(u.id)?.text ?? '' })),
          earlierTurnIds: earlier.turnIds,
          missed: earlier.missed,
        };
      },
    });
    return layout.messages;
  };
  const fitted = await fitPrompt(
    { llm: { window }, build, output: replyRoom, upTo: maxTokens, minOutput: MIN_REPLY_TOKENS, signal: input.signal },
    input.budgetScale,
  );
  const { messages, carried } = layout!;
  // The model's own count against the estimate, for the next layout of this chat.
  const ratio = fitted.exact ? fitted.promptTokens / Math.max(1, estimateMessages(messages)) : undefined;
  const sent: SentChat = { ...layout!.sent, ...(ratio ? { ratio: Math.min(1, ratio) } : {}) };
  const chat = {
    recent: layout!.recent,
    earlierTurnIds: [...new Set([...layout!.block.earlierTurnIds, ...carried.earlierTurnIds])],
    left: layout!.left,
  };

  const byRank = [...units].sort((a, b) => a.rank - b.rank);
  const memoryIds: Id[] = [];
  for (const u of byRank) for (const id of u.memoryIds) if (!memoryIds.includes(id)) memoryIds.push(id);
  // Memories and passages an earlier message's block still holds went into this prompt too.
  for (const id of carried.memoryIds) if (!memoryIds.includes(id)) memoryIds.push(id);
  const packed = byRank.filter((u) => u.kind === 'timeline').map((u) => timelineOf.get(u.id)!);
  const usedMemory: UsedMemory = {
    memoryIds,
    ...(bank.user.length + bank.assistant.length + instructions.sent.length > 0
      ? { personaIds: [...instructions.sent, ...bank.user, ...bank.assistant].map((m) => m.id) }
      : {}),
    ...(reflection ? { reflected: reflection.enough ? 'enough' : requery ? 'searched' : 'no-keywords' } : {}),
    // The keywords were written from what the call showed: they follow those sources (derived.ts).
    ...(requery ? { requery, reflectedOn: shown!.ids } : {}),
    segmentIds: [...new Set([...byRank.filter((u) => u.kind === 'segment').map((u) => u.id), ...carried.segmentIds])],
    timelines: packed.map((b) => b.timeline),
    ...(packed.some((b) => b.refined !== undefined) ? { refined: packed.map((b) => b.refined ?? '') } : {}),
    scores: byRank.map((u) => u.score),
    ...(chat.earlierTurnIds.length > 0 ? { earlierTurnIds: chat.earlierTurnIds } : {}),
    ...(layout!.block.earlierTurnIds.length > 0 ? { earlierBy } : {}),
  };
  const before = result.tokens ? result.tokens.prompt + result.tokens.output : 0;
  return {
    messages,
    systemPrompt: head,
    usedMemory,
    units,
    budget: { used: units.reduce((a, u) => a + u.cost, 0), limit },
    modelCalls,
    promptTokens: (result.tokens?.prompt ?? 0) + fitted.promptTokens,
    tokensBeforeReply: before + fitted.promptTokens,
    maxTokens: fitted.maxTokens,
    chat,
    instructions,
    sent,
    extended: layout!.extended,
    replyTokens: fitted.promptTokens,
    // Extended: the messages after what was sent (the reply the engine wrote is kept with it too).
    readTokens: layout!.extended
      ? Math.min(fitted.promptTokens, Math.ceil(estimateMessages(messages.slice(-1)) * (ratio ?? 1)))
      : fitted.promptTokens,
    ...(messageVector ? { messageVector } : {}),
    problems,
  };
}
