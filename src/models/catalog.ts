// The curated model lists and the choice of a default from the GPU's capabilities.
// Pure data and functions: no SDK imports, so the settings page can show the list without
// loading web-llm, and unit tests check every record against web-llm's prebuiltAppConfig.

import type { CpuDtype, EmbeddingDtype, Pooling } from './onnx-models';
import type { GpuProbe } from './webgpu';

export type { EmbeddingDtype, Pooling } from './onnx-models';

export type Quantization = 'q4f16_1' | 'q4f32_1';

export interface LlmModelInfo {
  /** web-llm model_id. */
  id: string;
  label: string;
  family: string;
  /** Billions of parameters. */
  paramsB: number;
  quantization: Quantization;
  /** Approximate download in MB (parameters x bits per weight; the real files differ a little). */
  downloadMB: number;
  /** web-llm's vram_required_MB for this model at its context window. */
  vramMB: number;
  contextWindow: number;
  /** Hugging Face repository of the weights (web-llm ModelRecord.model). */
  modelUrl: string;
  /** The compiled model library (web-llm ModelRecord.model_lib). */
  modelLibUrl: string;
  description: string;
  /** Qwen3 thinks aloud by default; we turn it off (extra_body.enable_thinking=false). */
  hybridThinking?: boolean;
}

/** Where web-llm 0.2.86's prebuilt model libraries live (its modelLibURLPrefix + modelVersion). */
export const WEBLLM_LIB_PREFIX = 'https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/main/web-llm-models/v0_2_86/base/';
export const HF_PREFIX = 'https://huggingface.co/';

// Bits per weight including group scales (group size 32): f16 scales +0.5 bit, f32 scales +1.
const BITS: Record<Quantization, number> = { q4f16_1: 4.5, q4f32_1: 5 };
function approxDownloadMB(paramsB: number, q: Quantization): number {
  return Math.round((paramsB * 1e9 * BITS[q]) / 8 / 2 ** 20 / 10) * 10;
}

interface BaseModel {
  base: string;
  label: string;
  family: string;
  paramsB: number;
  /** Library file stem; the 0.5B/1.5B Qwen2.5 models share Qwen2's libraries. */
  libStem: string;
  vram: Record<Quantization, number>;
  description: string;
  hybridThinking?: boolean;
}

// vram values copied from web-llm 0.2.86 prebuiltAppConfig (tests/unit/models/catalog.test.ts
// fails if they drift). Ordered small to large.
const BASES: BaseModel[] = [
  {
    base: 'Qwen2.5-0.5B-Instruct',
    label: 'Qwen2.5 0.5B Instruct',
    family: 'Qwen2.5',
    paramsB: 0.49,
    libStem: 'Qwen2-0.5B-Instruct',
    vram: { q4f16_1: 944.62, q4f32_1: 1060.2 },
    description: 'Tiny and fast. Fine for short chats on weak or CPU-only devices; struggles with memory summaries.',
  },
  {
    base: 'Llama-3.2-1B-Instruct',
    label: 'Llama 3.2 1B Instruct',
    family: 'Llama 3.2',
    paramsB: 1.24,
    libStem: 'Llama-3.2-1B-Instruct',
    vram: { q4f16_1: 879.04, q4f32_1: 1128.82 },
    description: "Meta's small model: quick, friendly conversation on modest hardware.",
  },
  {
    base: 'Qwen2.5-1.5B-Instruct',
    label: 'Qwen2.5 1.5B Instruct',
    family: 'Qwen2.5',
    paramsB: 1.54,
    libStem: 'Qwen2-1.5B-Instruct',
    vram: { q4f16_1: 1629.75, q4f32_1: 1888.97 },
    description: 'Good balance of speed and quality, reliable with structured (JSON) output. The usual default.',
  },
  {
    base: 'Qwen3-1.7B',
    label: 'Qwen3 1.7B',
    family: 'Qwen3',
    paramsB: 2.03,
    libStem: 'Qwen3-1.7B',
    vram: { q4f16_1: 2036.66, q4f32_1: 2635.44 },
    description: 'Newer Qwen generation; strong for its size. Thinking mode is turned off for quick replies.',
    hybridThinking: true,
  },
  {
    base: 'Qwen2.5-3B-Instruct',
    label: 'Qwen2.5 3B Instruct',
    family: 'Qwen2.5',
    paramsB: 3.09,
    libStem: 'Qwen2.5-3B-Instruct',
    vram: { q4f16_1: 2504.76, q4f32_1: 2893.64 },
    description: 'Noticeably better answers and memory summaries; needs a capable GPU.',
  },
  {
    base: 'Llama-3.2-3B-Instruct',
    label: 'Llama 3.2 3B Instruct',
    family: 'Llama 3.2',
    paramsB: 3.21,
    libStem: 'Llama-3.2-3B-Instruct',
    vram: { q4f16_1: 2263.69, q4f32_1: 2951.51 },
    description: "Meta's 3B model: natural conversation, good instruction following.",
  },
  {
    base: 'Phi-3.5-mini-instruct',
    label: 'Phi-3.5 mini Instruct',
    family: 'Phi-3.5',
    paramsB: 3.82,
    libStem: 'Phi-3.5-mini-instruct',
    vram: { q4f16_1: 3672.07, q4f32_1: 5483.12 },
    description: "Microsoft's 3.8B model: strong reasoning; the largest download here.",
  },
];

const QUANTS: Quantization[] = ['q4f16_1', 'q4f32_1'];

export const LLM_MODELS: readonly LlmModelInfo[] = BASES.flatMap((b) =>
  QUANTS.map((q): LlmModelInfo => ({
    id: `${b.base}-${q}-MLC`,
    label: `${b.label} (${q === 'q4f16_1' ? 'q4f16' : 'q4f32'})`,
    family: b.family,
    paramsB: b.paramsB,
    quantization: q,
    downloadMB: approxDownloadMB(b.paramsB, q),
    vramMB: b.vram[q],
    contextWindow: 4096,
    modelUrl: `${HF_PREFIX}mlc-ai/${b.base}-${q}-MLC`,
    modelLibUrl: `${WEBLLM_LIB_PREFIX}${b.libStem}-${q}_cs1k-webgpu.wasm`,
    description: b.description,
    ...(b.hybridThinking ? { hybridThinking: true } : {}),
  })),
);

export function llmModelById(id: string): LlmModelInfo | undefined {
  return LLM_MODELS.find((m) => m.id === id);
}

/** q4f16 models need shader-f16 (web-llm does not always say so in its records). */
export function requiredFeatures(m: LlmModelInfo): string[] {
  return m.quantization === 'q4f16_1' ? ['shader-f16'] : [];
}

/**
 * How much model memory (MB) we dare to use. WebGPU does not report VRAM, so this is a
 * heuristic: a software adapter uses system RAM and is slow, so keep it to ~1B models; otherwise
 * 60% of navigator.deviceMemory (GPUs often share system memory), or 4 GB when unknown.
 */
export function vramBudgetMB(probe: GpuProbe): number {
  if (!probe.ok) return 0;
  if (probe.gpu.isFallbackAdapter) return 1500;
  const gb = probe.gpu.deviceMemoryGB;
  return gb !== undefined ? Math.max(1024, gb * 1024 * 0.6) : 4096;
}

export interface Suitability {
  ok: boolean;
  /** Why not, for the UI (greyed-out entries). */
  reason?: string;
}

export function modelSuitability(m: LlmModelInfo, probe: GpuProbe): Suitability {
  if (!probe.ok) return { ok: false, reason: 'WebGPU is not available.' };
  if (m.quantization === 'q4f16_1' && !probe.gpu.shaderF16) {
    return { ok: false, reason: 'Needs 16-bit shader support (shader-f16), which this GPU lacks; use the q4f32 variant.' };
  }
  if (m.quantization === 'q4f32_1' && probe.gpu.shaderF16) {
    // Runs, but the q4f16 twin is smaller and faster on this GPU.
    return { ok: false, reason: 'Your GPU supports the smaller, faster q4f16 variant of this model.' };
  }
  const budget = vramBudgetMB(probe);
  if (m.vramMB > budget) {
    return { ok: false, reason: `Needs about ${Math.round(m.vramMB)} MB of GPU memory; this device likely has less to spare.` };
  }
  return { ok: true };
}

/** The models worth offering on this GPU, smallest first. */
export function modelsFor(probe: GpuProbe): LlmModelInfo[] {
  return LLM_MODELS.filter((m) => modelSuitability(m, probe).ok).sort((a, b) => a.vramMB - b.vramMB);
}

// Preference orders (first that fits wins).
const PREFER_REAL_GPU = ['Qwen2.5-1.5B-Instruct', 'Llama-3.2-1B-Instruct', 'Qwen2.5-0.5B-Instruct'];
const PREFER_FALLBACK = ['Qwen2.5-0.5B-Instruct', 'Llama-3.2-1B-Instruct'];

/**
 * A sensible default: on a software (CPU) adapter the smallest q4f32 model; on a real GPU the
 * 1.5B model (q4f16 with shader-f16, else q4f32). Undefined when nothing can run.
 */
export function recommendModel(probe: GpuProbe): LlmModelInfo | undefined {
  if (!probe.ok) return undefined;
  const fitting = modelsFor(probe);
  const order = probe.gpu.isFallbackAdapter ? PREFER_FALLBACK : PREFER_REAL_GPU;
  for (const base of order) {
    const hit = fitting.find((m) => m.id.startsWith(`${base}-q4`));
    if (hit) return hit;
  }
  return fitting[0];
}

/** After an out-of-memory or device-lost error: the next smaller model to offer, if any. */
export function smallerModelThan(id: string, probe: GpuProbe): LlmModelInfo | undefined {
  const current = llmModelById(id);
  if (!current) return undefined;
  const candidates = (probe.ok ? modelsFor(probe) : LLM_MODELS.filter((m) => m.quantization === current.quantization))
    .filter((m) => m.vramMB < current.vramMB)
    .sort((a, b) => b.vramMB - a.vramMB);
  return candidates[0];
}

// ---------------------------------------------------------------------------------------------
// CPU chat models (transformers.js text generation, ONNX on WASM): for browsers without a usable
// WebGPU. Small instruct models only; the ONNX exports on the Hugging Face hub are the files
// transformers.js reads (onnx/model_quantized.onnx for q8, onnx/model_q4.onnx for q4).

export interface CpuModelInfo {
  /** Hugging Face repository id (or a folder under localModelPath in tests). */
  id: string;
  label: string;
  family: string;
  /** Billions of parameters. */
  paramsB: number;
  dtype: CpuDtype;
  /** Approximate download in MB (ONNX file for dtype plus tokenizer). */
  downloadMB: number;
  /** Approximate memory while generating, in MB (weights plus ONNX Runtime's working memory). */
  ramMB: number;
  /** Prompt plus reply in tokens; a CPU reads the prompt slowly, so this is kept short. */
  contextTokens: number;
  /** Reply length cap in tokens. */
  maxReplyTokens: number;
  description: string;
}

// Ordered small to large. Files as listed on the hub (checked 2026-11-22): the SmolLM2 repositories
// ship model.onnx, model_fp16, model_q4 and model_q4f16 only, so they use q4 (4-bit weights, CPU
// kernels); the onnx-community Qwen2.5 ones ship model_quantized.onnx (q8). Sizes are those files'
// plus the tokenizer, rounded.
export const CPU_MODELS: readonly CpuModelInfo[] = [
  {
    id: 'HuggingFaceTB/SmolLM2-135M-Instruct',
    label: 'SmolLM2 135M Instruct (CPU)',
    family: 'SmolLM2',
    paramsB: 0.135,
    dtype: 'q4',
    downloadMB: 205,
    ramMB: 400,
    contextTokens: 2048,
    maxReplyTokens: 384,
    description: 'The smallest: quick even on an old laptop, but simple answers and weak memory summaries.',
  },
  {
    id: 'HuggingFaceTB/SmolLM2-360M-Instruct',
    label: 'SmolLM2 360M Instruct (CPU)',
    family: 'SmolLM2',
    paramsB: 0.36,
    dtype: 'q4',
    downloadMB: 420,
    ramMB: 800,
    contextTokens: 2048,
    maxReplyTokens: 384,
    description: 'A good first choice without WebGPU: a few words a second on most laptops.',
  },
  {
    id: 'onnx-community/Qwen2.5-0.5B-Instruct',
    label: 'Qwen2.5 0.5B Instruct (CPU)',
    family: 'Qwen2.5',
    paramsB: 0.49,
    dtype: 'q8',
    downloadMB: 520,
    ramMB: 1100,
    contextTokens: 2048,
    maxReplyTokens: 384,
    description: 'Better answers and more reliable JSON for memory; slower on the processor.',
  },
  {
    id: 'onnx-community/Qwen2.5-1.5B-Instruct',
    label: 'Qwen2.5 1.5B Instruct (CPU)',
    family: 'Qwen2.5',
    paramsB: 1.54,
    dtype: 'q8',
    downloadMB: 1600,
    ramMB: 2600,
    contextTokens: 2048,
    maxReplyTokens: 384,
    description: 'The best quality a processor can run here, and slow: for fast desktops with plenty of memory.',
  },
];

export const DEFAULT_CPU_MODEL_ID = 'HuggingFaceTB/SmolLM2-360M-Instruct';

/**
 * The tiny random-weight chat model that scripts/make-test-assets.mjs writes, and the same with a
 * file that is not ONNX. Not in CPU_MODELS: only builds that serve them locally (e2e) use them.
 */
export const TEST_CPU_MODEL: CpuModelInfo = {
  id: 'tealeaf-test/tiny-causal-lm',
  label: 'Tiny test chat model (CPU)',
  family: 'test',
  paramsB: 0.0003,
  dtype: 'q8',
  downloadMB: 0.8,
  ramMB: 20,
  contextTokens: 2048,
  maxReplyTokens: 1000,
  description: 'Generated test fixture: random weights, gibberish replies.',
};
export const BROKEN_TEST_CPU_MODEL: CpuModelInfo = {
  ...TEST_CPU_MODEL,
  id: 'tealeaf-test/broken-causal-lm',
  label: 'Broken test chat model (CPU)',
  description: 'Generated test fixture whose model file is not ONNX.',
};

export function cpuModelById(id: string, models: readonly CpuModelInfo[] = CPU_MODELS): CpuModelInfo | undefined {
  return models.find((m) => m.id === id);
}

/** Which engine to recommend on this device, and why, in words for the Models view. */
export interface EngineAdvice {
  engine: 'webgpu' | 'cpu';
  reason: string;
}

export function recommendEngine(probe: GpuProbe): EngineAdvice {
  if (!probe.ok)
    return {
      engine: 'cpu',
      reason: 'WebGPU is not available in this browser, so the model runs on the processor (slower, smaller models).',
    };
  if (!recommendModel(probe))
    return { engine: 'cpu', reason: 'Your graphics card has too little memory for the WebGPU models, so the model runs on the processor.' };
  return { engine: 'webgpu', reason: 'Your graphics card can run the model: much faster than the processor.' };
}

// ---------------------------------------------------------------------------------------------
// Embedding models (transformers.js feature-extraction, ONNX on WASM).

export interface EmbeddingModelInfo {
  /** Hugging Face repository id (or a local folder under localModelPath). */
  id: string;
  label: string;
  dimension: number;
  dtype: EmbeddingDtype;
  /** How the model was trained to pool token vectors into a sentence vector. */
  pooling: Pooling;
  /** Approximate download in MB (model file for dtype + tokenizer). */
  downloadMB: number;
  description: string;
}

export const EMBEDDING_MODELS: readonly EmbeddingModelInfo[] = [
  {
    id: 'Xenova/bge-small-en-v1.5',
    label: 'BGE small (English) v1.5',
    dimension: 384,
    dtype: 'q8',
    // BGE is trained with the [CLS] vector as the sentence embedding.
    pooling: 'cls',
    downloadMB: 34,
    description: 'Strong retrieval quality for its size. The default.',
  },
  {
    id: 'Xenova/all-MiniLM-L6-v2',
    label: 'all-MiniLM-L6-v2',
    dimension: 384,
    dtype: 'q8',
    pooling: 'mean',
    downloadMB: 23,
    description: 'The smallest and fastest; slightly weaker retrieval.',
  },
];

export const DEFAULT_EMBEDDING_MODEL_ID = 'Xenova/bge-small-en-v1.5';

/**
 * The tiny static embedding model that scripts/make-test-assets.mjs writes (32 dimensions).
 * Not in EMBEDDING_MODELS: only tests that serve it locally use it.
 */
export const TEST_EMBEDDING_MODEL: EmbeddingModelInfo = {
  id: 'tealeaf-test/static-embedder',
  label: 'Static test embedder',
  dimension: 32,
  dtype: 'q8',
  pooling: 'mean',
  downloadMB: 0.1,
  description: 'Generated test fixture; word-hash vectors, no real semantics.',
};

export function embeddingModelById(id: string): EmbeddingModelInfo | undefined {
  return EMBEDDING_MODELS.find((m) => m.id === id) ?? (id === TEST_EMBEDDING_MODEL.id ? TEST_EMBEDDING_MODEL : undefined);
}
