// One chat replayed turn after turn as the app replies: prepareTurn (the call before the reply,
// when it makes one, goes to the same engines), then the reply, both through the engines under
// test; each turn's prepared `sent` is handed to the next turn of the same chat. Records, per turn
// and per engine, what was read anew before the call before the reply and before the reply.
import { RefineCache } from '../../../src/memory/recall/refine';
import { prepareTurn, type DialogueTurn, type PreparedTurn } from '../../../src/memory/recall/turn';
import type { SentChat } from '../../../src/memory/recall/sent-chat';
import { withDefaults } from '../../../src/memory/settings';
import type { ChatMessage, LanguageModel } from '../../../src/ports';
import type { CallRecord, EnforcedModel } from '../../../tests/support/standin';
import type { ChatPlan, ProbeKind } from './chats';

/** One engine's view of one turn. */
export interface EngineTurn {
  /** The call before the reply (refinement, self-reflection), if one was made: read anew and written. */
  pre?: { readAnew: number; outputTokens: number; promptTokens: number };
  /** `limit`: the most the reply could write; `cut`: it stopped there ("length"), not by itself. */
  reply: { promptTokens: number; readAnew: number; cachedTokens: number; outputTokens: number; limit: number; cut: boolean };
}

export interface TurnRecord {
  /** 1-based. */
  turn: number;
  /** The reply request's messages but the last are the previous reply request's plus its reply. */
  extendsPrevious: boolean;
  /** Per engine, in the engines' order. */
  engines: EngineTurn[];
}

export interface ProbeResult {
  kind: ProbeKind;
  /** Share of its evidence turns in the prompt (as messages, recalled earlier turns, or memory sources). */
  recall: number;
}

export interface Replayed {
  turns: TurnRecord[];
  probes: ProbeResult[];
}

const same = (a: readonly ChatMessage[], b: readonly ChatMessage[]) =>
  a.length === b.length && a.every((m, i) => m.role === b[i]!.role && m.content === b[i]!.content);

function engineTurn(calls: readonly CallRecord[]): EngineTurn {
  const reply = calls.at(-1);
  if (!reply || reply.kind !== 'chat') throw new Error('a turn ends with its reply');
  const before = calls.slice(0, -1);
  const pre =
    before.length > 0
      ? {
          readAnew: before.reduce((a, c) => a + c.readAnew, 0),
          outputTokens: before.reduce((a, c) => a + c.outputTokens, 0),
          promptTokens: before.reduce((a, c) => a + c.promptTokens, 0),
        }
      : undefined;
  return {
    pre,
    reply: {
      promptTokens: reply.promptTokens,
      readAnew: reply.readAnew,
      cachedTokens: reply.cachedTokens,
      outputTokens: reply.outputTokens,
      limit: reply.limit,
      cut: reply.cut,
    },
  };
}

/**
 * Share of `evidence` that this prepared prompt holds: turns sent as messages or recalled, and the
 * sources of every memory and passage in it (this message's, those an earlier message's block
 * still holds, and the facts about the person in the system prompt).
 */
function held(prepared: PreparedTurn, dialogue: readonly DialogueTurn[], evidence: readonly string[], plan: ChatPlan): number {
  const used = prepared.usedMemory;
  const sources = (id: string) => plan.memory.memories.get(id)?.sourceTurnIds ?? plan.memory.index.get(id)?.sourceTurnIds ?? [];
  const seen = new Set<string>([
    ...dialogue.slice(-prepared.chat.recent).flatMap((t) => (t.id ? [t.id] : [])),
    ...prepared.chat.earlierTurnIds,
    ...prepared.units.flatMap((u) => u.sourceTurnIds),
    ...[...used.memoryIds, ...used.segmentIds, ...(used.personaIds ?? [])].flatMap(sources),
  ]);
  return evidence.filter((e) => seen.has(e)).length / Math.max(1, evidence.length);
}

/**
 * Replays `plan` through `llm` (the engines under test, EngineTee) and asks its probes through
 * `aside` (an engine of the same window whose cache is not measured).
 */
export async function replay(
  plan: ChatPlan,
  llm: LanguageModel,
  engines: readonly EnforcedModel[],
  aside: LanguageModel,
  seed: number,
): Promise<Replayed> {
  const settings = withDefaults();
  const refineCache = new RefineCache();
  const dialogue: DialogueTurn[] = [];
  const turns: TurnRecord[] = [];
  const probes: ProbeResult[] = [];
  let sent: SentChat | undefined;
  let previous: ChatMessage[] | undefined;
  const prepare = (d: DialogueTurn[], model: LanguageModel, now: number, cache: RefineCache) =>
    prepareTurn({
      dialogue: d,
      now,
      index: plan.memory.index,
      graph: plan.memory.graph,
      memoriesById: plan.memory.memories,
      llm: model,
      settings,
      refineCache: cache,
      seed,
      sent,
    });
  for (const [i, line] of plan.lines.entries()) {
    dialogue.push({ id: line.id, role: 'user', text: line.text, time: line.time });
    const from = engines.map((e) => e.calls.length);
    const prepared = await prepare(dialogue, llm, line.time, refineCache);
    const reply = await llm.chat(prepared.messages, { maxTokens: prepared.maxTokens });
    const extendsPrevious = !!previous && same(prepared.messages.slice(0, -1), previous);
    previous = [...prepared.messages, { role: 'assistant', content: reply }];
    sent = prepared.sent;
    turns.push({ turn: i + 1, extendsPrevious, engines: engines.map((e, k) => engineTurn(e.calls.slice(from[k]))) });
    dialogue.push({ id: `${line.id}:reply`, role: 'assistant', text: reply, time: line.time + 30_000 });
    for (const p of plan.probes.filter((x) => x.after === i)) {
      const asked: DialogueTurn[] = [...dialogue, { role: 'user', text: p.question, time: line.time + 60_000 }];
      // Its own refinement cache: a probe must not hand the chat a note written for its question.
      const prepared = await prepare(asked, aside, line.time + 60_000, new RefineCache());
      probes.push({ kind: p.kind, recall: held(prepared, asked, p.evidence, plan) });
    }
  }
  return { turns, probes };
}
