// Grading answers to LoCoMo questions: the LLM-as-a-judge "J" of the mem0 paper (Chhikara et al.,
// 2025, "Mem0: Building Production-Ready AI Agents with Scalable Long-Term Memory"), with its
// judge prompt, so figures can stand beside the published table; and token F1 as a second figure.
import type { LanguageModel } from '../../../src/ports';

// The judge prompt as published with the mem0 paper's evaluation; only the placeholders differ.
const JUDGE_PROMPT = `Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be given the following data:
    (1) a question (posed by one user to another user),
    (2) a 'gold' (ground truth) answer,
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT.

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {gold}
Generated answer: {answer}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG.
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".`;

export const JUDGE_SCHEMA = {
  title: 'answer_judgement',
  type: 'object',
  properties: { reasoning: { type: 'string' }, label: { type: 'string', enum: ['CORRECT', 'WRONG'] } },
  required: ['label'],
};

/** 1 when the judge says CORRECT, 0 otherwise (an unreadable verdict counts as WRONG). */
export async function judgeAnswer(judge: LanguageModel, question: string, gold: string, answer: string): Promise<0 | 1> {
  const content = JUDGE_PROMPT.replace('{question}', question).replace('{gold}', gold).replace('{answer}', answer);
  const raw = await judge.json([{ role: 'user', content }], JUDGE_SCHEMA);
  return parseVerdict(raw);
}

export function parseVerdict(raw: string): 0 | 1 {
  try {
    const label = (JSON.parse(raw) as { label?: unknown }).label;
    return label === 'CORRECT' ? 1 : 0;
  } catch {
    // Not JSON: accept a bare label, but never one that names both.
    const correct = /\bCORRECT\b/.test(raw);
    return correct && !/\bWRONG\b/.test(raw) ? 1 : 0;
  }
}

/** Lower case, no punctuation or articles: the usual normalisation of QA token F1. */
export function answerTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .split(/\s+/)
    .filter((w) => w !== '' && w !== 'a' && w !== 'an' && w !== 'the' && w !== 'and');
}

export function tokenF1(answer: string, gold: string): number {
  const a = answerTokens(answer);
  const g = answerTokens(gold);
  if (a.length === 0 || g.length === 0) return a.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const w of g) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of a) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      common++;
      counts.set(w, n - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / a.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}
