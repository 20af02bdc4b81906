// What the Models view sees of the chat and embedding models: the choices for this device, what is
// loaded or loading, errors in words a user can act on, and the other engines (model server,
// the browser's own model).
import type { GpuProbe } from '../../models/webgpu';
import type { Embedder, LanguageModel } from '../../ports';
import type { CpuModelInfo, EngineAdvice, LlmModelInfo } from '../../models/catalog';
import type { BuiltinAvailability } from '../../models/builtin-model';
import type { ModelCheckSnapshot } from './model-check';
import type { StorageState } from '../storage-state';

export interface ModelChoice {
  id: string;
  label: string;
  description: string;
  sizeMB: number;
  vramMB?: number;
  /** Memory a CPU model needs while it writes (CPU engine only). */
  ramMB?: number;
  /** The scripted test double (e2e builds only) and CPU models need no GPU. */
  needsGpu: boolean;
  /** Which engine runs it; absent for the test double. */
  engine?: 'webgpu' | 'cpu';
  /** Why it cannot run here (shown instead of a usable button). */
  unavailable?: string;
  /** How fast it writes, in words (CPU models: it depends on the model's size). */
  speed?: string;
}

export interface ModelsSnapshot {
  gpu?: GpuProbe;
  choices: ModelChoice[];
  recommendedId?: string;
  /** Which engine suits this device, and why (WebGPU missing or too small: the CPU). */
  recommendation?: EngineAdvice;
  cached: Record<string, boolean>;
  loadedId?: string;
  loadedLabel?: string;
  loading?: { modelId: string; label: string; fraction: number; loadedMB?: number; totalMB?: number; etaSeconds?: number; text: string };
  error?: { kind: string; title: string; message: string; detail?: string; smallerId?: string; smallerLabel?: string; retryId?: string };
  storage?: StorageState;
  embedder: EmbedderSnapshot;
  embedderChoices?: Array<{ id: string; label: string; sizeMB: number; description: string }>;
  /** The embedding model chosen in settings (loaded or not). */
  embedderChosenId?: string;
  /** A model server on this computer: its address, the models it lists, and how it went. */
  server: ServerSnapshot;
  /** The browser's own model (Prompt API): whether there is one, and its download. */
  builtin: { availability: BuiltinAvailability | 'checking'; loading?: number; error?: string };
  /** The self-test of the chat model in use: running, or what it found (model-check.ts). */
  check?: ModelCheckSnapshot;
}

/**
 * The memory search (embedding) model: 'none' = wanted but not loaded yet (it comes with the next
 * chat model loaded), 'off' = the user turned it off (recall uses words only).
 */
export interface EmbedderSnapshot {
  state: 'none' | 'off' | 'loading' | 'ready' | 'error';
  modelId?: string;
  label?: string;
  fraction?: number;
  loadedMB?: number;
  totalMB?: number;
  message?: string;
  sizeMB?: number;
}

export interface ServerSnapshot {
  url: string;
  state: 'none' | 'connecting' | 'listed' | 'error';
  models: string[];
  /** The model in use through a server, if any, and that server's address (`url` is the one listed). */
  model?: string;
  modelUrl?: string;
  error?: string;
  /** Set while the server in use does not answer: why, in words (cleared by a reconnect that works). */
  lost?: string;
}

/** The chat model id that means "the model server's model" in settings and snapshots. */
export const SERVER_CHOICE_ID = 'local-server';

export const ERROR_TITLES: Record<string, string> = {
  'download-failed': 'The model could not be downloaded',
  network: 'The model could not be downloaded',
  'bad-model-file': 'The model file is damaged',
  'storage-full': 'Not enough storage for this model',
  'out-of-memory': 'Your graphics card ran out of memory',
  'device-lost': 'The graphics card stopped responding',
  'no-webgpu': 'WebGPU is not available',
  'no-adapter': 'No suitable graphics card found',
  'unsupported-model': 'This model does not run on this graphics card',
};

export function choiceOf(m: LlmModelInfo): ModelChoice {
  return { id: m.id, label: m.label, description: m.description, sizeMB: m.downloadMB, vramMB: m.vramMB, needsGpu: true, engine: 'webgpu' };
}

/**
 * What to expect of a processor with a model of this size: an estimate from its size (every token
 * reads all its weights), not a measurement; real models' speeds cannot be measured on the project's
 * machines (BENCHMARKS.md, bench:cpu), so the words say "by its size".
 */
export function cpuSpeed(paramsB: number): string {
  if (paramsB < 0.2) return 'quick even on an old laptop';
  if (paramsB < 0.4) return 'a few words a second on most laptops';
  if (paramsB < 1) return 'a word or two a second on most laptops';
  return 'slow: for fast desktops';
}

export function cpuChoiceOf(m: CpuModelInfo): ModelChoice {
  return {
    id: m.id,
    label: m.label,
    description: m.description,
    sizeMB: m.downloadMB,
    ramMB: m.ramMB,
    needsGpu: false,
    engine: 'cpu',
    speed: cpuSpeed(m.paramsB),
  };
}

/** What ModelService tells its listeners. */
export type ModelEvents = {
  state: ModelsSnapshot;
  error: { message: string };
  notice: { message: string };
  /** A chat model became ready or went away. */
  llm: LanguageModel | undefined;
  /** The embedder became ready. */
  embedder: Embedder | undefined;
  /** The model server in use stopped answering (why, in words); `llm` follows with undefined. */
  unreachable: { message: string };
};
