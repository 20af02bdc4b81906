// User settings, persisted in the settings store under one key and shared by every tab: writes
// patch the stored record, other tabs re-read it. Unknown or broken values fall back to defaults
// field by field, so a bad record never stops the app from starting.
import type { Repository } from '../ports';
import { DEFAULT_MEMORY_SETTINGS, type MemorySettings } from '../memory/settings';
import { Emitter } from './emitter';
import { isUsableModelId } from '../memory/limits';
import { readModelChecks, type ModelChecks } from './models/model-checks';

export interface AppSettings {
  /** A session ends after this many idle minutes (0 = never by idleness). */
  idleGapMinutes: number;
  /** The chat model to load at start when it is already downloaded. */
  chatModelId?: string;
  embeddingModelId?: string;
  /**
   * The memory search (embedding) model is wanted: it downloads with the first chat model loaded
   * and loads at start. Off: the user said no; recall finds memories by words only.
   */
  memorySearchModel: boolean;
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
  /** What the model self-test found, per model (model-checks.ts): it runs once per model, not at every start. */
  modelChecks: ModelChecks;
  memory: MemorySettings;
}

/** Longest persona kept: it goes into every prompt, and small models have small contexts. */
export const MAX_SYSTEM_PROMPT = 4000;
export const TEMPERATURE_RANGE = { min: 0, max: 2, default: 0.7 } as const;

export const DEFAULT_SETTINGS: AppSettings = {
  idleGapMinutes: 60,
  autoLoadModel: true,
  memorySearchModel: true,
  modelMirror: '',
  serverUrl: '',
  systemPrompt: '',
  temperature: TEMPERATURE_RANGE.default,
  memoryUse: true,
  memoryCreation: true,
  modelChecks: {},
  memory: { ...DEFAULT_MEMORY_SETTINGS },
};

const KEY = 'app';
/** Tabs tell each other here that they wrote the settings (the message names the database). */
const CHANNEL = 'tealeaf-settings';

export type SettingsPatch = Partial<Omit<AppSettings, 'memory'>> & { memory?: Partial<MemorySettings> };

const asRecord = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
/** A model name the app can keep (src/memory/limits.ts); a longer one is dropped, not cut (it would name another model). */
const modelName = (v: unknown) => (typeof v === 'string' && isUsableModelId(v) ? v : undefined);
const text = (v: unknown) => (typeof v === 'string' ? v : '');
const flag = (d: boolean) => (v: unknown) => (typeof v === 'boolean' ? v : d);

function readMemory(raw: unknown): MemorySettings {
  const mem = asRecord(raw);
  const memory = { ...DEFAULT_MEMORY_SETTINGS } as MemorySettings;
  for (const k of Object.keys(DEFAULT_MEMORY_SETTINGS) as Array<keyof MemorySettings>) {
    if (typeof mem[k] === typeof DEFAULT_MEMORY_SETTINGS[k]) (memory as unknown as Record<string, unknown>)[k] = mem[k];
  }
  return memory;
}

/**
 * How each field is read from storage. Every key of AppSettings must be here (a type error
 * otherwise), so a new setting is read, patched and kept like the others and never dropped.
 */
const FIELDS: { [K in keyof AppSettings]-?: (v: unknown) => AppSettings[K] } = {
  idleGapMinutes: (v) => num(v, DEFAULT_SETTINGS.idleGapMinutes),
  chatModelId: modelName,
  embeddingModelId: modelName,
  memorySearchModel: flag(true),
  pendingModelId: modelName,
  autoLoadModel: flag(DEFAULT_SETTINGS.autoLoadModel),
  modelMirror: text,
  serverUrl: text,
  serverModel: modelName,
  systemPrompt: (v) => text(v).slice(0, MAX_SYSTEM_PROMPT),
  temperature: (v) => (typeof v === 'number' && v >= TEMPERATURE_RANGE.min && v <= TEMPERATURE_RANGE.max ? v : TEMPERATURE_RANGE.default),
  memoryUse: flag(true),
  memoryCreation: flag(true),
  modelChecks: readModelChecks,
  memory: readMemory,
};
const FIELD_KEYS = Object.keys(FIELDS) as Array<keyof AppSettings>;

/** The settings in a stored record, field by field; what is missing or broken takes its default. */
export function sanitiseSettings(raw: unknown): AppSettings {
  const r = asRecord(raw);
  const out: Record<string, unknown> = {};
  for (const k of FIELD_KEYS) out[k] = FIELDS[k](r[k]);
  return out as unknown as AppSettings;
}

/**
 * The stored record with only the patch's keys (and the patch's memory keys) replaced: every other
 * key stays as its last writer left it, including keys a newer version of the app wrote.
 */
export function patchSettingsRecord(stored: unknown, patch: SettingsPatch): Record<string, unknown> {
  const out = { ...asRecord(stored) };
  const fields = FIELDS as Record<string, (v: unknown) => unknown>;
  for (const [k, v] of Object.entries(patch)) if (k !== 'memory' && k in fields) out[k] = fields[k](v);
  if (patch.memory) {
    const memory = { ...asRecord(out.memory) };
    const clean = readMemory({ ...memory, ...patch.memory });
    for (const k of Object.keys(patch.memory) as Array<keyof MemorySettings>) if (k in clean) memory[k] = clean[k];
    out.memory = memory;
  }
  return out;
}

export interface SettingsOptions {
  /**
   * The database the settings live in. Given, the service hears other tabs' writes to the same
   * database (a tab showing the demo hears only the demo's) and re-reads when the tab is shown again.
   */
  db?: string;
}

/**
 * The settings as one state shared by every tab and job: a write patches the stored record in one
 * transaction and tells the other tabs, which re-read it; `changed` fires for both.
 */
export class SettingsService extends Emitter<{ changed: AppSettings }> {
  value: AppSettings = structuredClone(DEFAULT_SETTINGS);
  private readonly channel?: BroadcastChannel;
  /** Reads and writes run one after another: a read never overwrites a newer write's value. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repo: Repository,
    private readonly options: SettingsOptions = {},
  ) {
    super();
    const db = options.db;
    if (db === undefined) return;
    if (typeof BroadcastChannel !== 'undefined') {
      this.channel = new BroadcastChannel(CHANNEL);
      this.channel.onmessage = (event: MessageEvent<{ type?: string; db?: string }>) => {
        if (event.data?.type === 'settings-changed' && event.data.db === db) void this.refresh().catch(() => undefined);
      };
    }
    // A message missed (a tab asleep, no BroadcastChannel): read again when the tab is looked at.
    if (typeof document !== 'undefined')
      document.addEventListener('visibilitychange', () => {
        if (document.visibilityState === 'visible') void this.refresh().catch(() => undefined);
      });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.catch(() => undefined).then(fn);
    this.queue = run;
    return run;
  }

  load(): Promise<AppSettings> {
    return this.serial(async () => {
      this.value = sanitiseSettings(await this.repo.getSetting<unknown>(KEY));
      // Also after an import: the views show the imported settings at once.
      this.emit('changed', this.value);
      return this.value;
    });
  }

  /** Reads the stored settings (another tab may have written them); `changed` fires if they differ. */
  refresh(): Promise<AppSettings> {
    return this.serial(async () => {
      const next = sanitiseSettings(await this.repo.getSetting<unknown>(KEY));
      if (JSON.stringify(next) !== JSON.stringify(this.value)) {
        this.value = next;
        this.emit('changed', next);
      }
      return this.value;
    });
  }

  /** Writes only the keys in `patch` (memory switches one by one) and tells the other tabs. */
  update(patch: SettingsPatch): Promise<AppSettings> {
    return this.serial(async () => {
      const stored = await this.repo.updateSetting(KEY, (current) => patchSettingsRecord(current, patch));
      this.value = sanitiseSettings(stored);
      this.emit('changed', this.value);
      this.announce();
      return this.value;
    });
  }

  /** Tells the other tabs to re-read (also after a backup import or delete-all wrote the store). */
  announce(): void {
    this.channel?.postMessage({ type: 'settings-changed', db: this.options.db });
  }

  /** Stops listening to other tabs (tests; a tab closes its channel when it goes). */
  close(): void {
    this.channel?.close();
  }

  get idleGapMs(): number {
    return this.value.idleGapMinutes * 60_000;
  }
}
