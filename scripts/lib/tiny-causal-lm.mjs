// A tiny causal language model with random weights that transformers.js loads as a Llama-type
// decoder (AutoModelForCausalLM / pipeline('text-generation')), for offline tests and the CPU
// benchmark. Its output is gibberish: tests check mechanics (streaming, stop, errors), never text.
//
// Graph: logits = MatMul(x_L, W_out) + bias, x_0 = Gather(E, input_ids), x_i = Tanh(MatMul(x_{i-1}, W))
// with one shared W, so the file stays small while each token costs a fixed, known amount of work
// (DEPTH x HIDDEN^2 multiply-adds): slow enough that a test can press Stop mid-reply.
// No past_key_values: transformers.js then feeds only the newest token on each step (it creates no
// cache inputs the session does not declare), so this is a bigram model with a deep hidden map.
//
// Tokenizer: byte-level BPE with the 256 byte tokens and no merges (one token per byte) and ChatML
// special tokens, like SmolLM2's and Qwen2.5's; tokenizer_config.json carries a ChatML template.
import { join } from 'node:path';
import { mulberry32 } from './rng.mjs';
import { FLOAT, INT64, fInt, fMsg, fStr, intAttr, intsAttr, node, tensor, valueInfo, writeIfChanged } from './onnx-proto.mjs';

export const CAUSAL_LM_ID = 'tealeaf-test/tiny-causal-lm';
/** The same configuration and tokenizer with a model file that is not ONNX (error handling). */
export const BROKEN_LM_ID = 'tealeaf-test/broken-causal-lm';
/**
 * The same tokenizer with one attention layer and a key-value cache (past_key_values.0.key/value
 * in, present.0.key/value out), so each token's answer depends on the whole context and its place
 * in it: for tests of reusing the cache from one reply to the next. It may end a reply by itself
 * (<|im_end|> follows '.').
 */
export const KV_LM_ID = 'tealeaf-test/tiny-causal-lm-kv';

export const HIDDEN = 256;
export const DEPTH = 48;
const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
export const VOCAB_SIZE = 256 + SPECIALS.length;
const PAD_ID = 256;
const BOS_ID = 257;
const EOS_ID = 258;

/** GPT-2's byte -> printable character map (what ByteLevel pre-tokenizers produce). */
function bytesToUnicode() {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const map = new Array(256);
  bs.forEach((b, i) => (map[b] = String.fromCharCode(cs[i])));
  return map;
}

function gaussian(rand) {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

function randomMatrix(rand, rows, cols, scale) {
  const m = new Float32Array(rows * cols);
  for (let i = 0; i < m.length; i++) m[i] = gaussian(rand) * scale;
  return m;
}

const raw = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * Bias on the logits: printable ASCII (letters and spaces favoured) only, and never a special
 * token, so sampled replies are valid UTF-8 and run until max_new_tokens or Stop.
 */
function outputBias() {
  const bias = new Float32Array(VOCAB_SIZE).fill(-30);
  for (let b = 32; b < 127; b++) bias[b] = 0;
  for (let b = 97; b <= 122; b++) bias[b] = 2;
  bias[32] = 3;
  return bias;
}

function buildGraph() {
  const rand = mulberry32(0x7ea1eaf);
  const embed = randomMatrix(rand, VOCAB_SIZE, HIDDEN, 1);
  // Gain ~1.5/sqrt(H) keeps tanh in its lively range through the chain.
  const hidden = randomMatrix(rand, HIDDEN, HIDDEN, 1.5 / Math.sqrt(HIDDEN));
  const out = randomMatrix(rand, HIDDEN, VOCAB_SIZE, 2 / Math.sqrt(HIDDEN));
  const nodes = [fMsg(1, node('Gather', ['embed_tokens', 'input_ids'], ['x0'], 'embed', [intAttr('axis', 0)]))];
  for (let i = 1; i <= DEPTH; i++) {
    nodes.push(fMsg(1, node('MatMul', [`x${i - 1}`, 'hidden_weight'], [`h${i}`], `matmul_${i}`)));
    nodes.push(fMsg(1, node('Tanh', [`h${i}`], [`x${i}`], `tanh_${i}`)));
  }
  nodes.push(fMsg(1, node('MatMul', [`x${DEPTH}`, 'lm_head'], ['scores'], 'lm_head')));
  nodes.push(fMsg(1, node('Add', ['scores', 'lm_bias'], ['logits'], 'bias')));
  const graph = [
    ...nodes,
    fStr(2, 'tiny_causal_lm'),
    fMsg(5, tensor('embed_tokens', FLOAT, [VOCAB_SIZE, HIDDEN], raw(embed))),
    fMsg(5, tensor('hidden_weight', FLOAT, [HIDDEN, HIDDEN], raw(hidden))),
    fMsg(5, tensor('lm_head', FLOAT, [HIDDEN, VOCAB_SIZE], raw(out))),
    fMsg(5, tensor('lm_bias', FLOAT, [VOCAB_SIZE], raw(outputBias()))),
    fMsg(11, valueInfo('input_ids', INT64, ['batch_size', 'sequence_length'])),
    // Accepted (transformers.js always sends it) and unused: the model looks at one token.
    fMsg(11, valueInfo('attention_mask', INT64, ['batch_size', 'total_sequence_length'])),
    fMsg(12, valueInfo('logits', FLOAT, ['batch_size', 'sequence_length', VOCAB_SIZE])),
  ];
  return Buffer.concat([
    fInt(1, 8),
    fStr(2, 'tealeaf-make-test-assets'),
    fStr(3, '1'),
    fMsg(7, graph),
    fMsg(8, [fStr(1, ''), fInt(2, 13)]),
  ]);
}

export const KV_HIDDEN = 64;
const KV_POSITIONS = 2048;

/** Bias for the cached model: as outputBias, with '.' a little likelier so replies end. */
function kvOutputBias() {
  const bias = outputBias();
  bias[46] = 1;
  return bias;
}

function buildKvGraph() {
  const D = KV_HIDDEN;
  const rand = mulberry32(0x6b76c4c);
  const f32 = (name, dims, data) => fMsg(5, tensor(name, FLOAT, dims, raw(data)));
  const i64 = (name, dims, values) => fMsg(5, tensor(name, INT64, dims, raw(BigInt64Array.from(values.map(BigInt)))));
  const n = (op, inputs, outputs, attrs = []) => fMsg(1, node(op, inputs, outputs, outputs[0], attrs));
  // <|im_end|> gets +60 after '.', which outweighs its -30 bias.
  const eosAfter = new Float32Array(VOCAB_SIZE);
  eosAfter[46] = 60;
  const eosOneHot = new Float32Array(VOCAB_SIZE);
  eosOneHot[EOS_ID] = 1;
  const nodes = [
    n('Gather', ['embed_tokens', 'input_ids'], ['tok'], [intAttr('axis', 0)]),
    n('Gather', ['embed_positions', 'position_ids'], ['pos'], [intAttr('axis', 0)]),
    n('Add', ['tok', 'pos'], ['x']),
    n('MatMul', ['x', 'q_proj'], ['q']),
    n('MatMul', ['x', 'k_proj'], ['k']),
    n('MatMul', ['x', 'v_proj'], ['v']),
    n('Unsqueeze', ['q', 'axis_1'], ['q4']),
    n('Unsqueeze', ['k', 'axis_1'], ['k4']),
    n('Unsqueeze', ['v', 'axis_1'], ['v4']),
    n('Concat', ['past_key_values.0.key', 'k4'], ['present.0.key'], [intAttr('axis', 2)]),
    n('Concat', ['past_key_values.0.value', 'v4'], ['present.0.value'], [intAttr('axis', 2)]),
    n('Transpose', ['present.0.key'], ['kT'], [intsAttr('perm', [0, 1, 3, 2])]),
    n('MatMul', ['q4', 'kT'], ['scores_raw']),
    n('Mul', ['scores_raw', 'scale'], ['scores']),
    // Causal mask: key j is hidden from query i when j's position (counted over the attention
    // mask) is after i's position.
    n('CumSum', ['attention_mask', 'axis_1_scalar'], ['mask_sum']),
    n('Sub', ['mask_sum', 'one'], ['key_pos']),
    n('Unsqueeze', ['key_pos', 'axes_1_2'], ['key_pos4']),
    n('Unsqueeze', ['position_ids', 'axes_1_3'], ['query_pos4']),
    n('Greater', ['key_pos4', 'query_pos4'], ['future']),
    n('Where', ['future', 'minus_inf', 'scores'], ['masked']),
    n('Softmax', ['masked'], ['attn'], [intAttr('axis', -1)]),
    n('MatMul', ['attn', 'present.0.value'], ['o4']),
    n('Squeeze', ['o4', 'axis_1'], ['o']),
    n('MatMul', ['o', 'o_proj'], ['attn_out']),
    n('Add', ['x', 'attn_out'], ['resid']),
    n('Tanh', ['resid'], ['h']),
    n('MatMul', ['h', 'lm_head'], ['head']),
    n('Add', ['head', 'lm_bias'], ['biased']),
    n('Gather', ['eos_after', 'input_ids'], ['eos_gain'], [intAttr('axis', 0)]),
    n('Unsqueeze', ['eos_gain', 'axis_2'], ['eos_gain3']),
    n('Mul', ['eos_gain3', 'eos_one_hot'], ['eos_boost']),
    n('Add', ['biased', 'eos_boost'], ['logits']),
  ];
  const cache = (name, seq) => valueInfo(name, FLOAT, ['batch_size', 1, seq, D]);
  const graph = [
    ...nodes,
    fStr(2, 'tiny_causal_lm_kv'),
    f32('embed_tokens', [VOCAB_SIZE, D], randomMatrix(rand, VOCAB_SIZE, D, 1)),
    f32('embed_positions', [KV_POSITIONS, D], randomMatrix(rand, KV_POSITIONS, D, 1)),
    f32('q_proj', [D, D], randomMatrix(rand, D, D, 1 / Math.sqrt(D))),
    f32('k_proj', [D, D], randomMatrix(rand, D, D, 1 / Math.sqrt(D))),
    f32('v_proj', [D, D], randomMatrix(rand, D, D, 1 / Math.sqrt(D))),
    f32('o_proj', [D, D], randomMatrix(rand, D, D, 1 / Math.sqrt(D))),
    f32('lm_head', [D, VOCAB_SIZE], randomMatrix(rand, D, VOCAB_SIZE, 2 / Math.sqrt(D))),
    f32('lm_bias', [VOCAB_SIZE], kvOutputBias()),
    f32('eos_after', [VOCAB_SIZE], eosAfter),
    f32('eos_one_hot', [VOCAB_SIZE], eosOneHot),
    f32('scale', [], Float32Array.of(1 / Math.sqrt(D))),
    f32('minus_inf', [], Float32Array.of(-1e9)),
    i64('axis_1', [1], [1]),
    i64('axis_2', [1], [2]),
    i64('axes_1_2', [2], [1, 2]),
    i64('axes_1_3', [2], [1, 3]),
    i64('axis_1_scalar', [], [1]),
    i64('one', [], [1]),
    fMsg(11, valueInfo('input_ids', INT64, ['batch_size', 'sequence_length'])),
    fMsg(11, valueInfo('attention_mask', INT64, ['batch_size', 'total_sequence_length'])),
    fMsg(11, valueInfo('position_ids', INT64, ['batch_size', 'sequence_length'])),
    fMsg(11, cache('past_key_values.0.key', 'past_sequence_length')),
    fMsg(11, cache('past_key_values.0.value', 'past_sequence_length')),
    fMsg(12, valueInfo('logits', FLOAT, ['batch_size', 'sequence_length', VOCAB_SIZE])),
    fMsg(12, cache('present.0.key', 'total_sequence_length')),
    fMsg(12, cache('present.0.value', 'total_sequence_length')),
  ];
  return Buffer.concat([
    fInt(1, 8),
    fStr(2, 'tealeaf-make-test-assets'),
    fStr(3, '1'),
    fMsg(7, graph),
    fMsg(8, [fStr(1, ''), fInt(2, 13)]),
  ]);
}

// ChatML, as SmolLM2-Instruct and Qwen2.5-Instruct write it (without their default system prompt).
const CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function tokenizerJson() {
  const chars = bytesToUnicode();
  const vocab = Object.fromEntries(chars.map((c, b) => [c, b]));
  SPECIALS.forEach((t, i) => (vocab[t] = 256 + i));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content, i) => ({
      id: 256 + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
}

const tokenizerConfig = {
  tokenizer_class: 'GPT2Tokenizer',
  add_bos_token: false,
  add_prefix_space: false,
  bos_token: '<|im_start|>',
  eos_token: '<|im_end|>',
  pad_token: '<|endoftext|>',
  unk_token: '<|endoftext|>',
  model_max_length: 2048,
  clean_up_tokenization_spaces: false,
  chat_template: CHAT_TEMPLATE,
};

const modelConfig = {
  model_type: 'llama',
  architectures: ['LlamaForCausalLM'],
  vocab_size: VOCAB_SIZE,
  hidden_size: HIDDEN,
  intermediate_size: HIDDEN,
  num_hidden_layers: 1,
  num_attention_heads: 4,
  num_key_value_heads: 4,
  max_position_embeddings: 2048,
  bos_token_id: BOS_ID,
  eos_token_id: EOS_ID,
  pad_token_id: PAD_ID,
  tie_word_embeddings: false,
  _comment: `Generated by scripts/make-test-assets.mjs: ${DEPTH} tanh layers of width ${HIDDEN} on one token, random weights, gibberish output.`,
};

const generationConfig = { bos_token_id: BOS_ID, eos_token_id: EOS_ID, pad_token_id: PAD_ID };

const kvModelConfig = {
  ...modelConfig,
  hidden_size: KV_HIDDEN,
  intermediate_size: KV_HIDDEN,
  num_attention_heads: 1,
  num_key_value_heads: 1,
  head_dim: KV_HIDDEN,
  _comment: `Generated by scripts/make-test-assets.mjs: one attention layer of width ${KV_HIDDEN} with a key-value cache, random weights, gibberish output.`,
};

/** Writes the test language models under `outDir`; returns what changed. */
export function makeTinyCausalLm(outDir) {
  const onnx = buildGraph();
  const kvOnnx = buildKvGraph();
  const common = {
    'config.json': JSON.stringify(modelConfig, null, 2) + '\n',
    'generation_config.json': JSON.stringify(generationConfig, null, 2) + '\n',
    'tokenizer.json': JSON.stringify(tokenizerJson()) + '\n',
    'tokenizer_config.json': JSON.stringify(tokenizerConfig, null, 2) + '\n',
  };
  // dtype fp32 reads model.onnx, q4 model_q4.onnx, q8 model_quantized.onnx: one graph serves all.
  const weights = ['onnx/model.onnx', 'onnx/model_q4.onnx', 'onnx/model_quantized.onnx'];
  const notOnnx = Buffer.from('<!doctype html><title>Not a model</title>\n', 'utf8');
  const written = [];
  for (const [id, file, config] of [
    [CAUSAL_LM_ID, onnx, modelConfig],
    [BROKEN_LM_ID, notOnnx, modelConfig],
    [KV_LM_ID, kvOnnx, kvModelConfig],
  ]) {
    const dir = join(outDir, ...id.split('/'));
    const files = {
      ...common,
      'config.json': JSON.stringify(config, null, 2) + '\n',
      ...Object.fromEntries(weights.map((w) => [w, file])),
    };
    for (const [name, data] of Object.entries(files)) if (writeIfChanged(join(dir, name), data)) written.push(`${id}/${name}`);
  }
  return { modelId: CAUSAL_LM_ID, brokenId: BROKEN_LM_ID, kvId: KV_LM_ID, bytes: onnx.length, written };
}
