import { describe, expect, it } from 'vitest';
import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import {
  DEFAULT_EMBEDDING_MODEL_ID,
  EMBEDDING_MODELS,
  LLM_MODELS,
  embeddingModelById,
  modelSuitability,
  modelsFor,
  recommendModel,
  smallerModelThan,
} from '../../../src/models/catalog';
import type { GpuInfo, GpuProbe } from '../../../src/models/webgpu';

const GiB = 2 ** 30;
function probe(gpu: Partial<GpuInfo>): GpuProbe {
  return {
    ok: true,
    browser: { name: 'chrome', version: 140, os: 'windows' },
    warnings: [],
    gpu: {
      vendor: 'nvidia',
      architecture: 'ampere',
      description: '',
      isFallbackAdapter: false,
      shaderF16: true,
      maxBufferSize: 4 * GiB,
      maxStorageBufferBindingSize: 2 * GiB,
      maxComputeWorkgroupStorageSize: 32768,
      maxStorageBuffersPerShaderStage: 10,
      ...gpu,
    },
  };
}
// What Chromium's SwiftShader adapter reports with --enable-unsafe-webgpu (docs/TESTING.md).
const swiftshader = probe({ vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: true, shaderF16: false, maxBufferSize: GiB });
const noGpu: GpuProbe = { ok: false, reason: 'no-adapter', message: '', advice: [], browser: { name: 'chrome', os: 'linux' } };

describe('LLM catalog', () => {
  it('matches web-llm 0.2.86 prebuiltAppConfig record for record', () => {
    for (const m of LLM_MODELS) {
      const rec = prebuiltAppConfig.model_list.find((r) => r.model_id === m.id);
      expect(rec, m.id).toBeDefined();
      expect(m.modelUrl).toBe(rec!.model);
      expect(m.modelLibUrl).toBe(rec!.model_lib);
      expect(m.vramMB).toBe(rec!.vram_required_MB);
      expect(m.contextWindow).toBe(rec!.overrides?.context_window_size);
    }
  });

  it('has both quantizations of each model, with unique ids and plausible sizes', () => {
    const ids = LLM_MODELS.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [
      'Llama-3.2-1B-Instruct',
      'Llama-3.2-3B-Instruct',
      'Qwen2.5-1.5B-Instruct',
      'Qwen2.5-3B-Instruct',
      'Qwen3-1.7B',
      'Phi-3.5-mini-instruct',
    ]) {
      expect(ids).toContain(`${id}-q4f16_1-MLC`);
      expect(ids).toContain(`${id}-q4f32_1-MLC`);
    }
    for (const m of LLM_MODELS) {
      expect(m.downloadMB).toBeGreaterThan(200);
      expect(m.downloadMB).toBeLessThan(m.vramMB * 1.2);
    }
  });

  it('offers only q4f16 models on a GPU with shader-f16, smallest first', () => {
    const list = modelsFor(probe({}));
    expect(list.length).toBeGreaterThan(5);
    expect(list.every((m) => m.quantization === 'q4f16_1')).toBe(true);
    const vram = list.map((m) => m.vramMB);
    expect(vram).toEqual([...vram].sort((a, b) => a - b));
  });

  it('offers only q4f32 models without shader-f16', () => {
    const list = modelsFor(probe({ shaderF16: false }));
    expect(list.length).toBeGreaterThan(3);
    expect(list.every((m) => m.quantization === 'q4f32_1')).toBe(true);
    expect(
      modelSuitability(
        LLM_MODELS.find((m) => m.quantization === 'q4f16_1')!,
        probe({ shaderF16: false }),
      ).reason,
    ).toMatch(/shader-f16/);
  });

  it('filters by a memory budget from navigator.deviceMemory', () => {
    const small = modelsFor(probe({ deviceMemoryGB: 4 }));
    expect(small.every((m) => m.vramMB <= 4 * 1024 * 0.6)).toBe(true);
    expect(small.some((m) => m.id.startsWith('Phi-3.5'))).toBe(false);
    expect(modelsFor(probe({ deviceMemoryGB: 8 })).some((m) => m.id === 'Phi-3.5-mini-instruct-q4f16_1-MLC')).toBe(true);
  });

  it('recommends a small q4f32 model on a software (SwiftShader) adapter', () => {
    const rec = recommendModel(swiftshader);
    expect(rec?.quantization).toBe('q4f32_1');
    expect(rec?.id).toBe('Qwen2.5-0.5B-Instruct-q4f32_1-MLC');
    expect(modelsFor(swiftshader).every((m) => m.vramMB <= 1500)).toBe(true);
  });

  it('recommends the 1.5B model on a real GPU, q4f16 with shader-f16 and q4f32 without', () => {
    expect(recommendModel(probe({}))?.id).toBe('Qwen2.5-1.5B-Instruct-q4f16_1-MLC');
    expect(recommendModel(probe({ shaderF16: false }))?.id).toBe('Qwen2.5-1.5B-Instruct-q4f32_1-MLC');
  });

  it('recommends nothing without WebGPU', () => {
    expect(recommendModel(noGpu)).toBeUndefined();
    expect(modelsFor(noGpu)).toEqual([]);
  });

  it('suggests the next smaller model after an out-of-memory error', () => {
    const p = probe({});
    // By GPU memory need, not parameter count: Llama 3B q4f16 needs less than Qwen2.5 3B.
    expect(smallerModelThan('Qwen2.5-3B-Instruct-q4f16_1-MLC', p)?.id).toBe('Llama-3.2-3B-Instruct-q4f16_1-MLC');
    expect(smallerModelThan('Llama-3.2-3B-Instruct-q4f16_1-MLC', p)?.id).toBe('Qwen3-1.7B-q4f16_1-MLC');
    expect(smallerModelThan('Llama-3.2-1B-Instruct-q4f16_1-MLC', p)).toBeUndefined();
    expect(smallerModelThan('nope', p)).toBeUndefined();
  });
});

describe('embedding catalog', () => {
  it('has a default 384-dimension q8 model and finds models by id', () => {
    const d = embeddingModelById(DEFAULT_EMBEDDING_MODEL_ID);
    expect(d?.dimension).toBe(384);
    expect(d?.dtype).toBe('q8');
    expect(EMBEDDING_MODELS.map((m) => m.id)).toEqual(expect.arrayContaining(['Xenova/all-MiniLM-L6-v2', 'Xenova/bge-small-en-v1.5']));
    // BGE is a CLS-pooling model; MiniLM is mean pooling.
    expect(embeddingModelById('Xenova/bge-small-en-v1.5')?.pooling).toBe('cls');
    expect(embeddingModelById('Xenova/all-MiniLM-L6-v2')?.pooling).toBe('mean');
    expect(embeddingModelById('tealeaf-test/static-embedder')?.dimension).toBe(32);
  });
});
