// Token ids of a templated prompt, for the 'lcp' cache rule (kv-cache.ts): the pieces countPrompt
// counts, encoded the same way (special tokens one id each; runs of over 200 letters, symbols or
// blanks in 200-character pieces, as countText does), so ids.length is the prompt's count.
import type { ChatMessage, JsonSchema } from '../../../src/ports';
import { templatePieces, withSchemaInstruction, type EngineProfile } from './profiles';
import type { Tok } from './tokenizer';

const LONG_RUN = 200;
const LONG_WORDS = /\p{L}{201,}|[^\s\p{L}\p{N}]{201,}|\s{201,}/gu;
/** Texts encoded before (the chat so far is in every prompt again), per tokenizer. */
const encoded = new WeakMap<Tok, Map<string, readonly number[]>>();
const ENCODED_MAX = 2000;

function textIds(tok: Tok, text: string): readonly number[] {
  if (text.length <= LONG_RUN) return tok.encode(text);
  let known = encoded.get(tok);
  if (!known) encoded.set(tok, (known = new Map()));
  const hit = known.get(text);
  if (hit) return hit;
  const ids: number[] = [];
  let from = 0;
  for (const m of text.matchAll(LONG_WORDS)) {
    ids.push(...tok.encode(text.slice(from, m.index)));
    for (let i = 0; i < m[0].length; i += LONG_RUN) ids.push(...tok.encode(m[0].slice(i, i + LONG_RUN)));
    from = m.index + m[0].length;
  }
  ids.push(...tok.encode(text.slice(from)));
  if (known.size >= ENCODED_MAX) known.delete(known.keys().next().value!);
  known.set(text, ids);
  return ids;
}

/** A special token's id; one the vocabulary lacks gets a negative id of its own (it is still one token). */
function specialId(tok: Tok, token: string): number {
  const id = tok.specialId(token);
  if (id !== undefined) return id;
  let h = 0;
  for (const c of token) h = (h * 31 + c.codePointAt(0)!) | 0;
  return -1 - (Math.abs(h) % 1_000_000);
}

/** The messages as the engine reads them: with a schema-in-prompt engine's instruction for a JSON call. */
export function sentMessages(profile: EngineProfile, messages: readonly ChatMessage[], schema?: JsonSchema): readonly ChatMessage[] {
  return schema && profile.schemaInPrompt ? withSchemaInstruction(messages, schema) : messages;
}

/** Ids of the prompt as the profile's chat template lays out `messages` (already as sent). */
export function promptIds(tok: Tok, profile: EngineProfile, messages: readonly ChatMessage[]): number[] {
  const ids: number[] = [];
  for (const piece of templatePieces(profile, messages))
    if (typeof piece === 'string') ids.push(...textIds(tok, piece));
    else ids.push(specialId(tok, piece.special));
  return ids;
}

/** Ids of an answer as written (what follows the prompt in the cache). */
export function outputIds(tok: Tok, text: string): readonly number[] {
  return textIds(tok, text);
}
