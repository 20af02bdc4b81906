// What a build offers and where models come from: the e2e build serves tiny test models from the
// app's own server (real models through the real runtimes), and its entry point registers the
// scripted chat double here; the production build reads the hub or the user's mirror.
import type { LanguageModel } from '../../ports';
import {
  BROKEN_TEST_CPU_MODEL,
  CPU_MODELS,
  DEFAULT_CPU_MODEL_ID,
  LLM_MODELS,
  modelsFor,
  recommendEngine,
  recommendModel,
  TEST_CPU_MODEL,
  type CpuModelInfo,
  type EngineAdvice,
} from '../../models/catalog';
import type { EmbedEnvSettings } from '../../models/messages';
import type { GpuProbe } from '../../models/webgpu';
import { choiceOf, cpuChoiceOf, type ModelChoice } from './model-snapshot';

export const IS_E2E = import.meta.env.MODE === 'e2e';

/** A chat engine added by a build's entry point (the e2e build adds its scripted test double). */
export interface ExtraChatModel {
  choice: ModelChoice;
  create: () => LanguageModel;
}
export const extraChatModels: ExtraChatModel[] = [];

export function registerChatModel(model: ExtraChatModel): void {
  extraChatModels.push(model);
}

/**
 * What a build does by itself. `searchModelWithChat`: the memory search model comes along with the
 * first chat model loaded. The e2e build's entry point turns it off unless a test asks for it
 * (most tests expect recall by words only, which is deterministic). `selfTest`: a chat model that
 * becomes ready is tested once (model-check.ts); off in the e2e build unless a test asks, because
 * its calls would add to every test's count of model calls.
 */
export const buildOptions = { searchModelWithChat: true, selfTest: true };

/** web-llm's sources under a mirror: weights at <mirror>/<org>/<model>/resolve/main/..., libraries at <mirror>/libs/. */
export function mirrorOf(url: string): { modelBaseUrl: string; libBaseUrl: string } | undefined {
  const base = url.trim().replace(/\/+$/, '');
  if (!base) return undefined;
  return { modelBaseUrl: `${base}/`, libBaseUrl: `${base}/libs/` };
}

/** transformers.js settings shared by the CPU chat model and the embedder. */
export function transformersEnv(modelMirror: string): EmbedEnvSettings {
  const mirror = modelMirror.trim().replace(/\/+$/, '');
  if (IS_E2E) return { allowRemoteModels: false, allowLocalModels: true, localModelPath: '/models/' };
  return mirror ? { remoteHost: `${mirror}/` } : {};
}

/** The CPU models this build offers (the e2e build: the generated test models it serves). */
export function buildCpuModels(): readonly CpuModelInfo[] {
  return IS_E2E ? [TEST_CPU_MODEL, BROKEN_TEST_CPU_MODEL] : CPU_MODELS;
}

/**
 * The chat models to offer on this device, the recommended engine's first, and the one to
 * recommend. Without WebGPU the WebGPU catalog is still shown: what exists, its sizes, what it needs.
 */
export function chatChoices(gpu: GpuProbe): { choices: ModelChoice[]; advice: EngineAdvice; recommendedId: string | undefined } {
  const choices = gpu.ok
    ? modelsFor(gpu).map(choiceOf)
    : LLM_MODELS.filter((m) => m.quantization === 'q4f16_1')
        .sort((a, b) => a.vramMB - b.vramMB)
        .map((m) => ({ ...choiceOf(m), unavailable: 'Needs WebGPU, which this browser does not offer here.' }));
  const advice = recommendEngine(gpu);
  const cpuChoices = buildCpuModels().map(cpuChoiceOf);
  if (advice.engine === 'cpu') choices.unshift(...cpuChoices);
  else choices.push(...cpuChoices);
  choices.push(...extraChatModels.map((m) => m.choice));
  const recommendedId = advice.engine === 'cpu' ? (IS_E2E ? TEST_CPU_MODEL.id : DEFAULT_CPU_MODEL_ID) : recommendModel(gpu)?.id;
  return { choices, advice, recommendedId };
}
