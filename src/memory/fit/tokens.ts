// A safe estimate of tokens where the runtime has no tokenizer to ask (a model server whose model
// family is unknown, web-llm before its tokenizer is reachable). It must not count fewer tokens
// than any tokenizer Tealeaf meets, on any text a person pastes, so it counts by what makes tokens
// in every vocabulary, not by English words:
// - no tokenizer makes more tokens than UTF-8 bytes (byte-level BPE, or SentencePiece with byte
//   fallback), so a non-ASCII character counts its bytes, a digit one, a line break or tab one;
// - letters cost by how English-like they are: a word whose letter pairs are common in English is
//   one token (two when long), and each rare pair (a random id, base64) costs one more, as a
//   tokenizer ends a token there; a change of case (camelCase, base64) starts a new word;
// - a symbol is a token of its own unless it pairs with the next in every vocabulary ('=>', '},').
// Checked against the Qwen2.5/3, Llama 3, Gemma 3 and a 32k SentencePiece (Mistral's, standing in
// for Llama 2 / Phi-3.5) tokenizers on English chat and generated non-English texts
// (docs/METHOD.md 1.10, tests/unit/memory/fit-bound.test.ts).
import type { ChatMessage } from '../../ports';

/** Role markers and separators a chat template adds around each message (ChatML: 5; Gemma: 6). */
export const MESSAGE_OVERHEAD = 8;
/** The assistant's opening marker after the last message (and a begin-of-text token). */
export const REPLY_PRIMER = 6;

// A run of ASCII letters, a digit, one line break, tab or carriage return, a run of spaces, a run of
// ASCII symbols, or one other character (a code point: an emoji's 4 bytes stay together).
const PIECES = /[A-Za-z]+|[0-9]|[\n\r\t]| +|[!-/:-@[-`{-~]+|[^\p{ASCII}]/gu;
// Within letters: a capitalised or lower-case word, or a run of capitals (camelCase, base64).
const CASE_WORDS = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])/g;

// Letter pairs common in English words, about 40 % of the 676 pairs but most of English text's:
// a word made of them is mostly one token; a random string hits a rare pair at most letters.
const COMMON_PAIRS = new Set(
  (
    'th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ' +
    'ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un ' +
    'lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ' +
    'ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu ' +
    'rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew mu br bi pt ' +
    'ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft wn nu af hu nn eo vo rv nf ' +
    'sm fl iz ok nl my gl aw ju oa sy sl ps jo lf nv je nk kn gs dy hy ze ks bs ik dd cy rp sk oe oy ws lv dl rf eu dg ' +
    'wr ja ya yt za yp eq gt ax xt'
  ).split(' '),
);
// Symbol pairs that every tokenizer here reads as one token, also repeated ('=>', '//', '},', '::').
// Any other symbol is a token of its own: SentencePiece vocabularies merge few ('[{' is two).
const MERGED_SYMBOLS = new Set(
  (
    '!! !" !\' !) != ![ !\\ "" ") ", ": "; "> "] "` ## #[ #{ $$ $. $\\ $_ ${ %% %) %, %. %; &# && ' +
    "'\" '$ '' ') '* ', ': '; '] (! (\" ($ (& (' (( () (* (- (/ (@ ([ (\\ (_ (` ({ (| )$ " +
    ')& )) )+ ), )- ). )/ ): ); )= )[ )\\ )^ ){ )| )} ** *, *- */ *\\ +" +( ++ +- += +\\ ," ,& ' +
    ",' ,( ,, ,- ,\\ -% -- -> -\\ .\" .' .( .) ., .- .. ./ .; .< .[ .\\ ._ /# /% /' /, // /: /> " +
    '/\\ /_ /{ :" :% :- :: :\\ :` :{ ;& ;/ ;; ;\\ <\' </ << <= <? =" =$ =\' =- == => =[ =\\ =_ ={ ' +
    '>% >& >( >, >. >: >; >< >> >\\ >{ ?! ?" ?\' ?( ?, ?. ?: ?> ?? @@ [" [$ [\' [- [: [[ [] \\" ' +
    '\\\\ ]$ ]( ]) ]* ]+ ], ]. ]/ ]: ]; ]< ]= ]] ]{ ]} ^- ^\\ ^^ ^{ _* _- _; _[ _\\ __ _{ `) `, ' +
    '`. `` {" {- {\\ {{ {} |\\ |^ || }$ }& }( }) }, }- }. }/ }: }; }= }> }[ }\\ }_ }` }| }} ~~'
  ).split(' '),
);
const isDigit = (c: number) => c >= 48 && c <= 57;

/** Pairs of neighbours not in `common`. */
function rarePairs(word: string, common: ReadonlySet<string>): number {
  let rare = 0;
  for (let i = 1; i < word.length; i++) if (!common.has(word[i - 1]! + word[i]!)) rare++;
  return rare;
}

/** Symbols read left to right, a merged pair as one token. */
function symbolTokens(run: string): number {
  let n = 0;
  for (let i = 0; i < run.length; i++, n++) if (MERGED_SYMBOLS.has(run.slice(i, i + 2))) i++;
  return n;
}

function letterTokens(run: string, besideDigit: boolean): number {
  const mixedCase = /[a-z]/.test(run) && /[A-Z]/.test(run);
  // Letters against a digit ('6d1dbea2', 'keus7Nog') are an id or a blob, not words.
  if (besideDigit && run.length > 1) return mixedCase ? run.length : Math.ceil(run.length * 0.75);
  let n = 0;
  for (const m of run.matchAll(CASE_WORDS)) {
    const w = m[0];
    if (w.length > 1 && w === w.toUpperCase()) {
      // Capitals are rarer in every vocabulary: three tokens for every four letters.
      n += Math.ceil(w.length * 0.75);
    } else {
      // A common word is one token with its space, a long one two or more; each rare pair one more.
      const rare = rarePairs(w.toLowerCase(), COMMON_PAIRS);
      const cost = 1 + Math.floor(w.length / 9) + rare;
      // Rare pairs in a longer word: likely no word at all (an id, a key), which tokenizers
      // read two letters at a time or less.
      n += rare > 1 && w.length >= 4 ? Math.max(cost, Math.ceil(w.length * 0.6)) : cost;
    }
  }
  // Case changing every few letters (base64, not camelCase's 'maxLength') splits it in short pieces.
  const changes = run.match(/[a-z][A-Z]/g)?.length ?? 0;
  return changes >= 2 && changes * 4 >= run.length ? Math.max(n, Math.ceil(run.length * 0.75)) : n;
}

export function estimateTokens(text: string): number {
  if (!text) return 0;
  // A SentencePiece tokenizer may open the text with a word-start piece of its own.
  let n = 1;
  for (const m of text.matchAll(PIECES)) {
    const w = m[0];
    const c = w.charCodeAt(0);
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) {
      n += letterTokens(w, isDigit(text.charCodeAt(m.index - 1)) || isDigit(text.charCodeAt(m.index + w.length)));
    } else if (c >= 48 && c <= 57) {
      // Most tokenizers read digits one by one.
      n += 1;
    } else if (c === 10 || c === 13 || c === 9) {
      // A line break or tab is a byte token of its own in a SentencePiece vocabulary.
      n += 1;
    } else if (c === 32) {
      // A space joins the word after it; before a digit, a symbol or another script it is a
      // token of its own, and a run of spaces costs a token per four besides.
      const next = text.charCodeAt(m.index + w.length);
      const letter = (next >= 65 && next <= 90) || (next >= 97 && next <= 122);
      n += (letter ? 0 : 1) + (w.length === 1 ? 0 : Math.ceil(w.length / 4));
    } else if (c > 127) {
      // At most a token per UTF-8 byte: an emoji 4, CJK 3, an accented letter 2.
      const code = w.codePointAt(0)!;
      n += code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    } else {
      // A symbol is a token, a pair that merges one ('":"' is two: '":' and '"').
      n += symbolTokens(w);
    }
  }
  return Math.ceil(n * 1.08);
}

/** The messages as a chat template lays them out, plus the reply's opening marker. */
export function estimateMessages(messages: readonly ChatMessage[]): number {
  let n = REPLY_PRIMER;
  for (const m of messages) n += MESSAGE_OVERHEAD + estimateTokens(m.content);
  return n;
}
