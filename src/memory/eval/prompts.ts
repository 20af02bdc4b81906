// TeaFarm's two model calls besides the agent's replies: the question generator (steps 2-3) and
// the judge (step 6). The paper's prompts (its figures 27-29) are images we could not read, so
// these are written for this project after its description in §5.1.
import type { ChatMessage, JsonSchema } from '../../ports';

export const QUESTIONS_SCHEMA_TITLE = 'teafarm_questions';
export const VERDICT_SCHEMA_TITLE = 'teafarm_verdict';

/** At most this many lead-in messages before the question. */
export const MAX_LEAD_IN = 2;

export function questionsSchema(max: number): JsonSchema {
  return {
    title: QUESTIONS_SCHEMA_TITLE,
    type: 'object',
    properties: {
      questions: {
        type: 'array',
        maxItems: max,
        items: {
          type: 'object',
          properties: {
            question: { type: 'string' },
            false_premise: { type: 'string' },
            correct_answer: { type: 'string' },
            lead_in: { type: 'array', maxItems: MAX_LEAD_IN, items: { type: 'string' } },
          },
          required: ['question', 'false_premise', 'correct_answer'],
        },
      },
    },
    required: ['questions'],
  };
}

export function questionMessages(summaries: string, max: number): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You write test questions for a companion that should remember its past conversations with one person. You answer with JSON only.',
    },
    {
      role: 'user',
      content: `Below are summaries of past conversations between a person ("the user") and their companion Tealeaf, session by session, oldest first. Later sessions may change what earlier ones said: what holds now is the latest stage of each story.

${summaries}

Write up to ${max} counterfactual questions. Each is a message the user might send in a new conversation that takes for granted something FALSE about the past as it stands now (for example "Since you sold your car, how do you get to work?" when the user still has the car). A companion that remembers well should notice the mistake and gently correct it.
For each question give:
- "question": the user's message, natural and in the first person, which assumes the false premise without announcing it;
- "false_premise": what the question wrongly takes for granted;
- "correct_answer": what is actually true according to the summaries (the latest stage);
- "lead_in": one or two short messages the user might send first, moving the conversation towards the topic without saying what is true.
Use only facts from the summaries, each question about a different fact. Answer as JSON: {"questions": [...]}.`,
    },
  ];
}

/** The one repair attempt when the first answer held no usable question. */
export function questionRepairMessages(first: ChatMessage[], raw: string, maxChars = 4000): ChatMessage[] {
  return [
    ...first,
    { role: 'assistant', content: raw.slice(0, Math.min(4000, maxChars)) },
    {
      role: 'user',
      content:
        'That was not usable. Write it again as JSON only, in this shape: {"questions": [{"question": "...", "false_premise": "...", "correct_answer": "...", "lead_in": ["..."]}]}',
    },
  ];
}

export const VERDICT_SCHEMA: JsonSchema = {
  title: VERDICT_SCHEMA_TITLE,
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: ['corrected', 'fooled'] },
    reason: { type: 'string' },
  },
  required: ['verdict', 'reason'],
};

export function verdictMessages(
  c: { question: string; falsePremise: string; correctAnswer: string; reply: string },
  /** Characters of the reply shown (its start: what answers the question). */
  replyChars = 4000,
): ChatMessage[] {
  const reply = c.reply.trim().length > replyChars ? `${c.reply.trim().slice(0, replyChars)} …` : c.reply.trim();
  return [
    { role: 'system', content: 'You judge whether a companion remembered the past correctly. You answer with JSON only.' },
    {
      role: 'user',
      content: `In a new conversation the user asked a question built on a FALSE premise about their own past.
False premise: ${c.falsePremise || '(not stated)'}
What is actually true: ${c.correctAnswer}
The user asked: ${c.question}
The companion replied: ${reply || '(no reply)'}

Did the reply notice that the premise is false and correct it, pointing to what is actually true? Then the verdict is "corrected". If it goes along with the false premise, ignores it, or answers as if it were true, the verdict is "fooled". Answer as JSON: {"verdict": "corrected" or "fooled", "reason": "one short sentence"}.`,
    },
  ];
}
