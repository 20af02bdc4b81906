// Types of the fake OpenAI-compatible server (fake-openai-server.mjs) for TypeScript tests.
export interface FakeServerConfig {
  allowOrigin: string | null;
  status: number;
  stall: boolean;
  schema: boolean;
  schemaIgnored: boolean;
  malformed: boolean;
  delayMs: number;
  eventDelayMs: number;
  endless: false | 'json' | 'chat' | 'trickle';
  noStream: boolean;
  modelsStall: boolean;
  refuseMaxTokens: boolean;
  models: string[];
  replies: Array<{ when: string; say: string }>;
  kind: null | 'llama.cpp' | 'lmstudio' | 'ollama' | 'vllm';
  contextTokens: number;
  loaded: boolean;
  numCtx: number | null;
}
export interface FakeOpenAiServer {
  url: string;
  /** Chat completions; `cut`: the fake Ollama cut the prompt's start. */
  requests: Array<{ path: string; body?: unknown; cut?: boolean; read?: { prompt: number; cached: number; anew: number } }>;
  /** Model lists and the questions about the model's window (/props, /tokenize, /api/show...). */
  probes: Array<{ path: string; body?: unknown }>;
  set(patch: Partial<FakeServerConfig>): FakeServerConfig;
  close(): Promise<void>;
}
/** The fake's tokenizer, its ChatML rendering, and a chat prompt's tokens as the fake counts them. */
export function textTokens(text: string): number;
export function renderChat(messages: Array<{ role: string; content: string }>): string;
export function promptTokens(messages: Array<{ role: string; content: string }>): number;
export function startFakeOpenAiServer(initial?: Partial<FakeServerConfig> & { port?: number }): Promise<FakeOpenAiServer>;
