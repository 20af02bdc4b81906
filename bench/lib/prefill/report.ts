// bench:prefill's figures: per window, chat kind and cache rule, what an engine reads before a
// reply's first token, from turn 8 on (the first turns are short chats that any layout serves).
import type { ProbeKind } from './chats';
import type { ProbeResult, TurnRecord } from './replay';

/** Turns before this one are left out of the medians. */
export const FROM_TURN = 8;
/** Prompt tokens a second, from a slow CPU to a fast GPU. */
export const RATES = [100, 300, 1000] as const;

export interface RuleRow {
  window: number;
  chat: string;
  rule: string;
  /** Turns measured (from turn 8 on). */
  turns: number;
  /** The whole reply prompt: what an engine without a cache reads. */
  promptMedian: number;
  /** Tokens read anew before the reply (the reply request only). */
  readAnewMedian: number;
  readAnewP90: number;
  /** Share of reply requests that extend the previous reply request and its reply exactly. */
  exactShare: number;
  /** Tokens of the reply prompt the engine's cache held. */
  cachedMedian: number;
  /** Tokens read and written before the reply's first token: the call before it (read anew and written) and the reply's read. */
  beforeReplyMedian: number;
  beforeReplyP90: number;
  /** Share of turns with a call before the reply. */
  preReplyShare: number;
  /** Replies cut at their output limit (the prompt left them too little room), and the least limit a reply had. */
  cutReplies: number;
  minReplyLimit: number;
  /** The longest reply written, in tokens (all turns). */
  maxReplyTokens: number;
  /** Seconds before the first token at each rate, from the medians (written tokens counted as read: a floor). */
  seconds: Record<string, { readAnew: number; beforeReply: number }>;
}

export interface RecallRow {
  window: number;
  chat: string;
  kind: ProbeKind;
  questions: number;
  recall: number;
}

/** The q-quantile as bench:fit takes it (the value at floor(q n) of the sorted list). */
export const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

const share = (xs: readonly boolean[]) => (xs.length === 0 ? 0 : xs.filter(Boolean).length / xs.length);
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

export function ruleRow(window: number, chat: string, rule: string, engine: number, turns: readonly TurnRecord[]): RuleRow {
  const measured = turns.filter((t) => t.turn >= FROM_TURN);
  const mine = measured.map((t) => t.engines[engine]!);
  const readAnew = mine.map((e) => e.reply.readAnew);
  const before = mine.map((e) => (e.pre ? e.pre.readAnew + e.pre.outputTokens : 0) + e.reply.readAnew);
  const readAnewMedian = quantile(readAnew, 0.5);
  const beforeReplyMedian = quantile(before, 0.5);
  return {
    window,
    chat,
    rule,
    turns: measured.length,
    promptMedian: quantile(
      mine.map((e) => e.reply.promptTokens),
      0.5,
    ),
    readAnewMedian,
    readAnewP90: quantile(readAnew, 0.9),
    exactShare: round(share(measured.map((t) => t.extendsPrevious)), 3),
    cachedMedian: quantile(
      mine.map((e) => e.reply.cachedTokens),
      0.5,
    ),
    beforeReplyMedian,
    beforeReplyP90: quantile(before, 0.9),
    preReplyShare: round(share(mine.map((e) => e.pre !== undefined)), 3),
    cutReplies: turns.filter((t) => t.engines[engine]!.reply.cut).length,
    minReplyLimit: Math.min(...turns.map((t) => t.engines[engine]!.reply.limit)),
    maxReplyTokens: Math.max(...turns.map((t) => t.engines[engine]!.reply.outputTokens)),
    seconds: Object.fromEntries(
      RATES.map((r) => [String(r), { readAnew: round(readAnewMedian / r, 2), beforeReply: round(beforeReplyMedian / r, 2) }]),
    ),
  };
}

export function recallRows(window: number, chat: string, probes: readonly ProbeResult[]): RecallRow[] {
  return (['near', 'far', 'memory'] as const).flatMap((kind) => {
    const mine = probes.filter((p) => p.kind === kind);
    if (mine.length === 0) return [];
    return [{ window, chat, kind, questions: mine.length, recall: round(mine.reduce((a, p) => a + p.recall, 0) / mine.length, 3) }];
  });
}
