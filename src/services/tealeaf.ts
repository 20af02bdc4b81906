// The composition root: opens the store and wires chat, memory, models and settings together.
import { IdbRepository } from '../store/repository';
import { BLOCKED_MESSAGE } from '../store/db';
import { ChatService } from './chat';
import { MemoryService } from './memory';
import { ModelService } from './models';
import { SettingsService } from './settings';

export interface OpenOptions {
  onVersionChange: () => void;
  onBlocked: (message: string) => void;
}

export class Tealeaf {
  readonly settings: SettingsService;
  readonly models: ModelService;
  readonly memory: MemoryService;
  readonly chat: ChatService;

  private constructor(readonly repo: IdbRepository) {
    this.settings = new SettingsService(repo);
    this.models = new ModelService(this.settings);
    this.memory = new MemoryService(repo, this.settings, () => this.models.languageModel, () => this.models.embedder);
    this.chat = new ChatService({
      repo,
      preparer: this.memory,
      getModel: () => this.models.languageModel,
      idleGapMs: () => this.settings.idleGapMs,
    });
    // Memorising runs whenever there is work and a model to do it.
    this.chat.on('ended', () => this.memory.kick());
    this.memory.on('graph', () => void this.chat.refresh());
    this.models.on('llm', (llm) => { if (llm) this.memory.kick(); });
    this.models.on('embedder', () => { void this.memory.attachVectors().then(() => this.memory.kick()); });
  }

  static async open(opts: OpenOptions): Promise<Tealeaf> {
    const repo = await IdbRepository.open({
      onVersionChange: opts.onVersionChange,
      onBlocked: (info) => opts.onBlocked(info.message ?? BLOCKED_MESSAGE),
    });
    const t = new Tealeaf(repo);
    await t.settings.load();
    return t;
  }

  /** Everything after first paint: history, memory index, model probe. */
  async start(): Promise<void> {
    await this.chat.start();
    await this.memory.load();
    await this.models.start();
    // Idle sessions end while the app stays open too.
    setInterval(() => void this.chat.checkIdle(), 60_000);
  }
}
