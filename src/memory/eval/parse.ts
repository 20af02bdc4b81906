// Defensive reading of TeaFarm's model output (llm-output.ts does the JSON salvage): bad items
// are skipped with a problem noted, nothing throws.
import { cleanText, extractJson, pickArray } from '../llm-output';
import { MAX_LEAD_IN } from './prompts';

/** One counterfactual question with its answer key. */
export interface TeaFarmQuestion {
  /** Stable id from the question's text. */
  id: string;
  question: string;
  falsePremise: string;
  correctAnswer: string;
  /** User messages sent before the question (may be empty). */
  leadIn: string[];
}

export interface ParsedQuestions {
  questions: TeaFarmQuestion[];
  problems: string[];
}

export type Verdict = 'corrected' | 'fooled';

export interface ParsedVerdict {
  /** Undefined when no verdict could be read. */
  verdict?: Verdict;
  reason: string;
  problems: string[];
}

/** FNV-1a of the text: ids that survive a reload without a crypto API. */
export function questionId(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return `q-${(h >>> 0).toString(36)}`;
}

function field(obj: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const k of keys) if (Object.hasOwn(obj, k)) return obj[k];
  // "falsePremise", "False Premise": keys compared without case and punctuation.
  const wanted = new Set(keys.map((k) => k.toLowerCase().replace(/[^a-z]/g, '')));
  for (const [k, v] of Object.entries(obj)) if (wanted.has(k.toLowerCase().replace(/[^a-z]/g, ''))) return v;
  return undefined;
}

function leadIn(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  return list
    .map((x) => cleanText(x, 400))
    .filter((x) => x !== '')
    .slice(0, MAX_LEAD_IN);
}

/** Questions from the generator's output: items without a question or an answer are skipped. */
export function parseQuestions(raw: unknown, max: number): ParsedQuestions {
  const extracted = extractJson(raw);
  const problems = [...extracted.problems];
  const items = pickArray(extracted.value, ['questions', 'items', 'qa']);
  if (!items) return { questions: [], problems: [...problems, 'no list of questions'] };
  const questions: TeaFarmQuestion[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      problems.push(`item ${i + 1}: not an object`);
      return;
    }
    const obj = item as Record<string, unknown>;
    const question = cleanText(field(obj, ['question', 'counterfactual_question', 'q']));
    const correctAnswer = cleanText(field(obj, ['correct_answer', 'answer', 'truth', 'fact']));
    if (question.split(' ').length < 3) return void problems.push(`item ${i + 1}: no question`);
    if (correctAnswer === '') return void problems.push(`item ${i + 1}: no correct answer`);
    const key = question.toLowerCase();
    if (seen.has(key)) return void problems.push(`item ${i + 1}: repeats an earlier question`);
    seen.add(key);
    questions.push({
      id: questionId(question),
      question,
      falsePremise: cleanText(field(obj, ['false_premise', 'premise', 'assumption'])),
      correctAnswer,
      leadIn: leadIn(field(obj, ['lead_in', 'opening', 'openings', 'lead_ins'])),
    });
  });
  if (questions.length > max) problems.push(`${questions.length - max} question(s) over the limit dropped`);
  return { questions: questions.slice(0, max), problems };
}

function verdictWord(raw: unknown): Verdict | undefined {
  if (typeof raw === 'boolean') return raw ? 'corrected' : 'fooled';
  if (typeof raw !== 'string') return undefined;
  const w = raw.toLowerCase();
  const corrected = /\b(corrected|correct|success|passed|pass)\b/.test(w);
  const fooled = /\b(fooled|wrong|fail|failed|misled)\b/.test(w);
  return corrected === fooled ? undefined : corrected ? 'corrected' : 'fooled';
}

/** The judge's verdict; a text naming both outcomes (or neither) is no verdict. */
export function parseVerdict(raw: unknown): ParsedVerdict {
  const extracted = extractJson(raw);
  if (extracted.found && extracted.value && typeof extracted.value === 'object' && !Array.isArray(extracted.value)) {
    const obj = extracted.value as Record<string, unknown>;
    const verdict = verdictWord(field(obj, ['verdict', 'label', 'result'])) ?? verdictWord(field(obj, ['corrected', 'success', 'passed']));
    const reason = cleanText(field(obj, ['reason', 'reasoning', 'explanation']), 300);
    return verdict ? { verdict, reason, problems: extracted.problems } : { reason, problems: [...extracted.problems, 'no verdict'] };
  }
  // Not JSON: a bare word is accepted, as long as only one outcome is named.
  const verdict = verdictWord(raw);
  const reason = cleanText(raw, 300);
  return verdict ? { verdict, reason, problems: ['verdict read from plain text'] } : { reason, problems: ['no verdict'] };
}
