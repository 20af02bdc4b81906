// The models as the UI sees them: the WebGPU check, the curated choices for this device, download
// progress, cache, storage, and errors turned into what the user can do next.
import { errorText } from '../../errors';
import type { Embedder, LanguageModel } from '../../ports';
import { probeWebGpu } from '../../models/webgpu';
import { EMBEDDING_MODELS, llmModelById, smallerModelThan } from '../../models/catalog';
import { LlmRuntime } from '../../models/llm-runtime';
import { CpuLlmRuntime } from '../../models/cpu-llm-runtime';
import { ModelRuntimeError } from '../../models/errors';
import { DEFAULT_SERVER_URL } from '../../models/local-server';
import { BUILTIN_MODEL_ID, BuiltinModel, builtinAvailability } from '../../models/builtin-model';
import type { ModelProgress } from '../../models/progress';
import { Emitter } from '../emitter';
import type { SettingsService } from '../settings';
import { ERROR_TITLES, SERVER_CHOICE_ID, type ModelEvents, type ModelsSnapshot } from './model-snapshot';
import { exclusiveDownload, isAbort } from './download-lock';
import { buildCpuModels, buildOptions, chatChoices, extraChatModels, mirrorOf, transformersEnv } from './model-env';
import { EmbedderSlot } from './embedder-slot';
import { ServerSlot } from './server-slot';
import { askPersistence, ignoreFullDisk, readStorage } from '../storage-state';
import { ModelCheckRunner } from './model-check';
import { checkKey } from './model-checks';

export { SERVER_CHOICE_ID, type ModelChoice, type ModelsSnapshot, type ServerSnapshot } from './model-snapshot';

export { registerChatModel, type ExtraChatModel } from './model-env';

export class ModelService extends Emitter<ModelEvents> {
  snapshot: ModelsSnapshot = {
    choices: [],
    cached: {},
    embedder: { state: 'none' },
    server: { url: DEFAULT_SERVER_URL, state: 'none', models: [] },
    builtin: { availability: 'checking' },
  };
  private llm?: LlmRuntime;
  /** The model server on this computer, when it chats (server-slot.ts). */
  private readonly servers: ServerSlot;
  private builtin?: BuiltinModel;
  /** Set while this tab waits for another tab's model download. */
  private waitingForTab?: AbortController;
  private llmMirror = '';
  private test?: LanguageModel;
  private readonly embedderSlot: EmbedderSlot;
  private cpu?: CpuLlmRuntime;
  private cpuMirror = '';
  /** Which of the two downloaded-model engines chats: web-llm (WebGPU) or transformers.js (CPU). */
  private engine: 'webgpu' | 'cpu' = 'webgpu';
  /** The self-test of each chat model that becomes ready, in the background (model-check.ts). */
  readonly check: ModelCheckRunner;

  constructor(private readonly settings: SettingsService) {
    super();
    this.embedderSlot = new EmbedderSlot(settings, {
      onState: (embedder) => this.set({ embedder }),
      onChange: (embedder) => this.emit('embedder', embedder),
      onSettled: () => void this.refreshStorage(),
    });
    this.servers = new ServerSlot({
      settings,
      snapshot: () => this.snapshot,
      set: (patch) => this.set(patch),
      remember: (patch) => this.remember(patch),
      adopt: (_server, label) => {
        this.cancelLoadingQuietly();
        this.test = undefined;
        this.builtin = undefined;
        this.embedderSlot.withChatModel();
        this.set({ error: undefined, loadedId: SERVER_CHOICE_ID, loadedLabel: label });
        void this.remember({ chatModelId: SERVER_CHOICE_ID, pendingModelId: undefined });
      },
      ready: (server) => this.emit('llm', server),
      lost: (message) => {
        this.emit('unreachable', { message });
        this.emit('llm', undefined);
      },
    });
    this.check = new ModelCheckRunner({ settings, onState: (check) => this.set({ check }) });
    this.check.enabled = buildOptions.selfTest;
    // Every ready model is tested once (a model server's by its name), a gone one stops its test.
    this.on('llm', (llm) => {
      const loaded = this.snapshot.loadedId ?? llm?.modelId ?? '';
      const server = loaded === SERVER_CHOICE_ID;
      const label = server ? (llm?.modelId ?? '') : (this.snapshot.loadedLabel ?? loaded);
      this.check.modelChanged(llm, llm ? checkKey(loaded, llm.modelId, SERVER_CHOICE_ID) : '', label);
    });
  }

  get languageModel(): LanguageModel | undefined {
    if (this.test) return this.test;
    const server = this.servers.model;
    if (server) return this.snapshot.server.lost === undefined ? server : undefined;
    if (this.builtin) return this.builtin;
    if (this.engine === 'cpu') return this.cpu && this.cpu.state.status === 'ready' ? this.cpu : undefined;
    return this.llm && this.llm.state.status === 'ready' ? this.llm : undefined;
  }

  get embedder(): Embedder | undefined {
    return this.embedderSlot.embedder;
  }

  /** Remembers a model choice for the next start; a full disk loses only that (the app says so). */
  private remember(patch: Parameters<SettingsService['update']>[0]): Promise<unknown> {
    return ignoreFullDisk(this.settings.update(patch));
  }

  private set(patch: Partial<ModelsSnapshot>): void {
    this.snapshot = { ...this.snapshot, ...patch };
    this.emit('state', this.snapshot);
  }

  private runtime(): LlmRuntime {
    const mirror = this.settings.value.modelMirror;
    if (!this.llm || (mirror !== this.llmMirror && this.llm.state.status !== 'loading' && this.llm.state.status !== 'ready')) {
      this.llm?.dispose();
      this.llmMirror = mirror;
      this.llm = new LlmRuntime({ mirror: mirrorOf(mirror) });
      this.llm.subscribe((s) => {
        if (s.status === 'error' && (s.error.kind === 'device-lost' || s.error.kind === 'out-of-memory')) {
          this.failed(s.modelId ?? '', s.error.kind, s.error.message);
          this.emit('llm', undefined);
        }
      });
    }
    return this.llm;
  }

  private isCpuModel(id: string | undefined): boolean {
    return !!id && buildCpuModels().some((m) => m.id === id);
  }

  private cpuRuntime(): CpuLlmRuntime {
    const mirror = this.settings.value.modelMirror;
    const busy = this.cpu && (this.cpu.state.status === 'loading' || this.cpu.state.status === 'ready');
    if (!this.cpu || (mirror !== this.cpuMirror && !busy)) {
      this.cpu?.dispose();
      this.cpuMirror = mirror;
      const cpu = new CpuLlmRuntime({ models: buildCpuModels(), env: transformersEnv(this.settings.value.modelMirror) });
      cpu.subscribe((s) => {
        // The worker died under a loaded model (e.g. WASM out of memory): say so, chat stops.
        if (s.status === 'error' && this.engine === 'cpu' && this.snapshot.loadedId === s.modelId) {
          this.failed(s.modelId ?? '', s.error.kind, s.error.message, s.error.detail);
          this.emit('llm', undefined);
        }
      });
      this.cpu = cpu;
    }
    return this.cpu;
  }

  /** Probes WebGPU (before any download), lists the choices, loads the last model if cached. */
  async start(): Promise<void> {
    // What to resume is read now: by the time the checks below finish the user may have started a
    // download (which sets pendingModelId) and must not see it "resumed" a second time.
    const { chatModelId: last, pendingModelId: pending } = this.settings.value;
    const gpu = await probeWebGpu();
    const { choices, advice, recommendedId } = chatChoices(gpu);
    this.set({
      gpu,
      choices,
      recommendedId,
      recommendation: advice,
      embedder: this.embedderSlot.initial(),
      embedderChoices: EMBEDDING_MODELS.map((m) => ({ id: m.id, label: m.label, sizeMB: m.downloadMB, description: m.description })),
      embedderChosenId: this.embedderSlot.model().id,
      server: { url: this.settings.value.serverUrl || DEFAULT_SERVER_URL, state: 'none', models: [] },
    });
    void this.refreshStorage();
    const builtin = await builtinAvailability();
    this.set({ builtin: { availability: builtin } });
    await this.refreshCached();
    // The user picked a model meanwhile: theirs wins.
    if (this.snapshot.loading || this.snapshot.loadedId || this.snapshot.error) {
      // nothing to resume
    } else if ((gpu.ok || this.isCpuModel(pending)) && pending && this.snapshot.choices.some((c) => c.id === pending)) {
      // The tab closed mid-download: carry on (shards already fetched come from the cache).
      this.emit('notice', { message: `Resuming the download of ${this.label(pending)}.` });
      void this.load(pending);
    } else if (last === BUILTIN_MODEL_ID && this.settings.value.autoLoadModel && builtin === 'available') {
      void this.useBuiltin();
    } else if (last === SERVER_CHOICE_ID && this.settings.value.autoLoadModel && this.settings.value.serverModel) {
      void this.useServerModel(this.settings.value.serverModel);
    } else if ((gpu.ok || this.isCpuModel(last)) && last && this.settings.value.autoLoadModel && this.snapshot.cached[last])
      void this.load(last);
    this.embedderSlot.resume();
  }

  async refreshCached(): Promise<void> {
    const cached: Record<string, boolean> = {};
    const gpu = this.snapshot.gpu;
    // The CPU worker starts only where the CPU engine is likely used (no WebGPU, or chosen before).
    const checkCpu = this.snapshot.recommendation?.engine === 'cpu' || this.isCpuModel(this.settings.value.chatModelId) || !!this.cpu;
    for (const c of this.snapshot.choices) {
      if (c.engine === 'cpu' && checkCpu) {
        cached[c.id] = await this.cpuRuntime()
          .isCached(c.id)
          .catch(() => false);
      } else if (c.needsGpu && gpu?.ok) {
        cached[c.id] = await this.runtime()
          .isCached(c.id)
          .catch(() => false);
      }
    }
    this.set({ cached });
  }

  async refreshStorage(): Promise<void> {
    const storage = await readStorage();
    if (storage) this.set({ storage });
  }

  async requestPersistence(): Promise<void> {
    if (!(await askPersistence()))
      this.emit('error', {
        message: 'The browser did not grant persistent storage. Bookmarking or installing Tealeaf makes it more likely.',
      });
    await this.refreshStorage();
  }

  private label(id: string): string {
    return this.snapshot.choices.find((c) => c.id === id)?.label ?? llmModelById(id)?.label ?? id;
  }

  async load(id: string): Promise<void> {
    // A second request for the model already loading (a double click, the start-up resume racing
    // the user) joins the first instead of starting a second download.
    if (this.snapshot.loading?.modelId === id) return;
    this.set({ error: undefined });
    const extra = extraChatModels.find((m) => m.choice.id === id);
    this.dropServer();
    if (extra) {
      this.embedderSlot.withChatModel();
      this.test = extra.create();
      this.set({ loadedId: id, loadedLabel: this.label(id), loading: undefined });
      await this.remember({ chatModelId: id });
      this.emit('llm', this.test);
      return;
    }
    const cpu = this.isCpuModel(id);
    const gpu = this.snapshot.gpu;
    if (!cpu && !gpu?.ok) {
      this.failed(id, 'no-webgpu', gpu && !gpu.ok ? gpu.message : 'WebGPU is not available in this browser.');
      return;
    }
    this.test = undefined;
    // The memory search model downloads alongside the first chat model (its progress shows too).
    this.embedderSlot.withChatModel();
    // Ask once that the browser never evicts downloaded models and memories to free space.
    void navigator.storage?.persist?.().catch(() => false);
    const label = this.label(id);
    this.set({ loading: { modelId: id, label, fraction: 0, text: 'Starting…' }, loadedId: undefined });
    await this.remember({ pendingModelId: id });
    // From here the engine being loaded is the one that chats (nothing until it is ready). A CPU
    // reply being written finishes first: the CPU worker queues the load behind it.
    this.engine = cpu ? 'cpu' : 'webgpu';
    this.emit('llm', undefined);
    try {
      // One download at a time across tabs: two tabs resuming the same download at start-up would
      // fetch and cache every shard twice. The second waits, then loads from the cache.
      const wait = new AbortController();
      this.waitingForTab = wait;
      await exclusiveDownload(
        wait.signal,
        () => this.set({ loading: { modelId: id, label, fraction: 0, text: 'Waiting for another Tealeaf tab to finish its download…' } }),
        async () => {
          this.waitingForTab = undefined;
          await (cpu ? this.cpuRuntime() : this.runtime()).load(id, {
            onProgress: (p: ModelProgress) =>
              this.set({
                loading: {
                  modelId: id,
                  label,
                  fraction: p.fraction,
                  loadedMB: p.loadedMB,
                  totalMB: p.totalMB,
                  etaSeconds: p.etaSeconds,
                  text: p.text,
                },
              }),
          });
        },
      );
      this.set({ loading: undefined, loadedId: id, loadedLabel: label, cached: { ...this.snapshot.cached, [id]: true } });
      await this.remember({ chatModelId: id, pendingModelId: undefined });
      // The CPU model's memory is freed once its reply (if any) is done; a WebGPU model stays
      // loaded when the CPU engine takes over, so a reply it is writing is never cut.
      if (!cpu) void this.cpu?.unload();
      this.emit('llm', cpu ? this.cpu : this.llm);
    } catch (e) {
      this.set({ loading: undefined });
      await this.remember({ pendingModelId: undefined });
      const kind = e instanceof ModelRuntimeError ? e.kind : isAbort(e) ? 'cancelled' : 'unknown';
      if (kind === 'cancelled') return;
      this.failed(id, kind, errorText(e), e instanceof ModelRuntimeError ? e.detail : undefined);
    } finally {
      void this.refreshStorage();
    }
  }

  private failed(id: string, kind: string, message: string, detail?: string): void {
    const gpu = this.snapshot.gpu;
    const smaller = (kind === 'out-of-memory' || kind === 'device-lost') && gpu ? smallerModelThan(id, gpu) : undefined;
    // A broken download resumes: the parts already fetched stay in the browser's cache.
    const retryId = kind === 'download-failed' || kind === 'network' || kind === 'unknown' || kind === 'bad-model-file' ? id : undefined;
    this.set({
      loadedId: this.snapshot.loadedId === id ? undefined : this.snapshot.loadedId,
      error: {
        kind,
        title: ERROR_TITLES[kind] ?? 'The model could not be loaded',
        message,
        detail,
        smallerId: smaller?.id,
        smallerLabel: smaller?.label,
        retryId,
      },
    });
  }

  clearError(): void {
    this.set({ error: undefined });
  }

  cancel(): void {
    this.waitingForTab?.abort();
    this.waitingForTab = undefined;
    this.llm?.cancel();
    this.cpu?.cancel();
    this.set({ loading: undefined });
    void this.remember({ pendingModelId: undefined });
  }

  async unload(): Promise<void> {
    this.test = undefined;
    this.dropServer();
    await this.llm?.unload();
    await this.cpu?.unload();
    this.set({ loadedId: undefined, loadedLabel: undefined });
    this.emit('llm', undefined);
  }

  private dropServer(): void {
    this.builtin = undefined;
    this.servers.drop();
  }

  /**
   * Chats and memorises with the browser's own model (downloaded by the browser the first time,
   * with progress). Nothing to download from model hosts, no WebGPU check of ours.
   */
  async useBuiltin(): Promise<void> {
    if (this.snapshot.builtin.loading !== undefined) return;
    this.set({ builtin: { ...this.snapshot.builtin, loading: 0, error: undefined } });
    try {
      const model = await BuiltinModel.start((fraction) => this.set({ builtin: { ...this.snapshot.builtin, loading: fraction } }));
      this.cancelLoadingQuietly();
      this.dropServer();
      this.test = undefined;
      this.builtin = model;
      this.embedderSlot.withChatModel();
      this.set({
        error: undefined,
        loadedId: BUILTIN_MODEL_ID,
        loadedLabel: 'Built into this browser',
        builtin: { availability: 'available' },
      });
      await this.remember({ chatModelId: BUILTIN_MODEL_ID, pendingModelId: undefined });
      this.emit('llm', model);
    } catch (e) {
      this.set({ builtin: { availability: await builtinAvailability(), error: `The browser's model could not start: ${errorText(e)}` } });
    }
  }

  /** Asks the model server at `url` (on this computer only) which models it has. */
  connectServer(url: string): Promise<void> {
    return this.servers.connect(url);
  }

  /** Chats and memorises through the server's `model` from now on (server-slot.ts). */
  useServerModel(model: string): Promise<void> {
    return this.servers.use(model);
  }

  /** Asks the server in use again; once it answers, chat and memorising go on through it. */
  reconnectServer(): Promise<void> {
    return this.servers.reconnect();
  }

  /** A web-llm download in progress stops when the user picks the server instead. */
  private cancelLoadingQuietly(): void {
    if (this.snapshot.loading) {
      this.llm?.cancel();
      this.cpu?.cancel();
    }
    this.set({ loading: undefined });
  }

  async deleteCached(id: string): Promise<void> {
    try {
      await (this.isCpuModel(id) ? this.cpuRuntime() : this.runtime()).deleteCached(id);
    } catch (e) {
      this.emit('error', { message: errorText(e) });
    }
    await this.refreshCached();
    await this.refreshStorage();
  }

  /** Frees the space of every downloaded chat model (the loaded one is unloaded first). */
  async deleteAllCached(): Promise<void> {
    const cached = Object.entries(this.snapshot.cached)
      .filter(([, c]) => c)
      .map(([id]) => id);
    if (this.snapshot.loadedId && cached.includes(this.snapshot.loadedId)) await this.unload();
    for (const id of cached) await (this.isCpuModel(id) ? this.cpuRuntime() : this.runtime()).deleteCached(id).catch(() => undefined);
    await this.refreshCached();
    await this.refreshStorage();
  }

  /** The user asks for the embedding model (download, turn on, retry); memory search then also uses meaning. */
  loadEmbedder(): Promise<void> {
    return this.embedderSlot.turnOn();
  }

  /** The user turns the embedding model off (a download stops); recall then uses words only. */
  turnOffEmbedder(): Promise<void> {
    return this.embedderSlot.turnOff();
  }

  /**
   * Switches the embedding model: memories are then re-embedded in the background (resumable: the
   * runner embeds whatever has no vector for the current model).
   */
  async chooseEmbedder(id: string): Promise<void> {
    if (await this.embedderSlot.choose(id)) this.set({ embedderChosenId: id });
  }
}
