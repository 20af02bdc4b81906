// Types of the fake OpenAI-compatible server (fake-openai-server.mjs) for TypeScript tests.
export interface FakeServerConfig {
  allowOrigin: string | null;
  status: number;
  stall: boolean;
  schema: boolean;
  malformed: boolean;
  delayMs: number;
  eventDelayMs: number;
  endless: false | 'json' | 'chat' | 'trickle';
  noStream: boolean;
  modelsStall: boolean;
  refuseMaxTokens: boolean;
  models: string[];
  replies: Array<{ when: string; say: string }>;
}
export interface FakeOpenAiServer {
  url: string;
  requests: Array<{ path: string; body?: unknown }>;
  set(patch: Partial<FakeServerConfig>): FakeServerConfig;
  close(): Promise<void>;
}
export function startFakeOpenAiServer(initial?: Partial<FakeServerConfig> & { port?: number }): Promise<FakeOpenAiServer>;
