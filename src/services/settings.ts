// User settings, persisted in the settings store under one key. Unknown or broken values fall back
// to defaults field by field, so a bad record never stops the app from starting.
import type { Repository } from '../ports';
import { DEFAULT_MEMORY_SETTINGS, type MemorySettings } from '../memory/settings';
import { Emitter } from './emitter';

export interface AppSettings {
  /** A session ends after this many idle minutes (0 = never by idleness). */
  idleGapMinutes: number;
  /** The chat model to load at start when it is already downloaded. */
  chatModelId?: string;
  embeddingModelId?: string;
  /** A model download that was under way when the tab closed: resumed at the next start. */
  pendingModelId?: string;
  /** Load the last model automatically when it is cached. */
  autoLoadModel: boolean;
  /** Optional self-hosted mirror for model files (base URL); empty = the usual model hosts. */
  modelMirror: string;
  /** A model server on this computer (OpenAI-compatible API); empty = none set up. */
  serverUrl: string;
  /** The server's model chosen for chat and memory. */
  serverModel?: string;
  /** The assistant's persona: the first lines of its system prompt; empty = Tealeaf's own. */
  systemPrompt: string;
  /** Sampling temperature of chat replies (0 = most predictable, 2 = most varied). */
  temperature: number;
  /** Replies draw on what Tealeaf remembers (retrieval into the prompt). Off: replies see only the chat. */
  memoryUse: boolean;
  /** Ended sessions are turned into memories. Off: sessions that end are not memorised; queued ones wait. */
  memoryCreation: boolean;
  memory: MemorySettings;
}

/** Longest persona kept: it goes into every prompt, and small models have small contexts. */
export const MAX_SYSTEM_PROMPT = 4000;
export const TEMPERATURE_RANGE = { min: 0, max: 2, default: 0.7 } as const;

export const DEFAULT_SETTINGS: AppSettings = {
  idleGapMinutes: 60,
  autoLoadModel: true,
  modelMirror: '',
  serverUrl: '',
  systemPrompt: '',
  temperature: TEMPERATURE_RANGE.default,
  memoryUse: true,
  memoryCreation: true,
  memory: { ...DEFAULT_MEMORY_SETTINGS },
};

const KEY = 'app';

function sanitise(raw: unknown): AppSettings {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Partial<Record<keyof AppSettings, unknown>>;
  const mem = (r.memory && typeof r.memory === 'object' ? r.memory : {}) as Record<string, unknown>;
  const memory = { ...DEFAULT_MEMORY_SETTINGS } as MemorySettings;
  for (const k of Object.keys(DEFAULT_MEMORY_SETTINGS) as Array<keyof MemorySettings>) {
    if (typeof mem[k] === typeof DEFAULT_MEMORY_SETTINGS[k]) (memory as unknown as Record<string, unknown>)[k] = mem[k];
  }
  const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
  return {
    idleGapMinutes: num(r.idleGapMinutes, DEFAULT_SETTINGS.idleGapMinutes),
    chatModelId: typeof r.chatModelId === 'string' ? r.chatModelId : undefined,
    embeddingModelId: typeof r.embeddingModelId === 'string' ? r.embeddingModelId : undefined,
    pendingModelId: typeof r.pendingModelId === 'string' ? r.pendingModelId : undefined,
    autoLoadModel: typeof r.autoLoadModel === 'boolean' ? r.autoLoadModel : DEFAULT_SETTINGS.autoLoadModel,
    modelMirror: typeof r.modelMirror === 'string' ? r.modelMirror : '',
    serverUrl: typeof r.serverUrl === 'string' ? r.serverUrl : '',
    serverModel: typeof r.serverModel === 'string' ? r.serverModel : undefined,
    systemPrompt: typeof r.systemPrompt === 'string' ? r.systemPrompt.slice(0, MAX_SYSTEM_PROMPT) : '',
    temperature:
      typeof r.temperature === 'number' && r.temperature >= TEMPERATURE_RANGE.min && r.temperature <= TEMPERATURE_RANGE.max
        ? r.temperature
        : TEMPERATURE_RANGE.default,
    memoryUse: typeof r.memoryUse === 'boolean' ? r.memoryUse : true,
    memoryCreation: typeof r.memoryCreation === 'boolean' ? r.memoryCreation : true,
    memory,
  };
}

export class SettingsService extends Emitter<{ changed: AppSettings }> {
  value: AppSettings = structuredClone(DEFAULT_SETTINGS);

  constructor(private readonly repo: Repository) {
    super();
  }

  async load(): Promise<AppSettings> {
    this.value = sanitise(await this.repo.getSetting<unknown>(KEY));
    // Also after an import: the views show the imported settings at once.
    this.emit('changed', this.value);
    return this.value;
  }

  /** Updates run one after another: each starts from the one before (two quick edits both stay). */
  private queue: Promise<unknown> = Promise.resolve();

  update(patch: Partial<Omit<AppSettings, 'memory'>> & { memory?: Partial<MemorySettings> }): Promise<AppSettings> {
    const run = this.queue
      .catch(() => undefined)
      .then(async () => {
        const next = sanitise({ ...this.value, ...patch, memory: { ...this.value.memory, ...(patch.memory ?? {}) } });
        await this.repo.putSetting(KEY, next);
        this.value = next;
        this.emit('changed', next);
        return next;
      });
    this.queue = run;
    return run;
  }

  get idleGapMs(): number {
    return this.value.idleGapMinutes * 60_000;
  }
}
