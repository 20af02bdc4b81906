// Types of relay.mjs for the TypeScript tests and benchmarks.
export declare const MAX_MESSAGE: number;
export declare const PAIR_TTL_MS: number;
export declare function startRelay(options?: {
  host?: string;
  port?: number;
  dir?: string;
  /** The clock, for tests of the pairing mailboxes' expiry. */
  now?: () => number;
  /** How long a long poll waits before it answers with nothing new (25 s). */
  waitMs?: number;
}): Promise<{ url: string; close: () => Promise<void> }>;
