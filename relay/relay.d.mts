// Types of relay.mjs for the TypeScript tests and benchmarks.
export declare const MAX_MESSAGE: number;
export declare const PAIR_TTL_MS: number;
export interface RelayLimits {
  maxMessage: number;
  roomBytes: number;
  relayBytes: number;
  roomPostsPerMinute: number;
  addressPostsPerMinute: number;
  addressRoomsPerHour: number;
  roomPolls: number;
  addressPolls: number;
  roomAddressPolls: number;
  idleMs: number;
  pairMessages: number;
  pairTtlMs: number;
  clockSkewMs: number;
}
export declare function startRelay(options?: {
  host?: string;
  port?: number;
  /** The embedded store's folder (a file per room); left out when `postgres` is given. */
  dir?: string;
  /** A PostgreSQL connection string: the store shared by any number of relay processes. */
  postgres?: string;
  poolSize?: number;
  /** The clock, for tests of the pairing mailboxes' expiry. */
  now?: () => number;
  /** How long a long poll waits before it answers with nothing new (25 s). */
  waitMs?: number;
  limits?: Partial<RelayLimits>;
  trustProxy?: boolean;
  log?: (level: string, msg: string, fields: Record<string, unknown>) => void;
}): Promise<{ url: string; sweep: () => Promise<void>; close: () => Promise<void> }>;
