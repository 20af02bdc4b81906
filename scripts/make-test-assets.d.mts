// Types of the test-asset generator, for the unit tests' global setup (tests/support/global-setup.ts).
export const MODEL_ID: string;
export const DIMENSION: number;
export const DEFAULT_OUT: string;
export function makeTestAssets(outDir?: string): {
  dir: string;
  modelId: string;
  dimension: number;
  vocabSize: number;
  written: string[];
  lm: { modelId: string; brokenId: string; bytes: number; written: string[] };
};
