// The composition root: opens the store and wires chat, memory, models and settings together.
import { IdbRepository } from '../store/repository';
import type { BackupRunOptions } from '../store/backup-client';
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
      temperature: () => this.settings.value.temperature,
    });
    // Memorising runs whenever there is work and a model to do it.
    this.chat.on('ended', () => this.memory.kick());
    this.memory.on('graph', () => void this.chat.refresh());
    this.models.on('llm', (llm) => { if (llm) this.memory.kick(); });
    // An embedding model is ready: attach its vectors (rebuild on a switch), embed what is missing.
    this.models.on('embedder', () => void this.memory.embedderChanged());
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

  /**
   * Deletes a chat (see MemoryService.deleteSession). A reply still streaming into it is stopped
   * and saved first, so nothing writes to it afterwards.
   */
  async deleteChat(sessionId: string, options: { deleteMemories: boolean }): Promise<void> {
    await this.chat.release(sessionId);
    await this.memory.deleteSession(sessionId, options);
    await this.chat.forget(sessionId);
  }

  /** Loads the built-in demo conversation with its memories (idempotent). */
  async loadDemo(): Promise<void> {
    const { buildDemo, demoSessionId } = await import('./demo');
    // Loaded once: loading again would re-date it and undo the user's edits to it.
    if (await this.repo.getSession(demoSessionId(1))) return;
    const demo = buildDemo(Date.now());
    await this.memory.applyLive({ sessions: demo.sessions, turns: demo.turns, memories: demo.memories, edges: demo.edges });
    await this.chat.refresh();
  }

  /** Imports a LoCoMo-format conversation: history plus memories linked as in Phase I. */
  async importLocomo(text: string, onProgress?: (done: number, total: number, label: string) => void) {
    const { importLocomo } = await import('./importer');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error('This file is not JSON. Choose a LoCoMo conversation file (one conversation per file).');
    }
    const m = this.memory;
    let result: Awaited<ReturnType<typeof importLocomo>> | undefined;
    // The import runs memorise jobs itself: other runners stop and wait until it is done.
    await m.exclusive(async () => {
      result = await importLocomo(json, {
        repo: this.repo, index: m.index, graph: m.graph, memories: m.memories, settings: this.settings.value.memory,
        llm: this.models.languageModel, embedder: this.models.embedder, onProgress,
      });
    });
    if (!result) throw new Error('The import did not run.');
    await m.reload();
    await this.chat.refresh();
    return result;
  }

  /**
   * Everything as one versioned JSON file (vectors optional: they can be recomputed), built in a
   * worker so the page stays responsive; cancellable.
   */
  async exportBackup(includeVectors: boolean, options: BackupRunOptions = {}): Promise<Blob> {
    const { exportBackupInWorker } = await import('../store/backup-client');
    return exportBackupInWorker({ ...options, includeVectors });
  }

  /**
   * Reads, validates and writes a backup file in a worker, in one transaction: on any error or a
   * cancel nothing changes. Running jobs (here and in other tabs) stop first and wait: a job holding
   * the graph it read before a replace would otherwise write links to memories that are gone.
   */
  async importBackup(file: Blob, mode: 'merge' | 'replace', options: BackupRunOptions = {}) {
    const { importBackupInWorker } = await import('../store/backup-client');
    const summary = await this.memory.exclusive(() => importBackupInWorker(file, mode, options));
    // The rebuild below runs on this page; the progress bar says so instead of looking stuck.
    options.onProgress?.({ phase: 'reloading', done: 0, total: 1 });
    await this.settings.load();
    await this.memory.reload();
    await this.chat.refresh();
    this.memory.kick();
    return summary;
  }

  /** Deletes every conversation, memory and setting; model downloads too when asked. */
  async deleteAllData(includeModels: boolean): Promise<void> {
    this.chat.stop();
    // Jobs stop and wait (in every tab) so nothing is written after the wipe; the wipe itself is
    // one transaction over every store.
    await this.memory.exclusive(() => this.repo.wipeAll());
    if (typeof caches !== 'undefined') {
      const names = await caches.keys();
      const modelCaches = /^(webllm\/|transformers-cache|tealeaf-wasm)/;
      await Promise.all(names.filter((n) => includeModels || !modelCaches.test(n)).filter((n) => !n.startsWith('workbox-precache')).map((n) => caches.delete(n)));
    }
  }

  /** Everything after first paint: history, memory index, model probe. */
  async start(): Promise<void> {
    await this.chat.start();
    await this.memory.retryFailedJobs();
    await this.memory.load();
    await this.models.start();
    // Idle sessions end while the app stays open too.
    setInterval(() => void this.chat.checkIdle(), 60_000);
  }
}
