// The composition root: opens the store and wires chat, memory, models and settings together.
import { IdbRepository } from '../store/repository';
import type { BackupRunOptions, ExportResult } from '../store/backup-client';
import type { HistoryImportOptions } from './history/import';
import { BLOCKED_MESSAGE, deleteTealeafDb } from '../store/db';
import { DB_NAME, DEMO_DB_NAME } from '../store/schema';
import { currentSpace, demoSettings, findLegacyDemo, setSpace, type LegacyDemo, type Space } from './space';
import { ChatService } from './chat/chat';
import { EvaluationService } from './memory/evaluation';
import { MemoryService } from './memory/memory';
import { ModelService } from './models/models';
import { LocalServers } from './models/local-servers';
import { SettingsService } from './settings';
import { MemoryCommands } from './commands/memory-commands';
import { SyncService, readChatDevices } from './sync';
import { ConversationFirst } from './models/conversation-first';
import type { Turn } from '../memory/types';

export interface OpenOptions {
  onVersionChange: () => void;
  onBlocked: (message: string) => void;
}

export class Tealeaf {
  readonly settings: SettingsService;
  readonly models: ModelService;
  /** Model servers found running on this computer (offered before any download). */
  readonly localServers = new LocalServers();
  readonly memory: MemoryService;
  readonly chat: ChatService;
  /** Replies first: background model calls wait for the chat to pause on a one-conversation engine. */
  readonly conversation = new ConversationFirst();
  readonly evaluation: EvaluationService;
  /** "remember that …", "forget …", "what do you remember about …" in the chat. */
  readonly commands: MemoryCommands;
  /** Sync between the user's devices (docs/SYNC.md): off until turned on in Settings. */
  readonly sync: SyncService;

  private constructor(
    readonly repo: IdbRepository,
    readonly space: Space,
  ) {
    // One state with every tab on the same database (the demo's tabs share only the demo's).
    this.settings = new SettingsService(repo, { db: this.dbName });
    this.sync = new SyncService(repo);
    this.models = new ModelService(this.settings);
    this.memory = new MemoryService(
      repo,
      this.settings,
      // Memorising waits for the chat to pause where the engine keeps one conversation only.
      () => this.conversation.background(this.models.languageModel),
      () => this.models.embedder,
    );
    // Another device's delete-all, accepted here: as this device's own (jobs stopped, views told).
    this.sync.wipeHere = async (wipe) => {
      this.chat.stop();
      await this.memory.exclusive(wipe);
      this.settings.announce();
    };
    this.evaluation = new EvaluationService(
      this.memory,
      this.settings,
      () => this.models.languageModel,
      () => this.models.embedder,
    );
    this.commands = new MemoryCommands({
      repo,
      memory: this.memory,
      getEmbedder: () => this.models.embedder,
      getModel: () => this.models.languageModel,
    });
    this.chat = new ChatService({
      repo,
      preparer: this.memory,
      memoryless: this.memory.memoryless,
      getModel: () => this.conversation.foreground(this.models.languageModel),
      idleGapMs: () => this.settings.idleGapMs,
      temperature: () => this.settings.value.temperature,
      memorise: () => this.settings.value.memoryCreation,
      commands: this.commands,
      devices: () => readChatDevices(repo.db),
    });
    // Sync turned on or off, a device paired or unpaired: which chats this device continues.
    this.sync.on('status', () => void this.chat.owner.load());
    // Memory creation off: stop the job that runs now; on again: catch up with what waited.
    this.settings.on('changed', (s) => {
      if (s.memoryCreation) this.memory.kick();
      else this.memory.pauseJobs();
      void this.memory.settingsChanged();
    });
    // Memorising runs whenever there is work and a model to do it.
    this.chat.on('ended', () => this.memory.kick());
    this.memory.on('graph', () => void this.chat.refresh());
    // A job calling the previous model stops that call and runs again with this one.
    this.models.on('llm', (llm) => this.memory.modelChanged(llm));
    // The model self-test steps aside while a reply is being written: chat comes first.
    this.chat.on('busy', ({ phase }) => this.models.check.chatBusy(phase !== 'idle'));
    // The chat's turns are embedded in the background for in-chat recall by meaning: when a chat
    // is shown and when a reply is done (the person's new message is embedded by its reply).
    const noteChat = (turns: Turn[]) =>
      this.chat.temporary || this.memory.noteChat(turns.at(-1)?.role === 'user' ? turns.slice(0, -1) : turns);
    this.chat.on('turns', ({ turns }) => noteChat(turns));
    this.chat.on('busy', ({ phase }) => phase === 'idle' && noteChat(this.chat.turns));
    // The model server stopped answering: the job stops before its failing step counts as an
    // attempt, and waits (not "failed") until a reconnect brings the model back.
    this.models.on('unreachable', () => this.memory.pauseJobs());
    // An embedding model is ready: attach its vectors (rebuild on a switch), embed what is missing.
    this.models.on('embedder', () => void this.memory.embedderChanged());
  }

  static async open(opts: OpenOptions): Promise<Tealeaf> {
    const space = currentSpace();
    const repo = await IdbRepository.open({
      name: space === 'demo' ? DEMO_DB_NAME : DB_NAME,
      onVersionChange: opts.onVersionChange,
      onBlocked: (info) => opts.onBlocked(info.message ?? BLOCKED_MESSAGE),
    });
    // The demo database was removed in another tab: fill it again rather than show an empty demo.
    if (space === 'demo') await seedDemo(repo);
    const t = new Tealeaf(repo, space);
    await t.settings.load();
    return t;
  }

  /**
   * Deletes a chat (see MemoryService.deleteSession). A reply still streaming into it is stopped
   * and saved first, so nothing writes to it afterwards.
   */
  async deleteChat(sessionId: string, options: { deleteMemories: boolean }): Promise<{ memoriesDeleted: number }> {
    await this.chat.release(sessionId);
    const applied = await this.memory.deleteSession(sessionId, options);
    await this.chat.forget(sessionId);
    // What was really deleted: an unfinished chat takes its partial memories along, box or not.
    return { memoriesDeleted: applied.deleteMemories?.length ?? 0 };
  }

  /**
   * Prepares the demo space (its own database, filled once, with this space's model choices so
   * the same models load there, and nothing else of the user's settings). The caller reloads the page, which then opens the demo.
   */
  async enterDemo(): Promise<void> {
    if (this.space === 'demo') return;
    const demo = await IdbRepository.open({ name: DEMO_DB_NAME });
    try {
      if ((await demo.getSetting('app')) === undefined) await demo.putSetting('app', demoSettings(this.settings.value));
      await seedDemo(demo);
    } finally {
      demo.close();
    }
    setSpace('demo');
  }

  /** Back to the user's own memory (the demo stays for next time). The caller reloads. */
  leaveDemo(): void {
    setSpace('own');
  }

  /** Deletes the demo database in one go and goes back to the user's own memory. The caller reloads. */
  async removeDemo(): Promise<void> {
    this.chat.stop();
    if (this.space === 'demo') {
      await this.memory.exclusive(async () => this.repo.close());
    }
    setSpace('own');
    await deleteTealeafDb(globalThis.indexedDB, DEMO_DB_NAME);
  }

  /** Demo records that an earlier version loaded into the user's own memory, if any. */
  async legacyDemo(): Promise<LegacyDemo | undefined> {
    return this.space === 'own' ? findLegacyDemo(this.repo) : undefined;
  }

  /** Removes those records (their edges and vectors go with them) in one transaction. */
  async removeLegacyDemo(): Promise<void> {
    const found = await this.legacyDemo();
    if (!found) return;
    if (this.chat.current && found.change.deleteSessions?.includes(this.chat.current.id)) await this.chat.newChat();
    await this.memory.applyLive(found.change);
    await this.chat.refresh();
  }

  /** Imports a LoCoMo-format conversation: history plus memories linked as in Phase I. */
  async importLocomo(text: string, onProgress?: (done: number, total: number, label: string) => void) {
    this.refuseInDemo();
    const { importLocomo } = await import('./memory/locomo-import');
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
        repo: this.repo,
        index: m.index,
        graph: m.graph,
        memories: m.memories,
        settings: this.settings.value.memory,
        llm: this.models.languageModel,
        embedder: this.models.embedder,
        onProgress,
      });
    });
    if (!result) throw new Error('The import did not run.');
    await m.reload();
    await this.chat.refresh();
    return result;
  }

  /**
   * Imports a ChatGPT or Claude conversations.json: its chats become ended sessions with their
   * dates, queued for memorising (oldest first) by the normal job runner. The file is parsed in a
   * worker. Returns the message for the user; throws HistoryImportError, with nothing written, on
   * a bad or oversized file, and HistoryImportCancelledError, with nothing left written, on a cancel.
   */
  async importHistory(file: Blob, options: HistoryImportOptions = {}): Promise<string> {
    this.refuseInDemo();
    const { importHistory, historyResultMessage } = await import('./history/import');
    try {
      const result = await importHistory(file, { repo: this.repo, exclusive: (fn) => this.memory.exclusive(fn), ...options });
      return historyResultMessage(result, { creationOff: !this.settings.value.memoryCreation, noModel: !this.models.languageModel });
    } finally {
      await this.chat.refresh();
      // The jobs stopped for the write resume, and the new ones start, oldest first.
      this.memory.kick();
      await this.memory.publishJobs();
    }
  }

  /**
   * Everything as one versioned JSON file (vectors optional: they can be recomputed), built in a
   * worker so the page stays responsive; cancellable.
   */
  async exportBackup(includeVectors: boolean, options: BackupRunOptions = {}): Promise<ExportResult> {
    const { exportBackupInWorker } = await import('../store/backup-client');
    return exportBackupInWorker({ ...options, includeVectors, db: this.dbName });
  }

  /**
   * Reads, validates and writes a backup file in a worker, in one transaction: on any error or a
   * cancel nothing changes. Running jobs (here and in other tabs) stop first and wait: a job holding
   * the graph it read before a replace would otherwise write links to memories that are gone.
   */
  async importBackup(file: Blob, mode: 'merge' | 'replace', options: BackupRunOptions = {}) {
    this.refuseInDemo();
    const { importBackupInWorker } = await import('../store/backup-client');
    const summary = await this.memory.exclusive(() => importBackupInWorker(file, mode, { ...options, db: this.dbName }));
    // With sync on, the import left a row for the sync loop: it goes out to the paired devices.
    if (this.space === 'own') this.sync.imported();
    // The rebuild below runs on this page; the progress bar says so instead of looking stuck.
    options.onProgress?.({ phase: 'reloading', done: 0, total: 1 });
    await this.settings.load();
    this.settings.announce();
    await this.memory.reload();
    await this.chat.refresh();
    this.memory.kick();
    return summary;
  }

  /**
   * Deletes every conversation, memory and setting; model downloads too when asked. Returns what
   * the user's own memory held (counted by the wipes) and whether the demo held anything.
   */
  async deleteAllData(includeModels: boolean): Promise<DeletedData> {
    this.chat.stop();
    // Jobs stop and wait (in every tab) so nothing is written after the wipe; the wipe itself is
    // one transaction over every store.
    const here = await this.memory.exclusive(() => this.repo.wipeAll({ syncReset: this.space === 'own' }));
    // Paired devices empty too, and what they wrote before they heard is not brought back.
    if (this.space === 'own') await this.sync.deletedAll();
    this.settings.announce();
    // Everything on this device: the other space too (the demo, or from the demo the user's own).
    const other = await IdbRepository.open({ name: this.space === 'demo' ? DB_NAME : DEMO_DB_NAME });
    let there: Awaited<ReturnType<IdbRepository['wipeAll']>>;
    try {
      there = await other.wipeAll();
    } finally {
      other.close();
    }
    const [own, demo] = this.space === 'demo' ? [there, here] : [here, there];
    setSpace('own');
    if (typeof caches !== 'undefined') {
      const names = await caches.keys();
      const modelCaches = /^(webllm\/|transformers-cache|tealeaf-wasm)/;
      await Promise.all(
        names
          .filter((n) => includeModels || !modelCaches.test(n))
          .filter((n) => !n.startsWith('workbox-precache'))
          .map((n) => caches.delete(n)),
      );
    }
    return { chats: own.sessions, memories: own.memories, demo: demo.sessions + demo.memories > 0 };
  }

  /**
   * Hears whether the disk is full: true once a write is refused for want of space (the app goes
   * on, read-only where it must), false once a write lands again. Returns the unsubscribe.
   */
  onStorage(listener: (full: boolean) => void): () => void {
    return this.repo.onStorage(listener);
  }

  /** Everything after first paint: history, memory index, model probe. */
  async start(): Promise<void> {
    await this.chat.start();
    await this.memory.retryFailedJobs();
    await this.memory.load();
    // Quietly, beside the WebGPU check: nothing answering is the usual case.
    void this.localServers.look();
    await this.models.start();
    if (this.space === 'own') await this.sync.start();
    // Idle sessions end while the app stays open too.
    setInterval(() => void this.chat.checkIdle(), 60_000);
  }

  /**
   * Imports go into the user's own memory only: one into the demo would vanish with "Remove the
   * demo" and be missing from their memory after "Leave the demo".
   */
  private refuseInDemo(): void {
    if (this.space === 'demo') throw new DemoImportError();
  }

  /** The database this tab shows (the demo's own, or the user's). */
  get dbName(): string {
    return this.space === 'demo' ? DEMO_DB_NAME : DB_NAME;
  }
}

/** Fills the demo database once: loading again would re-date it and undo edits made in the demo. */
async function seedDemo(repo: IdbRepository): Promise<void> {
  const { buildDemo, demoSessionId } = await import('./demo/demo');
  if (await repo.getSession(demoSessionId(1))) return;
  const demo = buildDemo(Date.now());
  await repo.apply({ sessions: demo.sessions, turns: demo.turns, memories: demo.memories, edges: demo.edges });
}

/** What "Delete everything" deleted: the user's own chats and memories, and whether a demo was there. */
export interface DeletedData {
  chats: number;
  memories: number;
  demo: boolean;
}

/** An import was asked for while the demo is shown. */
export class DemoImportError extends Error {
  constructor() {
    super('This is the demo: leave it first, so that the import goes into your own memory.');
    this.name = 'DemoImportError';
  }
}
