// Types of relay.mjs for the TypeScript tests and benchmarks.
export declare const MAX_MESSAGE: number;
export declare function startRelay(options?: {
  host?: string;
  port?: number;
  dir?: string;
}): Promise<{ url: string; close: () => Promise<void> }>;
