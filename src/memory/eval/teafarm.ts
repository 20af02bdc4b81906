// TeaFarm (Theanine §5), the counterfactual evaluation, as a pure pipeline over the memory the
// agent has: (1) the sessions' memories as summaries, (2-3) one call writes counterfactual
// questions with their answers, (4) a new session is simulated in memory only (the lead-in
// messages, each answered by the agent), (5) the question is asked, (6) a judge decides whether the
// reply corrected the false premise. Each question runs under each condition (conditions.ts).
// Nothing here receives a Repository: an evaluation cannot write to the user's memory or chats.
import type { Embedder, LanguageModel } from '../../ports';
import type { Id, Memory, Millis } from '../types';
import type { HybridIndex } from '../retrieval/types';
import type { MemoryGraph } from '../graph';
import type { MemorySettings } from '../settings';
import { prepareTurn, type DialogueTurn } from '../recall/turn';
import { RefineCache } from '../recall/refine';
import { conditionSettings, CONDITION_IDS, type ConditionId } from './conditions';
import { parseQuestions, parseVerdict, questionId, type TeaFarmQuestion, type Verdict } from './parse';
import { questionMessages, questionRepairMessages, questionsSchema, VERDICT_SCHEMA, verdictMessages } from './prompts';
import { scoreConditions, type ConditionScore } from './score';
import { sessionSummaries, summariesText, type SessionSummary } from './summaries';
import { estimateMessages, fittedJson, outputFor, windowOf } from '../fit';

export type { ConditionId } from './conditions';
export type { TeaFarmQuestion, Verdict } from './parse';
export type { ConditionScore } from './score';

/** One question asked under one condition, with everything needed to inspect it. */
export interface CaseResult {
  /** Question + condition + agent model: what the result cache is keyed by. */
  key: string;
  condition: ConditionId;
  questionId: string;
  question: string;
  falsePremise: string;
  correctAnswer: string;
  /** The simulated session before the question: lead-in messages and the agent's replies. */
  leadIn: DialogueTurn[];
  reply: string;
  /** 'unjudged': the judge's answer could not be read; 'error': a model call failed. */
  verdict: Verdict | 'unjudged' | 'error';
  reason: string;
  /** Memories the reply's prompt held. */
  memoryIds: Id[];
  /** Came from the result cache (a resumed run). */
  cached: boolean;
}

/** Finished results kept between runs, so a stopped run continues where it was. */
export interface TeaFarmCache {
  getCase(key: string): Promise<CaseResult | undefined>;
  putCase(key: string, result: CaseResult): Promise<void>;
  getQuestions(key: string): Promise<TeaFarmQuestion[] | undefined>;
  putQuestions(key: string, questions: TeaFarmQuestion[]): Promise<void>;
}

/** A cache that lives as long as the object (a tab, a test). */
export class MemoryTeaFarmCache implements TeaFarmCache {
  readonly cases = new Map<string, CaseResult>();
  readonly questions = new Map<string, TeaFarmQuestion[]>();
  async getCase(key: string) {
    return this.cases.get(key);
  }
  async putCase(key: string, result: CaseResult) {
    this.cases.set(key, structuredClone(result));
  }
  async getQuestions(key: string) {
    return this.questions.get(key);
  }
  async putQuestions(key: string, questions: TeaFarmQuestion[]) {
    this.questions.set(key, structuredClone(questions));
  }
}

export type TeaFarmStep = 'questions' | 'lead-in' | 'question' | 'judge' | 'done';

export interface TeaFarmProgress {
  step: TeaFarmStep;
  /** Cases finished (from the cache included) and all cases; 0 of 0 while writing questions. */
  done: number;
  total: number;
  condition?: ConditionId;
  /** 1-based number of the question under way. */
  question?: number;
}

export interface TeaFarmInput {
  /** The agent under test (replies) and, unless given apart, the question writer and judge. */
  llm: LanguageModel;
  questioner?: LanguageModel;
  judge?: LanguageModel;
  index: HybridIndex;
  graph: MemoryGraph;
  memoriesById: ReadonlyMap<Id, Memory>;
  embedder?: Embedder;
  settings: MemorySettings;
  conditions?: readonly ConditionId[];
  /** Questions to write (default 5). */
  questions?: number;
  /** When the simulated session takes place. */
  now: Millis;
  persona?: string;
  /** Words of summaries the question writer reads at most (default 1500). */
  summaryWords?: number;
  cache?: TeaFarmCache;
  seed?: number;
  signal?: AbortSignal;
  onProgress?: (p: TeaFarmProgress) => void;
}

export interface TeaFarmReport {
  status: 'done' | 'cancelled' | 'no-memories' | 'no-questions';
  /** Sessions whose memories the question writer read. */
  sessions: number;
  memories: number;
  questions: TeaFarmQuestion[];
  conditions: ConditionScore[];
  cases: CaseResult[];
  /** What went wrong with model output along the way (skipped items, unreadable verdicts). */
  problems: string[];
}

const REPLY_TOKENS = 250;

/**
 * What a case's result depends on: the agent, the settings it replied with, the timeline seed, the
 * memories (through the questions' key, which covers the summaries) and the question.
 */
function caseKey(
  input: TeaFarmInput,
  condition: ConditionId,
  settings: MemorySettings,
  questionsKey: string,
  question: TeaFarmQuestion,
): string {
  return JSON.stringify([input.llm.modelId, condition, settings, input.seed ?? 1, questionsKey, question.question]);
}

/** Output tokens per question written (question, premise, answer, lead-in and the JSON around them). */
const QUESTION_TOKENS = 130;
/** Tokens per word of the summaries as the call shows them (dates, bullets), estimated high. */
const SUMMARY_TOKENS_PER_WORD = 1.6;

/** Questions the questioner's output cap allows, at most `asked`. */
function questionsFor(llm: LanguageModel, asked: number): number {
  return Math.max(1, Math.min(asked, Math.floor((windowOf(llm).maxOutputTokens - 30) / QUESTION_TOKENS)));
}

/** Words of summaries the questioner's window holds beside its instructions and answer. */
function summaryWordsFor(llm: LanguageModel, max: number, asked: number): number {
  const w = windowOf(llm);
  const instructions = estimateMessages(questionMessages('', max));
  const room = w.contextTokens - outputFor(w, 30 + QUESTION_TOKENS * max) - instructions;
  return Math.max(0, Math.min(asked, Math.floor(room / SUMMARY_TOKENS_PER_WORD)));
}

async function writeQuestions(
  input: TeaFarmInput,
  summaries: readonly SessionSummary[],
  words: number,
  max: number,
  problems: string[],
): Promise<TeaFarmQuestion[]> {
  const llm = input.questioner ?? input.llm;
  const schema = questionsSchema(max);
  const output = 30 + QUESTION_TOKENS * max;
  const instructions = estimateMessages(questionMessages('', max));
  // In a smaller window than planned (the engine counted more), the oldest sessions give way first.
  const build = (tokens: number) =>
    questionMessages(summariesText(summaries, Math.min(words, Math.floor((tokens - instructions) / SUMMARY_TOKENS_PER_WORD))).text, max);
  const first = await fittedJson({ llm, build, output, schema, temperature: 0.75, signal: input.signal });
  const parsed = parseQuestions(first.text, max);
  problems.push(...parsed.problems.map((p) => `questions: ${p}`));
  if (parsed.questions.length > 0 || input.signal?.aborted) return parsed.questions;
  // One repair attempt, then give up with the problems noted. What the model wrote is shown back
  // only as far as the window allows.
  const again = await fittedJson({
    llm,
    build: (tokens) =>
      questionRepairMessages(first.prompt.messages, first.text, Math.max(0, tokens - estimateMessages(first.prompt.messages) - 80) * 3),
    output,
    schema,
    signal: input.signal,
  });
  const second = parseQuestions(again.text, max);
  problems.push(...second.problems.map((p) => `questions (second try): ${p}`));
  return second.questions;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function runTeaFarm(input: TeaFarmInput): Promise<TeaFarmReport> {
  const conditions = input.conditions ?? CONDITION_IDS;
  const asked = Math.max(1, Math.min(20, Math.floor(input.questions ?? 5)));
  const problems: string[] = [];
  const summaries = sessionSummaries(input.memoriesById);
  const report = (status: TeaFarmReport['status'], sessions: number, questions: TeaFarmQuestion[], cases: CaseResult[]) => ({
    status,
    sessions,
    memories: input.memoriesById.size,
    questions,
    conditions: scoreConditions(cases, conditions),
    cases,
    problems,
  });
  if (summaries.length === 0) return report('no-memories', 0, [], []);
  // As many questions as the questioner may write, and as many summaries as its window holds.
  const questioner = input.questioner ?? input.llm;
  const max = questionsFor(questioner, asked);
  const words = summaryWordsFor(questioner, max, input.summaryWords ?? 1500);
  const { text, sessions } = summariesText(summaries, words);

  input.onProgress?.({ step: 'questions', done: 0, total: 0 });
  const questionsKey = questionId(JSON.stringify([(input.questioner ?? input.llm).modelId, max, text]));
  let questions = await input.cache?.getQuestions(questionsKey);
  if (!questions) {
    questions = await writeQuestions(input, summaries, words, max, problems);
    if (input.signal?.aborted) return report('cancelled', sessions, [], []);
    if (questions.length > 0) await input.cache?.putQuestions(questionsKey, questions);
  }
  if (questions.length === 0) return report('no-questions', sessions, [], []);

  const total = questions.length * conditions.length;
  const cases: CaseResult[] = [];
  // Question by question, every condition each: a stopped run still compares like with like. Each
  // case runs on its own state (runCase), so no case's result depends on the ones run before it.
  for (const [qi, q] of questions.entries()) {
    for (const condition of conditions) {
      if (input.signal?.aborted) return report('cancelled', sessions, questions, cases);
      const settings = conditionSettings(condition, input.settings);
      const key = caseKey(input, condition, settings, questionsKey, q);
      const hit = await input.cache?.getCase(key);
      if (hit) {
        cases.push({ ...hit, cached: true });
        continue;
      }
      const at = (step: TeaFarmStep) => input.onProgress?.({ step, done: cases.length, total, condition, question: qi + 1 });
      let result: CaseResult;
      try {
        result = await runCase(input, settings, q, key, condition, at);
      } catch (e) {
        if (input.signal?.aborted) return report('cancelled', sessions, questions, cases);
        // Not cached: a run again tries it again.
        cases.push(errorCase(key, condition, q, errorText(e)));
        continue;
      }
      // A call cut short by a cancel returns part of its text: never record that.
      if (input.signal?.aborted) return report('cancelled', sessions, questions, cases);
      if (result.verdict === 'unjudged') problems.push(`verdict on "${q.question}" (${condition}): ${result.reason || 'unreadable'}`);
      cases.push(result);
      await input.cache?.putCase(key, result);
    }
  }
  input.onProgress?.({ step: 'done', done: cases.length, total });
  return report('done', sessions, questions, cases);
}

/** What every case result says of its question and condition. */
function caseOf(key: string, condition: ConditionId, q: TeaFarmQuestion) {
  return { key, condition, questionId: q.id, question: q.question, falsePremise: q.falsePremise, correctAnswer: q.correctAnswer };
}

function errorCase(key: string, condition: ConditionId, q: TeaFarmQuestion, reason: string): CaseResult {
  return {
    ...caseOf(key, condition, q),
    leadIn: [],
    reply: '',
    verdict: 'error',
    reason,
    memoryIds: [],
    cached: false,
  };
}

/** Steps 4-6 for one question under one condition's settings. */
async function runCase(
  input: TeaFarmInput,
  settings: MemorySettings,
  q: TeaFarmQuestion,
  key: string,
  condition: ConditionId,
  at: (step: TeaFarmStep) => void,
): Promise<CaseResult> {
  const dialogue: DialogueTurn[] = [];
  // This case's own notes: a note written in another case (another condition's dialogue) is never reused.
  const refineCache = new RefineCache();
  const reply = async (text: string) => {
    dialogue.push({ role: 'user', text, time: input.now });
    const prepared = await prepareTurn({
      dialogue,
      now: input.now,
      index: input.index,
      graph: input.graph,
      memoriesById: input.memoriesById,
      llm: input.llm,
      embedder: input.embedder,
      settings,
      refineCache,
      seed: input.seed ?? 1,
      persona: input.persona,
      signal: input.signal,
    });
    const answer = (
      await input.llm.chat(prepared.messages, { signal: input.signal, maxTokens: Math.min(REPLY_TOKENS, prepared.maxTokens) })
    ).trim();
    dialogue.push({ role: 'assistant', text: answer, time: input.now });
    return { answer, memoryIds: prepared.usedMemory.memoryIds };
  };
  for (const line of q.leadIn) {
    at('lead-in');
    await reply(line);
    if (input.signal?.aborted) break;
  }
  at('question');
  const leadIn = [...dialogue];
  const final = await reply(q.question);
  at('judge');
  const judge = input.judge ?? input.llm;
  // The reply is what gives way in a small window (its start is what answers the question).
  const { text: raw } = await fittedJson({
    llm: judge,
    build: (tokens) => verdictMessages({ ...q, reply: final.answer }, Math.max(200, (tokens - 300) * 3)),
    output: 120,
    schema: VERDICT_SCHEMA,
    signal: input.signal,
  });
  const parsed = parseVerdict(raw);
  return {
    ...caseOf(key, condition, q),
    leadIn,
    reply: final.answer,
    verdict: parsed.verdict ?? 'unjudged',
    reason: parsed.reason || parsed.problems.join('; '),
    memoryIds: final.memoryIds,
    cached: false,
  };
}
