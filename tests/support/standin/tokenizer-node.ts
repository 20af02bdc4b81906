// The tokenizer files from node_modules, for unit tests and benchmarks in Node.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { TOKENIZER_PACKAGES, type TokenizerSource } from './tokenizer';

const require = createRequire(import.meta.url);

async function readJson(path: string): Promise<object> {
  return JSON.parse(await readFile(require.resolve(path), 'utf8')) as object;
}

export const nodeTokenizers: TokenizerSource = async (family) => {
  const pkg = TOKENIZER_PACKAGES[family];
  const [tokenizer, config] = await Promise.all([
    readJson(`${pkg}/models/tokenizer.json`),
    readJson(`${pkg}/models/tokenizer_config.json`),
  ]);
  return { tokenizer, config };
};
