// The per-turn flow (Phase II + III), pure: retrieve top-k memories for the current dialogue,
// untangle one timeline through each, refine them in one cached call, and build the messages
// for the reply. The caller streams the reply and stores `usedMemory` with the assistant turn.
import type { ChatMessage, Embedder, LanguageModel } from '../ports';
import type { Id, Memory, Millis, Role, Timeline, UsedMemory } from './types';
import type { HybridIndex, SearchHit } from './retrieval/types';
import type { MemoryGraph } from './graph';
import type { MemorySettings } from './settings';
import { RefineCache, refineTimelines } from './refine';
import { timelinesForRetrieved } from './timelines';
import { compareChronological } from './order';
import { approxTokens, formatDate } from './text';

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

export interface PreparedTurn {
  /** The messages for the reply call: system prompt, then the dialogue. */
  messages: ChatMessage[];
  systemPrompt: string;
  usedMemory: UsedMemory;
  /** Model calls made while preparing (refinement: 0 or 1). */
  modelCalls: number;
  /** Approximate tokens (chars / 4) of everything sent: the refinement call plus the reply prompt. */
  promptTokens: number;
  problems: string[];
}

const DEFAULT_PERSONA =
  'You are Tealeaf, a warm and thoughtful companion who talks with one person over months and years.';

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

function memoryLine(m: Memory): string {
  const past = m.supersededBy ? ' (this is no longer true; it changed later)' : '';
  return `- ${formatDate(m.time)}: ${m.text}${past}`;
}

export function buildSystemPrompt(now: Millis, memoryBlocks: readonly string[], persona = DEFAULT_PERSONA): string {
  const parts = [persona, `Today is ${formatDate(now)}.`];
  if (memoryBlocks.length > 0) {
    parts.push(
      'What you remember from earlier conversations is below, oldest first within each item. Use it only ' +
        'where it is relevant to what the person says now, and ignore anything that does not fit or would ' +
        'mislead. Things marked as no longer true describe the past, not the present. Do not invent memories, ' +
        'and if the person states something about the past that contradicts what you remember, gently say so.',
      memoryBlocks.map((b) => (b.startsWith('- ') ? b : `- ${b}`)).join('\n'),
    );
  }
  return parts.join('\n\n');
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
  const k = settings.k;
  const hits: SearchHit[] =
    query.trim() === ''
      ? []
      : input.index.search(query, queryVector, k + 4, { kinds: ['memory'] }).filter((h) => memoriesById.has(h.unit.id)).slice(0, k);
  const retrieved = hits.map((h) => h.unit.id);

  let blocks: string[] = [];
  let timelines: Timeline[] = [];
  let refined: string[] | undefined;
  let modelCalls = 0;
  let refineTokens = 0;
  if (settings.retrievalMode === 'plain-topk') {
    blocks = retrieved
      .map((id) => memoriesById.get(id)!)
      .sort(compareChronological)
      .map(memoryLine);
  } else {
    timelines = timelinesForRetrieved(input.graph, retrieved, input.seed, {
      maxSteps: settings.timelineMaxSteps,
      samples: settings.timelineSamples,
    });
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
    if (settings.refinement) problems.push(...result.problems);
    if (settings.refinement && input.llm && timelines.length > 0) {
      refined = result.notes;
      blocks = result.notes.filter((n) => n.trim() !== '');
    } else {
      blocks = result.raw;
    }
  }

  const systemPrompt = buildSystemPrompt(input.now, blocks, input.persona);
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt },
    ...input.dialogue.map((t) => ({ role: t.role, content: t.text })),
  ];
  const memoryIds: Id[] = [...retrieved];
  for (const t of timelines) for (const id of t.memoryIds) if (!memoryIds.includes(id)) memoryIds.push(id);
  const usedMemory: UsedMemory = {
    memoryIds,
    segmentIds: [],
    timelines,
    ...(refined ? { refined } : {}),
    scores: hits.map((h) => h.score),
  };
  return {
    messages,
    systemPrompt,
    usedMemory,
    modelCalls,
    promptTokens: refineTokens + approxTokens(messages.map((m) => m.content).join('\n')),
    problems,
  };
}
