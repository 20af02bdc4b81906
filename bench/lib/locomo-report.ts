// bench:locomo's scoring and report (bench/locomo.ts): runs one mode over every question and sums
// recall and answer hit by budget, category and file; prints the text report.
import type { Id } from '../../src/memory/types';
import { packByBudget, promptItem, promptItemCost } from '../../src/memory/retrieval/budget';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/memory/settings';
import { answerHit, shortAnswerForms, Tally } from './locomo-metrics';
import { promptTextOf, type Mode, type Retrieved, type RunContext } from './locomo-modes';
import type { Ingested } from './locomo-ingest';

/** The app's default context budget: every mode is also reported at it (atDefaultBudget). */
export const DEFAULT_BUDGET = DEFAULT_MEMORY_SETTINGS.contextBudgetWords;
export const BUDGETS: readonly number[] = [...new Set([DEFAULT_BUDGET, 300, 1000])].sort((a, b) => a - b);
export const CATEGORY: Record<string, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

interface Question {
  category: number;
  query: string;
  evidence: Id[];
  /** Forms of a short gold answer (answer hit), or undefined when the answer is long or absent. */
  answer?: string[];
}

export function questionsOf(c: Ingested): Question[] {
  const out: Question[] = [];
  for (const q of c.conv.qa) {
    if (q.category < 1 || q.category > 4) continue;
    const evidence = [...new Set(q.evidence.map((d) => c.turnIdOf.get(d)).filter((x): x is Id => x !== undefined))];
    if (evidence.length === 0) continue;
    out.push({ category: q.category, query: q.question, evidence, answer: shortAnswerForms(q.answer) });
  }
  return out;
}

/** A metric at every budget (keyed by the budget) with the number of questions it averages over (n). */
export type Metric = Record<string, number>;
export interface ModeResult {
  recall: Metric;
  byCategory: Record<string, Metric>;
  answerHit: Metric;
  answerHitByCategory: Record<string, Metric>;
  /** Per file: recall and answer hit at every budget (the spread of a change across files). */
  byFile: Record<string, { recall: Metric; answerHit: Metric }>;
  avgUnits: Metric;
  avgWords: Metric;
  /** Product modes: timelines in the prompt and model calls per question, by budget. */
  avgTimelines?: Metric;
  avgModelCalls?: Metric;
}

/** {"300": mean, "1000": mean, n} for the keys `${prefix}${budget}`. */
function metric(t: Tally, prefix: string): Metric {
  const out: Metric = {};
  for (const b of BUDGETS) out[b] = t.mean(`${prefix}${b}`) ?? 0;
  out.n = t.count(`${prefix}${BUDGETS[0]}`);
  return out;
}

export async function runMode(mode: Mode, ingested: Ingested[], names: string[], run: RunContext): Promise<ModeResult> {
  const recall = new Tally();
  const hit = new Tally();
  const size = new Tally();
  for (const [ci, c] of ingested.entries()) {
    const retrieve = mode.build?.(c);
    const turn = mode.turn?.(c, run);
    const render = promptTextOf(c);
    for (const q of questionsOf(c)) {
      const list = retrieve?.(q.query) ?? [];
      for (const b of BUDGETS) {
        let got: Retrieved;
        if (turn) got = await turn(q.query, b);
        else {
          const packed = packByBudget(list, b, { skipCovered: mode.skipCovered, cost: (u) => promptItemCost(render(u)) });
          got = {
            turnIds: packed.turnIds,
            units: packed.units.length,
            words: packed.used,
            text: packed.units.map((p) => promptItem(render(p.unit))).join('\n'),
          };
        }
        const have = new Set(got.turnIds);
        const r = q.evidence.filter((e) => have.has(e)).length / q.evidence.length;
        for (const key of [`${b}`, `${q.category}:${b}`, `f${ci}:${b}`]) recall.add(key, r);
        if (q.answer) {
          const h = answerHit(q.answer, got.text) ? 1 : 0;
          for (const key of [`${b}`, `${q.category}:${b}`, `f${ci}:${b}`]) hit.add(key, h);
        }
        size.add(`units${b}`, got.units);
        size.add(`words${b}`, got.words);
        if (got.timelines !== undefined) size.add(`timelines${b}`, got.timelines);
        if (got.modelCalls !== undefined) size.add(`calls${b}`, got.modelCalls);
      }
    }
  }
  const byCategory: Record<string, Metric> = {};
  const answerHitByCategory: Record<string, Metric> = {};
  for (const cat of [1, 2, 3, 4]) {
    if (recall.count(`${cat}:${BUDGETS[0]}`) > 0) byCategory[cat] = metric(recall, `${cat}:`);
    if (hit.count(`${cat}:${BUDGETS[0]}`) > 0) answerHitByCategory[cat] = metric(hit, `${cat}:`);
  }
  const byFile = Object.fromEntries(names.map((name, i) => [name, { recall: metric(recall, `f${i}:`), answerHit: metric(hit, `f${i}:`) }]));
  const avg = (prefix: string) => Object.fromEntries(BUDGETS.map((b) => [b, Math.round((size.mean(`${prefix}${b}`) ?? 0) * 100) / 100]));
  return {
    recall: metric(recall, ''),
    byCategory,
    answerHit: metric(hit, ''),
    answerHitByCategory,
    byFile,
    avgUnits: avg('units'),
    avgWords: avg('words'),
    ...(mode.turn ? { avgTimelines: avg('timelines'), avgModelCalls: avg('calls') } : {}),
  };
}

/** One mode at one budget: what `atDefaultBudget` lists for every mode. */
export interface AtBudget {
  recall: number;
  answerHit: number;
  recallByCategory: Record<string, number>;
  answerHitByCategory: Record<string, number>;
  avgTimelines?: number;
  avgModelCalls?: number;
}

export function atBudget(m: ModeResult, budget: number): AtBudget {
  const pick = (byCat: Record<string, Metric>) => Object.fromEntries(Object.entries(byCat).map(([cat, v]) => [cat, v[budget] ?? 0]));
  return {
    recall: m.recall[budget] ?? 0,
    answerHit: m.answerHit[budget] ?? 0,
    recallByCategory: pick(m.byCategory),
    answerHitByCategory: pick(m.answerHitByCategory),
    ...(m.avgTimelines ? { avgTimelines: m.avgTimelines[budget] ?? 0, avgModelCalls: m.avgModelCalls?.[budget] ?? 0 } : {}),
  };
}

/**
 * At the default budget, what each step of the method adds to the step before it (recall, answer
 * hit): timelines over plain top-k, refinement over raw timelines. Absent when a mode did not run.
 */
export function methodSteps(
  at: Record<string, AtBudget>,
): Record<string, { recall: number; answerHit: number; over: string; mode: string }> {
  const steps: [string, string, string][] = [
    ['timelines', 'turn', 'turn-plain-topk'],
    ['refinement', 'turn-refined', 'turn'],
  ];
  const out: Record<string, { recall: number; answerHit: number; over: string; mode: string }> = {};
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  for (const [step, mode, over] of steps) {
    const a = at[mode];
    const b = at[over];
    if (a && b) out[step] = { mode, over, recall: r3(a.recall - b.recall), answerHit: r3(a.answerHit - b.answerHit) };
  }
  return out;
}

const f = (x: number | undefined) => (x ?? 0).toFixed(3);
const atAll = (m: Metric) => BUDGETS.map((b) => f(m[b])).join(' / ');

/** The text report (without --json). */
export function printReport(result: {
  conversations: number;
  questions: number;
  shortAnswerQuestions: number;
  note: string;
  denseNote: string;
  modes: Record<string, ModeResult & { describe: string }>;
  baseline: { mode: string };
  best: { mode: string };
  atDefaultBudget: { words: number; best: string; modes: Record<string, AtBudget>; method: ReturnType<typeof methodSteps> };
}): void {
  const { modes } = result;
  const budgets = BUDGETS.map((b) => `@${b}`).join('/');
  console.log(
    `LoCoMo retrieval: ${result.conversations} conversation(s), ${result.questions} questions (categories 1-4), ${result.shortAnswerQuestions} with a short answer`,
  );
  console.log(result.note);
  console.log(result.denseNote);
  console.log(`mode                           recall ${budgets}   answer hit ${budgets}   units   words`);
  for (const [name, m] of Object.entries(modes)) {
    const units = BUDGETS.map((b) => m.avgUnits[b]).join('/');
    const words = BUDGETS.map((b) => m.avgWords[b]).join('/');
    console.log(`${name.padEnd(30)} ${atAll(m.recall)}       ${atAll(m.answerHit)}           ${units}  ${words}  ${m.describe}`);
  }
  for (const [label, name] of [
    ['baseline', result.baseline.mode],
    ['best', result.best.mode],
  ]) {
    const m = modes[name!]!;
    console.log(`${label} (${name}) by category, recall | answer hit, ${budgets} (n):`);
    for (const cat of Object.keys(m.byCategory)) {
      const r = m.byCategory[cat]!;
      const h = m.answerHitByCategory[cat];
      console.log(`  ${cat} ${CATEGORY[cat] ?? ''}: ${atAll(r)} (${r.n}) | ${h ? `${atAll(h)} (${h.n})` : '-'}`);
    }
  }
  const d = result.atDefaultBudget;
  const cats = Object.keys(CATEGORY);
  console.log(
    `At the app's default budget (${d.words} words), best: ${d.best}; recall | answer hit, recall by category ${cats.join('/')}:`,
  );
  for (const [name, a] of Object.entries(d.modes)) {
    const extra = a.avgTimelines !== undefined ? `  timelines ${a.avgTimelines}, model calls ${a.avgModelCalls}` : '';
    console.log(
      `  ${name.padEnd(32)} ${f(a.recall)} | ${f(a.answerHit)}   ${cats.map((c) => (c in a.recallByCategory ? f(a.recallByCategory[c]) : '  -  ')).join(' ')}${extra}`,
    );
  }
  for (const [step, s] of Object.entries(d.method))
    console.log(
      `  ${step} add (${s.mode} over ${s.over}): recall ${s.recall >= 0 ? '+' : ''}${s.recall}, answer hit ${s.answerHit >= 0 ? '+' : ''}${s.answerHit}`,
    );
}
