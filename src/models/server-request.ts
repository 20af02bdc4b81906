// The bodies of chat requests to a model server (its OpenAI-compatible route, or Ollama's own), and
// the text of each chunk of its answer.
import { answerFinish, type AnswerFinish, type ChatMessage } from '../ports';
import { LocalServerError } from './server-address';

export interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null }; message?: { content?: string | null }; finish_reason?: string | null }>;
  message?: { content?: string | null };
  error?: { message?: string } | string;
  /** Ollama's own route, on its last line: "stop", "length", ... */
  done_reason?: string | null;
}

/** Why the server says the answer ended, where this chunk says it ("length": cut at the token limit). */
export function chunkFinish(chunk: ChatChunk): AnswerFinish | undefined {
  return answerFinish(chunk.choices?.[0]?.finish_reason ?? chunk.done_reason);
}

/** The text of an answer chunk (a stream event, or a whole completion), or the server's error. */
export function chunkText(chunk: ChatChunk): string {
  if (chunk.error) {
    const detail = typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? '');
    throw new LocalServerError('http', `The server stopped with an error: ${detail}`, detail);
  }
  const choice = chunk.choices?.[0];
  // Ollama's own route: { message: { content }, done }.
  return choice?.delta?.content ?? choice?.message?.content ?? chunk.message?.content ?? '';
}

/** A request to the OpenAI-compatible chat route. */
export function openAiChatBody(
  model: string,
  messages: ChatMessage[],
  maxTokens: number | undefined,
  temperature: number | undefined,
  responseFormat: Record<string, unknown> | undefined,
): Record<string, unknown> {
  // The usage at the end says what the server read anew; llama.cpp keeps the prompt's cache for the
  // next request, which extends this one (its default, asked for where a build turned it off).
  const body: Record<string, unknown> = { model, messages, stream: true, stream_options: { include_usage: true }, cache_prompt: true };
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (temperature !== undefined) body.temperature = temperature;
  if (responseFormat) body.response_format = responseFormat;
  return body;
}

/** The same request to Ollama's own chat route, with the context (num_ctx) it must load the model with. */
export function ollamaChatBody(
  model: string,
  messages: ChatMessage[],
  contextTokens: number,
  maxTokens: number | undefined,
  temperature: number | undefined,
  responseFormat: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const options: Record<string, number> = { num_ctx: contextTokens };
  if (maxTokens !== undefined) options.num_predict = maxTokens;
  if (temperature !== undefined) options.temperature = temperature;
  // keep_alive: the model (and the chat's cache) stays loaded between messages of a chat.
  const body: Record<string, unknown> = { model, messages, stream: true, options, keep_alive: '30m' };
  // A JSON schema is Ollama's `format` itself; JSON without one is "json".
  const schema = (responseFormat?.json_schema as { schema?: unknown } | undefined)?.schema;
  if (schema) body.format = schema;
  else if (responseFormat?.type === 'json_object') body.format = 'json';
  return body;
}
