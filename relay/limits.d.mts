// Types of limits.mjs for the TypeScript tests.
export declare class Refusal extends Error {
  status: number;
  reason: string;
  extra: { limit?: number; retryAfter?: number };
}
export declare const refuse: Record<string, (arg?: number) => Refusal>;
export declare const DEFAULT_LIMITS: Record<string, number>;
