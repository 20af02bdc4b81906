// Engines without constrained decoding (the CPU engine, a model server that refuses
// response_format) ask for JSON in words: the schema goes into the prompt, appended to the last
// user message. It costs tokens the caller must count: fitted JSON calls count it where the
// model's window says so (ModelWindow.schemaInPrompt).
import type { ChatMessage, JsonSchema } from '../../ports';

export function schemaInstruction(schema: JsonSchema): string {
  return `Answer with one JSON value only, no prose and no code fences, matching this JSON schema:\n${JSON.stringify(schema)}`;
}

/** The messages as such an engine sends them. */
export function withSchemaInstruction(messages: readonly ChatMessage[], schema: JsonSchema): ChatMessage[] {
  const instruction = schemaInstruction(schema);
  const last = messages.map((m) => m.role).lastIndexOf('user');
  if (last < 0) return [...messages, { role: 'user', content: instruction }];
  return messages.map((m, i) => (i === last ? { ...m, content: `${m.content}\n\n${instruction}` } : m));
}
