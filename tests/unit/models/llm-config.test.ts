import { describe, expect, it } from 'vitest';
import { LLM_MODELS, llmModelById } from '../../../src/models/catalog';
import { buildAppConfig, buildModelRecord, resolveMirror } from '../../../src/models/llm-config';

const qwen = llmModelById('Qwen2.5-1.5B-Instruct-q4f16_1-MLC')!;
const qwen32 = llmModelById('Qwen2.5-1.5B-Instruct-q4f32_1-MLC')!;

describe('web-llm app config', () => {
  it('uses the catalog URLs without a mirror and requires shader-f16 for q4f16 models', () => {
    const r = buildModelRecord(qwen);
    expect(r).toMatchObject({
      model_id: qwen.id,
      model: 'https://huggingface.co/mlc-ai/Qwen2.5-1.5B-Instruct-q4f16_1-MLC',
      model_lib:
        'https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/main/web-llm-models/v0_2_86/base/Qwen2-1.5B-Instruct-q4f16_1_cs1k-webgpu.wasm',
      required_features: ['shader-f16'],
      overrides: { context_window_size: 4096 },
    });
    expect(buildModelRecord(qwen32).required_features).toBeUndefined();
  });

  it('rewrites model and library URLs to a mirror', () => {
    const mirror = resolveMirror(
      { modelBaseUrl: '/mirror/hf', libBaseUrl: 'http://127.0.0.1:4173/mirror/libs/' },
      'http://127.0.0.1:4173/app/',
    );
    expect(mirror).toEqual({ modelBaseUrl: 'http://127.0.0.1:4173/mirror/hf/', libBaseUrl: 'http://127.0.0.1:4173/mirror/libs/' });
    const r = buildModelRecord(qwen, mirror);
    expect(r.model).toBe('http://127.0.0.1:4173/mirror/hf/mlc-ai/Qwen2.5-1.5B-Instruct-q4f16_1-MLC');
    expect(r.model_lib).toBe('http://127.0.0.1:4173/mirror/libs/Qwen2-1.5B-Instruct-q4f16_1_cs1k-webgpu.wasm');
    // Only the library mirrored: weights still from the hub.
    const libOnly = buildModelRecord(qwen, resolveMirror({ libBaseUrl: 'https://cdn.example/libs' }, 'https://app.example/'));
    expect(libOnly.model).toBe(qwen.modelUrl);
    expect(libOnly.model_lib).toBe('https://cdn.example/libs/Qwen2-1.5B-Instruct-q4f16_1_cs1k-webgpu.wasm');
  });

  it('ignores empty mirror settings', () => {
    expect(resolveMirror({ modelBaseUrl: '  ', libBaseUrl: '' }, 'http://x/')).toBeUndefined();
    expect(resolveMirror(undefined, 'http://x/')).toBeUndefined();
  });

  it('builds an AppConfig with every catalog model and the cache backend', () => {
    const cfg = buildAppConfig(LLM_MODELS, { cacheBackend: 'indexeddb' });
    expect(cfg.cacheBackend).toBe('indexeddb');
    expect(cfg.model_list.map((m) => m.model_id)).toEqual(LLM_MODELS.map((m) => m.id));
    expect(buildAppConfig([qwen]).cacheBackend).toBe('cache');
  });
});
