#!/usr/bin/env node
// Writes a tiny, real sentence-embedding model that transformers.js loads with
// pipeline('feature-extraction'): a hand-encoded ONNX graph (static embedding: token id ->
// vector table, masked) plus a WordPiece tokenizer. Lets tests run the real embedding code path
// offline, with no downloaded weights. Deterministic, idempotent (unchanged files are not
// rewritten), and fast. No dependencies beyond Node's standard library.
//
//   node scripts/make-test-assets.mjs [--out <dir>]    (default .tmp/test-models)
//
// Output: <out>/tealeaf-test/static-embedder/{config.json, tokenizer.json,
//         tokenizer_config.json, onnx/model.onnx, onnx/model_quantized.onnx}
//         <out>/tealeaf-test/tiny-causal-lm/ and broken-causal-lm/: a tiny chat model with random
//         weights for the CPU engine, and the same with a model file that is not ONNX; and
//         tiny-causal-lm-kv/, one with attention and a key-value cache (lib/tiny-causal-lm.mjs).

import { mulberry32 } from './lib/rng.mjs';
import { FLOAT, INT64, fInt, fMsg, fStr, intAttr, node, tensor, valueInfo, writeIfChanged } from './lib/onnx-proto.mjs';
import { makeTinyCausalLm } from './lib/tiny-causal-lm.mjs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODEL_ID = 'tealeaf-test/static-embedder';
export const DIMENSION = 32;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT = join(ROOT, '.tmp', 'test-models');

// ---------------------------------------------------------------------------------------------
// Vocabulary: special tokens, common English words, and single characters (as word starts and
// as "##" continuations) so that every ASCII word tokenizes without [UNK].

const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

// Function words get short vectors: texts should be similar because they share content words.
const STOPWORDS = `a an the and or but if of to in on at by for with from as is are was were be been being am
do does did have has had i me my mine you your yours he him his she her hers it its we us our they them their
this that these those there here what which who whom whose when where why how not no yes so than then too very
can could will would shall should may might must just also about into over under again more most some any each
all both few other such only own same s t don now up down out off`.split(/\s+/);

const CONTENT = `time person year way day thing man woman child children world life hand part place case week
company system program question work government number night point home water room mother father area money story
fact month lot right study book eye job word business issue side kind head house service friend family power hour
game line end member law car city community name president team minute idea kid body information back parent face
others level office door health art war history party result change morning reason research girl guy moment air
teacher force education dog cat bird fish horse tea coffee milk bread cake apple garden flower tree park beach sea
mountain river lake rain snow sun weather summer winter spring autumn holiday trip travel train plane ticket hotel
paris london tokyo italy france japan music song guitar piano concert movie film show picture photo camera painting
paint draw write read learn teach school class exam test homework university college job interview boss meeting
project deadline email phone call message letter birthday party gift present dinner lunch breakfast food cook cooking
recipe kitchen restaurant pizza pasta rice soup salad chicken meat vegetable fruit sweet chocolate wine beer drink
run running walk walking swim swimming bike cycling yoga gym exercise sport football soccer tennis basketball marathon
race win lose play player coach doctor nurse hospital sick ill pain medicine sleep tired happy sad angry afraid
worried excited nervous calm love hate like enjoy want need feel think know believe remember forget hope wish
dream plan decide start stop finish begin try help ask answer tell say talk speak listen hear see look watch
buy sell pay cost price cheap expensive new old young big small long short good bad great best better worse
first last next early late today tomorrow yesterday week weekend monday friday saturday sunday morning evening
sister brother wife husband son daughter baby grandmother grandfather aunt uncle cousin neighbor colleague partner
moved move live living apartment city country town village street road bus taxi drive driving car bike
adopted puppy kitten pet vet walked fed
computer laptop code software bug app website internet game games video language english spanish french german
book novel poem poetry library writing writer author artist sing singer dance dancing band drum violin
lost found broke broken fixed bought sold visited went came gave took made got felt thought said told
married wedding divorce pregnant born died funeral anniversary promotion fired hired salary raise retire
stock market markets fell rose price prices economy bank loan rent mortgage tax budget save saving`.split(/\s+/);

const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
const PUNCT = `. , ! ? ; : ' " ( ) - _ / & % $ # @ * + = [ ] { } < > ~ \``.split(' ');

function buildVocab() {
  const tokens = [];
  const seen = new Set();
  const add = (t) => {
    if (t && !seen.has(t)) {
      seen.add(t);
      tokens.push(t);
    }
  };
  SPECIALS.forEach(add);
  PUNCT.forEach(add);
  STOPWORDS.forEach(add);
  CONTENT.forEach(add);
  LETTERS.forEach(add);
  LETTERS.forEach((c) => add(`##${c}`));
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Deterministic vectors: each token's vector is a Gaussian draw seeded by a hash of the token.

function fnv1a(str) {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function tokenVector(token, dim) {
  const rand = mulberry32(fnv1a(token));
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i += 2) {
    // Box-Muller: two normal draws per pair of uniforms.
    const u = Math.max(rand(), 1e-12);
    const w = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    v[i] = r * Math.cos(2 * Math.PI * w);
    if (i + 1 < dim) v[i + 1] = r * Math.sin(2 * Math.PI * w);
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dim; i++) v[i] /= norm;
  return v;
}

function embeddingTable(vocab, dim) {
  const table = new Float32Array(vocab.length * dim);
  const stop = new Set(STOPWORDS);
  vocab.forEach((tok, id) => {
    // [PAD]/[CLS]/[SEP]/[MASK] contribute nothing to the mean; [UNK] keeps a small vector so an
    // all-unknown text still has a direction (normalising a zero vector would give NaN).
    let scale = 1;
    if (tok === '[UNK]') scale = 0.1;
    else if (SPECIALS.includes(tok)) scale = 0;
    else if (stop.has(tok) || PUNCT.includes(tok)) scale = 0.15;
    else if (tok.length === 1 || tok.startsWith('##')) scale = 0.35; // spelled-out unknown words
    if (scale === 0) return;
    const v = tokenVector(tok, dim);
    for (let i = 0; i < dim; i++) table[id * dim + i] = v[i] * scale;
  });
  return table;
}

function buildOnnx(table, vocabSize, dimSize) {
  const tableRaw = Buffer.from(table.buffer, table.byteOffset, table.byteLength);
  const axesRaw = Buffer.alloc(8);
  axesRaw.writeBigInt64LE(-1n);

  // last_hidden_state = Gather(table, input_ids) * Unsqueeze(Cast(attention_mask, float), -1)
  const graph = [
    fMsg(1, node('Gather', ['embeddings', 'input_ids'], ['token_vectors'], 'gather', [intAttr('axis', 0)])),
    fMsg(1, node('Cast', ['attention_mask'], ['mask_float'], 'cast', [intAttr('to', FLOAT)])),
    fMsg(1, node('Unsqueeze', ['mask_float', 'unsqueeze_axes'], ['mask_3d'], 'unsqueeze')),
    fMsg(1, node('Mul', ['token_vectors', 'mask_3d'], ['last_hidden_state'], 'mask')),
    fStr(2, 'static_embedder'),
    fMsg(5, tensor('embeddings', FLOAT, [vocabSize, dimSize], tableRaw)),
    fMsg(5, tensor('unsqueeze_axes', INT64, [1], axesRaw)),
    fMsg(11, valueInfo('input_ids', INT64, ['batch_size', 'sequence_length'])),
    fMsg(11, valueInfo('attention_mask', INT64, ['batch_size', 'sequence_length'])),
    // BERT-style tokenizers also send token_type_ids; accepted and unused, as in many exports.
    fMsg(11, valueInfo('token_type_ids', INT64, ['batch_size', 'sequence_length'])),
    fMsg(12, valueInfo('last_hidden_state', FLOAT, ['batch_size', 'sequence_length', dimSize])),
  ];
  // ModelProto { ir_version=1, producer_name=2, producer_version=3, graph=7, opset_import=8 }
  return Buffer.concat([
    fInt(1, 8),
    fStr(2, 'tealeaf-make-test-assets'),
    fStr(3, '1'),
    fMsg(7, graph),
    fMsg(8, [fStr(1, ''), fInt(2, 13)]),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Tokenizer and configs in the Hugging Face formats.

function tokenizerJson(vocab) {
  const ids = Object.fromEntries(vocab.map((t, i) => [t, i]));
  const special = (t) => ({ id: ids[t], content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: ids },
  };
}

const tokenizerConfig = {
  tokenizer_class: 'BertTokenizer',
  do_lower_case: true,
  model_max_length: 512,
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
  mask_token: '[MASK]',
  clean_up_tokenization_spaces: true,
};

const modelConfig = (vocabSize, dimSize) => ({
  model_type: 'bert',
  architectures: ['BertModel'],
  hidden_size: dimSize,
  vocab_size: vocabSize,
  max_position_embeddings: 512,
  pad_token_id: 0,
  type_vocab_size: 2,
  _comment: 'Generated by scripts/make-test-assets.mjs: a static word-hash embedding for offline tests.',
});

// ---------------------------------------------------------------------------------------------

/** Writes the assets under `outDir` and returns the model folder and what changed. */
export function makeTestAssets(outDir = DEFAULT_OUT) {
  const vocab = buildVocab();
  const table = embeddingTable(vocab, DIMENSION);
  const onnx = buildOnnx(table, vocab.length, DIMENSION);
  const dir = join(outDir, ...MODEL_ID.split('/'));
  const files = {
    'config.json': JSON.stringify(modelConfig(vocab.length, DIMENSION), null, 2) + '\n',
    'tokenizer.json': JSON.stringify(tokenizerJson(vocab)) + '\n',
    'tokenizer_config.json': JSON.stringify(tokenizerConfig, null, 2) + '\n',
    // dtype "fp32" loads model.onnx, "q8" loads model_quantized.onnx: the same graph serves both.
    'onnx/model.onnx': onnx,
    'onnx/model_quantized.onnx': onnx,
  };
  const written = [];
  for (const [name, data] of Object.entries(files)) {
    if (writeIfChanged(join(dir, name), data)) written.push(name);
  }
  const lm = makeTinyCausalLm(outDir);
  return { dir, modelId: MODEL_ID, dimension: DIMENSION, vocabSize: vocab.length, written, lm };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]) : DEFAULT_OUT;
  const r = makeTestAssets(out);
  console.log(
    `test embedding model ${r.modelId} (${r.vocabSize} tokens x ${r.dimension}) in ${r.dir}; ${r.written.length ? `wrote ${r.written.join(', ')}` : 'up to date'}`,
  );
  console.log(
    `test language models ${r.lm.modelId} (${Math.round(r.lm.bytes / 1024)} KB), ${r.lm.brokenId} and ${r.lm.kvId}; ${r.lm.written.length ? `wrote ${r.lm.written.length} files` : 'up to date'}`,
  );
}
