// Types of store-pg.mjs for the TypeScript tests.
import type { Refusal } from './limits.mjs';
export declare function storeUnavailable(): Refusal;
