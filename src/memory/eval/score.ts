// Success rate per condition (Theanine's SR, Table 4): the share of checked cases in which the
// reply corrected the false premise. A case counts once (by its key) and only when it ran and the
// judge gave a readable verdict; unreadable verdicts and failed calls are counted apart.
import { conditionLabel, type ConditionId } from './conditions';
import type { Verdict } from './parse';

/** What scoring reads of a case (a CaseResult has it). */
export interface ScoredCase {
  /** Question + condition + agent model: a case counts once by it. */
  key: string;
  condition: ConditionId;
  /** 'unjudged': the judge's answer could not be read; 'error': a model call failed. */
  verdict: Verdict | 'unjudged' | 'error';
}

export interface ConditionScore {
  condition: ConditionId;
  label: string;
  /** Distinct cases that got a reply. */
  ran: number;
  /** Of those, the ones with a readable verdict. */
  checked: number;
  corrected: number;
  fooled: number;
  /** Replies the judge gave no readable verdict on. */
  unjudged: number;
  /** Cases whose model calls failed (no reply). */
  errors: number;
  /** corrected / checked, or null when nothing was checked. */
  successRate: number | null;
}

export function scoreConditions(cases: readonly ScoredCase[], conditions: readonly ConditionId[]): ConditionScore[] {
  const distinct = new Map<string, ScoredCase>();
  for (const c of cases) distinct.set(c.key, c);
  return conditions.map((condition) => {
    const mine = [...distinct.values()].filter((c) => c.condition === condition);
    const count = (v: ScoredCase['verdict']) => mine.filter((c) => c.verdict === v).length;
    const corrected = count('corrected');
    const fooled = count('fooled');
    const checked = corrected + fooled;
    return {
      condition,
      label: conditionLabel(condition),
      ran: checked + count('unjudged'),
      checked,
      corrected,
      fooled,
      unjudged: count('unjudged'),
      errors: count('error'),
      successRate: checked === 0 ? null : Math.round((corrected / checked) * 1000) / 1000,
    };
  });
}
