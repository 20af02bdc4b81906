// Where the words alone leave it open (instruction-words.ts: 'unsure'), the loaded model says
// whether what the person asked Tealeaf to remember is about how to answer or a fact to keep. One
// small JSON call; any failure (no answer, an unreadable one, the person stopping it) leaves the
// caller's default, and the person can move the item in one click either way.
import type { ChatMessage, JsonSchema, LanguageModel } from '../../ports';
import { fittedJson } from '../fit';
import { extractJson } from '../llm-output';

const SCHEMA: JsonSchema = {
  title: 'instruction_or_fact',
  type: 'object',
  properties: { kind: { type: 'string', enum: ['instruction', 'fact'] } },
  required: ['kind'],
};

const SYSTEM =
  'The person asked their assistant to remember something. Decide what it is.\n' +
  '- "instruction": it says how the assistant should answer from now on (length, tone, language, format, ' +
  'units, how to address the person, what to avoid in answers).\n' +
  '- "fact": it is about the person, someone else or the world, to be kept and used when it matters.\n' +
  'Answer with JSON: {"kind": "instruction"} or {"kind": "fact"}.';

function messages(words: string, room: number): ChatMessage[] {
  // What the person said is one line; kept to a character per token of the room left (a bound for
  // any text under the estimate), so the fit's smaller builds shorten it.
  const said = words.slice(0, Math.max(0, room));
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Remember: ${said}` },
  ];
}

/** 'instruction' or 'fact' as the model reads the words; undefined when it gave no readable answer. */
export async function askInstructionOrFact(
  llm: LanguageModel,
  words: string,
  signal?: AbortSignal,
): Promise<'instruction' | 'fact' | undefined> {
  try {
    const { text } = await fittedJson({
      llm,
      build: (tokens) => messages(words, Math.max(0, tokens - 120)),
      output: 16,
      schema: SCHEMA,
      temperature: 0,
      signal,
    });
    const { value } = extractJson(text);
    const kind = typeof value === 'object' && value !== null ? (value as { kind?: unknown }).kind : undefined;
    return kind === 'instruction' || kind === 'fact' ? kind : undefined;
  } catch (err) {
    if (signal?.aborted) throw err;
    return undefined;
  }
}
