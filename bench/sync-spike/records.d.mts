// Types of records.mjs for the TypeScript spike benchmark.
import type { Memory } from '../../src/memory/types';
export declare function makeMemories(n: number, seed?: number): Memory[];
export declare function gzippedBackupBytes(records: Memory[]): number;
export declare function mb(bytes: number): number;
