// The model server on this computer as the chat model (Ollama, LM Studio, llama.cpp's server):
// listing an address's models, using one, noticing when it stops answering and coming back. The
// server in use (`modelUrl`, `model`) is kept apart from the address listed in the card (`url`),
// so listing another address never reads as using it; connecting another address while a server
// is in use switches to it at once.
import { errorText } from '../../errors';
import type { LanguageModel } from '../../ports';
import { LocalServerModel, normaliseServerUrl } from '../../models/local-server';
import type { SettingsService } from '../settings';
import type { ModelsSnapshot, ServerSnapshot } from './model-snapshot';
import { listServerModels, probeServer, watchServer } from './server-probe';

export interface ServerHost {
  readonly settings: SettingsService;
  snapshot(): ModelsSnapshot;
  set(patch: Partial<ModelsSnapshot>): void;
  remember(patch: Parameters<SettingsService['update']>[0]): Promise<unknown>;
  /** The server's model is the chat model now: the host lets go of every other engine. */
  adopt(server: LanguageModel, label: string): void;
  /** The server in use answers (again): chat and memorising go on through it. */
  ready(server: LanguageModel): void;
  /** The server in use stopped answering, in words. */
  lost(message: string): void;
}

export class ServerSlot {
  /** The model server's model in use (watched: see lostBy). */
  model?: LanguageModel;

  constructor(private readonly host: ServerHost) {}

  private get state(): ServerSnapshot {
    return this.host.snapshot().server;
  }

  set(patch: Partial<ServerSnapshot>): void {
    this.host.set({ server: { ...this.state, ...patch } });
  }

  /** Another engine is put to use: the server is no longer. */
  drop(): void {
    if (!this.model) return;
    this.model = undefined;
    this.set({ model: undefined, modelUrl: undefined, lost: undefined });
  }

  /** Asks the model server at `url` (on this computer only) which models it has. */
  async connect(url: string): Promise<void> {
    this.set({ url, state: 'connecting', error: undefined });
    const listed = await listServerModels(url);
    this.set(listed);
    if (listed.state !== 'listed') return;
    const inUse = this.model ? this.state.modelUrl : undefined;
    if (inUse !== undefined && inUse !== listed.url) {
      // Connecting another address while a server is in use means using that one: at once, with
      // the same model where it has it, so chats never go on to the old address unseen.
      const name = this.state.model;
      await this.use(name && listed.models.includes(name) ? name : listed.models[0]!);
      return;
    }
    if (this.model && inUse === listed.url) void this.reconnect();
    if (this.host.settings.value.serverUrl !== listed.url) await this.host.remember({ serverUrl: listed.url });
  }

  /**
   * Chats and memorises through the server's `model` from now on. Memory jobs resume with it; a
   * reply being written keeps the model it started with. The server is asked first: one that does
   * not answer (e.g. stopped before this reload) is shown as not reachable, never as ready.
   */
  async use(model: string): Promise<void> {
    let url: string;
    try {
      url = normaliseServerUrl(this.state.url || this.host.settings.value.serverUrl);
    } catch (e) {
      this.set({ state: 'error', error: errorText(e) });
      return;
    }
    const local = new LocalServerModel({ baseUrl: url, model });
    // The model's window is asked beside (a few seconds at most): the first call is sized by it.
    const [lost] = await Promise.all([probeServer(url), local.probeWindow()]);
    const server: LanguageModel = watchServer(local, url, (why) => this.lostBy(server, why));
    this.model = server;
    this.host.adopt(server, `${model} (model server on this computer)`);
    const models = this.state.models.length ? this.state.models : [model];
    this.set({ url, model, modelUrl: url, error: undefined, lost, models });
    await this.host.remember({ serverUrl: url, serverModel: model });
    if (lost === undefined) this.host.ready(server);
  }

  /** The server in use stopped answering: nothing chats or memorises through it until a reconnect works. */
  private lostBy(server: LanguageModel, message: string): void {
    if (this.model !== server || this.state.lost !== undefined) return;
    this.set({ lost: message });
    this.host.lost(message);
  }

  /** Asks the server in use again; once it answers, chat and memorising go on through it. */
  async reconnect(): Promise<void> {
    const server = this.model;
    const { lost, state, modelUrl } = this.state;
    if (!server || lost === undefined || state === 'connecting' || !modelUrl) return;
    this.set({ state: 'connecting' });
    const still = await probeServer(modelUrl);
    if (this.model !== server) return;
    this.set({ state, lost: still });
    if (still === undefined) this.host.ready(server);
  }
}
