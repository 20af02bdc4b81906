// LoCoMo question answering end to end through the app's own pipeline, with a real model behind
// an OpenAI-compatible server: the model summarises every session and labels links (Phase 0 and
// Phase I, as the memorise job does in the app), each question of categories 1-4 is answered
// through prepareTurn (retrieval, timelines, refinement: Phase II and III), and a judge model
// grades the answer with the mem0 paper's prompt (J), with token F1 beside it.
import { performance } from 'node:perf_hooks';
import type { LocomoConversation } from '../../../src/memory/locomo';
import { prepareTurn } from '../../../src/memory/recall/turn';
import { RefineCache } from '../../../src/memory/recall/refine';
import { segmentUnit } from '../../../src/memory/retrieval/units';
import { withDefaults, type MemorySettings } from '../../../src/memory/settings';
import type { LanguageModel } from '../../../src/ports';
import { judgeAnswer, tokenF1 } from './judge';
import { ingestLocomo } from '../locomo-ingest';

export const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

export interface QaOptions {
  answerer: LanguageModel;
  judge: LanguageModel;
  settings?: Partial<MemorySettings>;
  /** At most this many questions per conversation (all when absent). */
  maxQuestions?: number;
  onProgress?: (line: string) => void;
}

export interface QuestionResult {
  conversation: string;
  category: number;
  question: string;
  gold: string;
  answer: string;
  j: 0 | 1;
  f1: number;
  /** Words of remembered material in the answer's prompt (approx. tokens: 4/3 per word). */
  memoryWords: number;
  /** Model calls for this question: refinement and self-reflection (0-1) + the answer; the judge not counted. */
  modelCalls: number;
  /** The self-reflection judged the memory found not enough, and a second search ran. */
  requeried: boolean;
  latencyMs: number;
}

export interface ConversationResult {
  name: string;
  sessions: number;
  memories: number;
  /** Calls made while memorising (summaries, labels, segmentation). */
  memoriseCalls: number;
  questions: QuestionResult[];
}

/** Memorises a LoCoMo conversation session by session with the model, as the app's job does. */
export async function memorise(
  conv: LocomoConversation,
  name: string,
  llm: LanguageModel,
  settings: MemorySettings,
  log: (s: string) => void,
) {
  const c = await ingestLocomo(conv, name, { llm, settings, log });
  // One index over memories and segments, as MemoryService builds it.
  for (const seg of c.segments) c.memoryIndex.upsert(segmentUnit(seg));
  return { graph: c.graph, memories: new Map(c.memories.map((m) => [m.id, m])), index: c.memoryIndex, calls: c.modelCalls, end: c.end };
}

export async function answerConversation(conv: LocomoConversation, name: string, options: QaOptions): Promise<ConversationResult> {
  const log = options.onProgress ?? (() => {});
  const settings = withDefaults(options.settings ?? {});
  const m = await memorise(conv, name, options.answerer, settings, log);
  const questions = conv.qa.filter((q) => q.category >= 1 && q.category <= 4 && q.answer !== undefined);
  const asked = options.maxQuestions === undefined ? questions : questions.slice(0, options.maxQuestions);
  const refineCache = new RefineCache();
  const results: QuestionResult[] = [];
  for (const [i, q] of asked.entries()) {
    const t0 = performance.now();
    // The question is asked a day after the conversation's last session, as a new session.
    const turn = await prepareTurn({
      dialogue: [{ role: 'user', text: q.question }],
      now: m.end + 86_400_000,
      index: m.index,
      graph: m.graph,
      memoriesById: m.memories,
      llm: options.answerer,
      settings,
      refineCache,
      seed: 1,
    });
    const answer = (await options.answerer.chat(turn.messages, { maxTokens: 200 })).trim();
    const latencyMs = performance.now() - t0;
    const gold = String(q.answer);
    const j = await judgeAnswer(options.judge, q.question, gold, answer);
    results.push({
      conversation: name,
      category: q.category,
      question: q.question,
      gold,
      answer,
      j,
      f1: tokenF1(answer, gold),
      memoryWords: turn.budget.used,
      modelCalls: turn.modelCalls + 1,
      requeried: turn.usedMemory.reflected === 'searched',
      latencyMs,
    });
    log(`${name}: question ${i + 1}/${asked.length} ${j ? 'CORRECT' : 'WRONG'}`);
  }
  return { name, sessions: conv.sessions.length, memories: m.memories.size, memoriseCalls: m.calls, questions: results };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;

export interface QaSummary {
  questions: number;
  j: number;
  f1: number;
  byCategory: Record<string, { n: number; j: number; f1: number }>;
  memoryTokensPerQuestion: number;
  modelCallsPerQuestion: number;
  /** Share of questions on which the self-reflection searched again. */
  requeryRate: number;
  memoriseCalls: number;
  latencyMs: { p50: number; p95: number };
}

export function summarise(conversations: readonly ConversationResult[]): QaSummary {
  const all = conversations.flatMap((c) => c.questions);
  const byCategory: QaSummary['byCategory'] = {};
  for (const cat of [1, 2, 3, 4]) {
    const qs = all.filter((q) => q.category === cat);
    if (qs.length) byCategory[CATEGORY_NAMES[cat]] = { n: qs.length, j: r3(mean(qs.map((q) => q.j))), f1: r3(mean(qs.map((q) => q.f1))) };
  }
  return {
    questions: all.length,
    j: r3(mean(all.map((q) => q.j))),
    f1: r3(mean(all.map((q) => q.f1))),
    byCategory,
    // Tokens approximated as 4/3 per word (English prose).
    memoryTokensPerQuestion: Math.round(mean(all.map((q) => (q.memoryWords * 4) / 3))),
    modelCallsPerQuestion: r3(mean(all.map((q) => q.modelCalls))),
    requeryRate: r3(mean(all.map((q) => (q.requeried ? 1 : 0)))),
    memoriseCalls: conversations.reduce((a, c) => a + c.memoriseCalls, 0),
    latencyMs: {
      p50: Math.round(
        percentile(
          all.map((q) => q.latencyMs),
          0.5,
        ),
      ),
      p95: Math.round(
        percentile(
          all.map((q) => q.latencyMs),
          0.95,
        ),
      ),
    },
  };
}
