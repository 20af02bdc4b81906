// Builds web-llm model records (and an AppConfig) from the catalog, optionally pointing model
// weights and model libraries at a mirror: users can self-host, and e2e tests point at 127.0.0.1.
// Pure: unit tested in Node.

import { HF_PREFIX, WEBLLM_LIB_PREFIX, requiredFeatures, type LlmModelInfo } from './catalog';
import type { LlmCacheBackend, ModelRecordLite } from './messages';

export interface LlmMirror {
  /**
   * Replaces "https://huggingface.co/": weights are fetched from
   * `${modelBaseUrl}mlc-ai/<model_id>/resolve/main/<file>` (the hub's own layout).
   */
  modelBaseUrl?: string;
  /**
   * Replaces web-llm's library prefix: libraries are fetched from `${libBaseUrl}<file>.wasm`,
   * e.g. `${libBaseUrl}Qwen2-1.5B-Instruct-q4f16_1_cs1k-webgpu.wasm`.
   */
  libBaseUrl?: string;
}

/**
 * Makes mirror URLs absolute and slash-terminated: web-llm calls `new URL(model)` without a base,
 * so a relative "/mirror/" would throw inside the worker.
 */
export function resolveMirror(mirror: LlmMirror | undefined, baseHref: string): LlmMirror | undefined {
  if (!mirror) return undefined;
  const fix = (u: string | undefined): string | undefined => {
    if (!u || !u.trim()) return undefined;
    const abs = new URL(u.trim(), baseHref).href;
    return abs.endsWith('/') ? abs : `${abs}/`;
  };
  const out: LlmMirror = {};
  const m = fix(mirror.modelBaseUrl);
  const l = fix(mirror.libBaseUrl);
  if (m) out.modelBaseUrl = m;
  if (l) out.libBaseUrl = l;
  return m || l ? out : undefined;
}

function rebase(url: string, fromPrefix: string, toPrefix: string | undefined): string {
  if (!toPrefix) return url;
  if (url.startsWith(fromPrefix)) return toPrefix + url.slice(fromPrefix.length);
  // Not under the known prefix: keep the file name under the mirror.
  return toPrefix + url.slice(url.lastIndexOf('/') + 1);
}

export function buildModelRecord(info: LlmModelInfo, mirror?: LlmMirror): ModelRecordLite {
  const features = requiredFeatures(info);
  return {
    model: rebase(info.modelUrl, HF_PREFIX, mirror?.modelBaseUrl),
    model_id: info.id,
    model_lib: rebase(info.modelLibUrl, WEBLLM_LIB_PREFIX, mirror?.libBaseUrl),
    vram_required_MB: info.vramMB,
    low_resource_required: true,
    ...(features.length > 0 ? { required_features: features } : {}),
    overrides: { context_window_size: info.contextWindow },
  };
}

/** A web-llm AppConfig (structurally) for the given models. */
export interface AppConfigLite {
  model_list: ModelRecordLite[];
  cacheBackend: LlmCacheBackend;
}

export function buildAppConfig(
  models: readonly LlmModelInfo[],
  opts: { mirror?: LlmMirror; cacheBackend?: LlmCacheBackend } = {},
): AppConfigLite {
  return {
    model_list: models.map((m) => buildModelRecord(m, opts.mirror)),
    cacheBackend: opts.cacheBackend ?? 'cache',
  };
}
