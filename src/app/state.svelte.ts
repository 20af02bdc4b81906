// UI state: mirrors what the services publish into Svelte runes. No IndexedDB or model SDK here.
import type { Memory, Session, Timeline, Turn } from '../memory/types';
import type { ChangeSet } from '../ports';
import { errorText } from '../errors';
import { displayText } from '../memory/voice';
import { FrameBatch } from './frame-batch';
import type { ModelsSnapshot } from '../services/models/models';
import { useEngine, type EngineAction, type LocalServersSnapshot } from '../services/models/local-servers';
import type { JobSnapshot } from '../services/memory/jobs';
import type { Hold } from '../services/models/conversation-first';
import type { EvaluationSnapshot } from '../services/memory/evaluation';
import type { AppSettings } from '../services/settings';
import type { Tealeaf } from '../services/tealeaf';
import { NO_SYNC, OFF, type ChatDevices, type PairLink, type SyncStatus } from '../services/sync';
import { sayAfterReload, takeAfterReload } from './after-reload';
import { chatDeletedWords, DEMO_WORDS, legacyDemoRemovedWords } from './done-words';
import { forgetWords } from './forget-words';
import { focusTurn } from './chat/focus-turn';
import { takePairLink } from './settings/pair-link-intake';

export type View = 'chat' | 'memory' | 'evaluate' | 'models' | 'settings';
const VIEWS: View[] = ['chat', 'memory', 'evaluate', 'models', 'settings'];

/** A question for the user, shown in the app's one dialog (ConfirmDialog). */
export interface ConfirmRequest {
  title: string;
  /** Paragraphs, one per line. */
  message: string;
  confirmLabel: string;
  cancelLabel?: string;
  /** The action cannot be undone (red button, alertdialog). */
  danger?: boolean;
  /** An extra choice, e.g. "also delete downloaded models". */
  checkbox?: { label: string; checked?: boolean };
}

export interface ConfirmResult {
  ok: boolean;
  /** The checkbox, when there was one. */
  checked: boolean;
}

export interface Toast {
  id: number;
  kind: 'error' | 'info';
  message: string;
}

export class AppState {
  view = $state<View>('chat');
  ready = $state(false);
  fatal = $state<string | null>(null);
  /** The disk is full: writes are refused (the app runs on, read-only where it must). */
  storageFull = $state(false);
  /** The one sync state every view reads (Settings, the delete-all words, the remote delete-all banner). */
  syncStatus = $state<SyncStatus>(OFF);
  /** Another tab upgraded the database: this one must reload. */
  mustReload = $state<string | null>(null);
  sessions = $state<Session[]>([]);
  currentSessionId = $state('');
  turns = $state<Turn[]>([]);
  phase = $state<'idle' | 'remembering' | 'replying'>('idle');
  toasts = $state<Toast[]>([]);
  models = $state<ModelsSnapshot>({
    choices: [],
    cached: {},
    embedder: { state: 'none' },
    server: { url: '', state: 'none', models: [] },
    builtin: { availability: 'checking' },
  });
  /** Model servers found running on this computer. */
  localServers = $state<LocalServersSnapshot>({ state: 'idle', found: [] });
  jobs = $state<JobSnapshot[]>([]);
  /** Memorising's model calls held until the chat pauses (a one-conversation engine). */
  chatHold = $state<Hold>({ waiting: 0 });
  /** The Evaluate view's run (TeaFarm): progress, then the report. */
  evaluation = $state<EvaluationSnapshot>({ state: 'idle' });
  settings = $state<AppSettings | null>(null);
  memories = $state<Map<string, Memory>>(new Map());
  /** The live memory has been read once (before that, how many memories a chat made is unknown). */
  memoryLoaded = $state(false);
  /** Why a reply failed, by turn id: shown with the reply (this tab only). */
  replyErrors = $state<Record<string, string>>({});
  /** Replies this tab saw end at the model's token limit (not kept: a reload forgets it). */
  replyCuts = $state<Record<string, boolean>>({});
  /** Memory ids (and timelines) the explorer should highlight, from a reply's chips. */
  explorerFocus = $state<{ memoryIds: string[]; timelines: Timeline[]; turnId: string } | null>(null);
  /** A turn to scroll to and flash once the chat shows it. */
  focusTurnId = $state<string | null>(null);
  /** Bumped whenever the memory graph changed, so the explorer reloads. */
  graphVersion = $state(0);
  /** The chat shown is temporary: nothing of it is stored or remembered. */
  temporary = $state(false);
  /** This device and the paired ones: a chat open on another device is read-only here. */
  chatDevices = $state<ChatDevices>(NO_SYNC);
  /** Which memory this tab shows: the user's own or the demo (a separate database). */
  space = $state<'own' | 'demo'>('own');
  /** Demo records an earlier version put into the user's own memory, offered for removal. */
  legacyDemo = $state<{ sessions: number; memories: number } | null>(null);

  /** A pairing link opened this page (taken out of the address bar at once): Settings fills in its form. */
  pairLink = $state<PairLink | null>(null);

  /** The confirmation being asked, if any. */
  dialog = $state<(ConfirmRequest & { resolve: (r: ConfirmResult) => void }) | null>(null);

  tealeaf?: Tealeaf;
  private toastId = 0;

  constructor() {
    const fromHash = () => {
      this.pairLink = takePairLink() ?? this.pairLink;
      const v = location.hash.replace(/^#\/?/, '').split('?')[0] as View;
      this.view = VIEWS.includes(v) ? v : 'chat';
    };
    fromHash();
    window.addEventListener('hashchange', fromHash);
    // What the action that reloaded this page did ("Everything was deleted: ...").
    const said = takeAfterReload();
    if (said) this.tell(said);
  }

  attach(t: Tealeaf): void {
    this.tealeaf = t;
    t.chat.on('sessions', (s) => (this.sessions = s));
    // A streaming reply is shown once per frame at most; a finished one at once.
    const frames = new FrameBatch<Turn>((turn) => {
      const i = this.turns.findIndex((x) => x.id === turn.id);
      if (i >= 0) this.turns[i] = turn;
    });
    t.chat.on('turns', ({ sessionId, turns }) => {
      frames.drop();
      this.currentSessionId = sessionId;
      this.turns = [...turns];
    });
    t.chat.on('turn', (turn) => (turn.status === 'streaming' ? frames.push(turn) : frames.now(turn)));
    t.chat.on('busy', ({ phase }) => (this.phase = phase));
    t.chat.on('temporary', (on) => (this.temporary = on));
    this.chatDevices = t.chat.owner.devices;
    t.chat.owner.on('devices', (d) => (this.chatDevices = d));
    t.chat.on('error', ({ message, turnId }) =>
      turnId ? (this.replyErrors = { ...this.replyErrors, [turnId]: message }) : this.toast('error', message),
    );
    t.chat.on('cut', ({ turnId, cut }) => {
      if (cut !== Boolean(this.replyCuts[turnId])) this.replyCuts = { ...this.replyCuts, [turnId]: cut };
    });
    t.chat.on('notice', ({ message }) => this.toast('info', message));
    t.models.on('state', (m) => (this.models = m));
    t.models.on('error', ({ message }) => this.toast('error', message));
    t.models.on('notice', ({ message }) => this.toast('info', message));
    t.localServers.on('state', (s) => (this.localServers = s));
    this.localServers = t.localServers.snapshot;
    t.memory.on('jobs', (j) => (this.jobs = j));
    t.conversation.on('hold', (h) => (this.chatHold = h));
    t.evaluation.on('state', (e) => (this.evaluation = e));
    t.memory.on('graph', () => {
      this.memories = new Map(t.memory.memories);
      this.memoryLoaded = true;
      this.graphVersion++;
    });
    t.memory.on('error', ({ message }) => this.toast('error', message));
    t.memory.on('repaired', ({ notes }) =>
      this.toast('info', `Tealeaf repaired your memory store: ${notes.join(' ')} Details are in Settings.`),
    );
    t.settings.on('changed', (s) => (this.settings = s));
    t.onStorage((full) => (this.storageFull = full));
    this.syncStatus = t.sync.status;
    t.sync.on('status', (st) => (this.syncStatus = st));
    this.settings = t.settings.value;
    this.models = t.models.snapshot;
    this.memories = new Map(t.memory.memories);
    this.space = t.space;
    void this.checkLegacyDemo();
  }

  async checkLegacyDemo(): Promise<void> {
    const found = await this.tealeaf?.legacyDemo().catch(() => undefined);
    this.legacyDemo = found ? { sessions: found.sessions, memories: found.memories } : null;
  }

  /** Opens the demo in this tab (its own database): the page reloads into it. */
  enterDemo = async () => {
    await this.tealeaf?.enterDemo();
    location.hash = '#/memory';
    location.reload();
  };

  leaveDemo = () => {
    this.tealeaf?.leaveDemo();
    sayAfterReload(DEMO_WORDS.left);
    location.reload();
  };

  removeDemo = async () => {
    try {
      await this.tealeaf?.removeDemo();
      sayAfterReload(DEMO_WORDS.removed);
      location.reload();
    } catch (e) {
      this.toast('error', `Could not remove the demo: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  removeLegacyDemo = async () => {
    const found = this.legacyDemo;
    try {
      await this.tealeaf?.removeLegacyDemo();
      this.legacyDemo = null;
      this.tell(found ? legacyDemoRemovedWords(found) : 'The demo records were removed from your memory.');
    } catch (e) {
      this.toast('error', `Could not remove the demo records: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  toast(kind: Toast['kind'], message: string, ms = 5000): void {
    const id = ++this.toastId;
    this.toasts = [...this.toasts.filter((t) => t.message !== message), { id, kind, message }];
    if (kind === 'info') setTimeout(() => this.dismiss(id), ms);
  }

  /** Says that a big action is done (done-words.ts): longer than a passing notice, to be read. */
  tell(message: string): void {
    this.toast('info', message, 12_000);
  }

  dismiss(id: number): void {
    this.toasts = this.toasts.filter((t) => t.id !== id);
  }

  /** Asks in the page (never window.confirm); resolves with the answer. */
  confirm(request: ConfirmRequest): Promise<ConfirmResult> {
    // A second question replaces the first, which counts as cancelled.
    this.dialog?.resolve({ ok: false, checked: false });
    return new Promise((resolve) => (this.dialog = { ...request, resolve }));
  }

  closeDialog(ok: boolean, checked: boolean): void {
    const d = this.dialog;
    this.dialog = null;
    d?.resolve({ ok, checked });
  }

  memoryText(id: string): string {
    const m = this.memories.get(id);
    // Shown as the user reads it ("You ..."); the stored text is unchanged.
    return m ? displayText(m) : '(deleted memory)';
  }

  go(view: View): void {
    location.hash = `#/${view}`;
  }

  /**
   * Sends a message and waits for the reply. Resolves with why the message could not be saved
   * (e.g. the disk is full), or null once it was, so the composer gives back only unsaved words.
   */
  send = async (text: string): Promise<string | null> => {
    try {
      await this.tealeaf?.chat.send(text);
      return null;
    } catch (e) {
      return errorText(e);
    }
  };
  stop = () => this.tealeaf?.chat.stop();
  regenerate = (turnId?: string) => this.tealeaf?.chat.regenerate(turnId) ?? Promise.resolve();
  editAndResend = (turnId: string, text: string) => this.tealeaf?.chat.editAndResend(turnId, text) ?? Promise.resolve();
  showVersion = (turnId: string, version: number) => this.tealeaf?.chat.showVersion(turnId, version) ?? Promise.resolve();
  renameChat = (sessionId: string, title: string) => this.tealeaf?.chat.rename(sessionId, title) ?? Promise.resolve();
  searchChats = (query: string) => this.tealeaf?.chat.search(query) ?? Promise.resolve([]);

  /** Asks, then deletes a chat; a chat with memories asks whether to keep them (default: keep). */
  async deleteChat(sessionId: string): Promise<boolean> {
    const t = this.tealeaf;
    const session = this.sessions.find((s) => s.id === sessionId);
    if (!t || !session) return false;
    const n = t.memory.memoriesOfSession(sessionId);
    const pending = session.status === 'ended';
    const answer = await this.confirm({
      title: 'Delete this chat?',
      message: [
        `“${session.title}” and all its messages will be deleted from this device. This cannot be undone.`,
        n > 0
          ? `Tealeaf made ${n === 1 ? '1 memory' : `${n} memories`} from it. Kept memories stay in your memory; the explorer shows their source as deleted.`
          : pending
            ? 'It has not been memorised yet, and will not be.'
            : '',
      ]
        .filter(Boolean)
        .join('\n'),
      confirmLabel: 'Delete chat',
      danger: true,
      ...(n > 0 ? { checkbox: { label: `Also delete the ${n === 1 ? 'memory' : `${n} memories`} made from it`, checked: false } } : {}),
    });
    if (!answer.ok) return false;
    try {
      const { memoriesDeleted } = await t.deleteChat(sessionId, { deleteMemories: n > 0 && answer.checked });
      this.tell(chatDeletedWords(session.title, memoriesDeleted, t.memory.memoriesOfSession(sessionId)));
      return true;
    } catch (e) {
      this.toast('error', `Could not delete the chat: ${errorText(e)}`);
      return false;
    }
  }
  newChat = () => this.tealeaf?.chat.newChat() ?? Promise.resolve();
  temporaryChat = () => this.tealeaf?.chat.startTemporary() ?? Promise.resolve();
  endSession = () => this.tealeaf?.chat.endCurrent() ?? Promise.resolve();
  /** "Try again now" on a chat whose memorising failed. */
  retryMemorising = (jobId: string) => this.tealeaf?.memory.retryFailedJobs(jobId) ?? Promise.resolve();
  /** Puts a chat engine to use in one step and shows the chat (a download's progress is there). */
  useEngine = async (action: EngineAction) => {
    if (!this.tealeaf) return;
    this.go('chat');
    await useEngine(this.tealeaf.models, action);
    // A server offered as found that did not answer: look again, so it is not offered again.
    const server = this.tealeaf.models.snapshot.server;
    if (action.kind === 'server' && (server.state === 'error' || server.lost !== undefined)) void this.tealeaf.localServers.look();
  };
  /** Asks the model server that stopped answering again. */
  reconnect = () => this.tealeaf?.models.reconnectServer() ?? Promise.resolve();
  openSession = async (id: string) => {
    await this.tealeaf?.chat.open(id);
    this.go('chat');
  };

  /**
   * What forgetting these memories takes besides them, in words (forget-words.ts): asked before a
   * memory's Delete and under a forget card, so the user sees it before it happens.
   */
  forgetWords = async (ids: string[], lines: string[] = []): Promise<string[]> => {
    const preview = await this.tealeaf?.memory.forgetting.preview(ids, lines);
    if (!preview) return [];
    return forgetWords(preview, {
      asked: ids,
      title: (id) => this.sessions.find((s) => s.id === id)?.title,
      text: (id, stored) => this.memoryText(id).replace(/^\(deleted memory\)$/, stored),
    });
  };

  /** Forget cards whose Undo this page holds (the change that puts their memories back), by card. */
  private forgetUndo = new Map<string, ChangeSet>();
  forgetUndoable = $state<Record<string, true>>({});

  /** "Forget these n" on a forget card in the chat. */
  forgetMemories = (turnId: string, ids: string[], lines: string[] = []) =>
    this.command('Could not forget', async (c) => {
      const undo = await c.forget(turnId, ids, lines);
      if (!undo) return;
      this.forgetUndo.set(turnId, undo);
      this.forgetUndoable = { ...this.forgetUndoable, [turnId]: true };
    });
  keepMemories = (turnId: string) => this.command('Could not answer', (c) => c.keep(turnId));
  /** Undo under a command's answer: a "remember that" forgets its memory, a forget puts them back. */
  undoCommand = (turn: Turn) =>
    this.command('Could not undo', async (c) => {
      if (turn.command?.kind === 'remember') return c.unremember(turn.id);
      const undo = this.forgetUndo.get(turn.id);
      this.forgetUndo.delete(turn.id);
      this.forgetUndoable = Object.fromEntries(Object.entries(this.forgetUndoable).filter(([id]) => id !== turn.id));
      if (undo) await c.undo(undo);
    });
  /** Moves a memory between a standing instruction and a fact (the answer's card, Persona). */
  setMemoryKind = (id: string, to: 'instruction' | 'fact') => this.command('Could not change it', (c) => c.setKind(id, to));
  private async command(failed: string, fn: (c: NonNullable<Tealeaf['commands']>) => Promise<void>): Promise<void> {
    if (!this.tealeaf) return;
    try {
      await fn(this.tealeaf.commands);
    } catch (e) {
      this.toast('error', `${failed}: ${errorText(e)}`);
    }
  }

  /** Opens the explorer on the memories a session added (the "Memory updated" notice's link). */
  openMemories(memoryIds: string[]): void {
    this.explorerFocus = { memoryIds, timelines: [], turnId: '' };
    this.go('memory');
  }

  openExplorerFor(turn: Turn): void {
    this.explorerFocus = { memoryIds: turn.usedMemory?.memoryIds ?? [], timelines: turn.usedMemory?.timelines ?? [], turnId: turn.id };
    this.go('memory');
  }

  /** Turns by id (a forget card's messages), in the order given. */
  getTurns = (ids: string[]): Promise<Turn[]> => this.tealeaf?.chat.getTurns(ids) ?? Promise.resolve([]);

  /** Opens the conversation a memory came from, scrolled to the turn. */
  async openTurn(turnId: string): Promise<void> {
    const [turn] = (await this.tealeaf?.chat.getTurns([turnId])) ?? [];
    if (!turn) {
      this.toast('info', 'That part of the conversation was deleted.');
      return;
    }
    await this.tealeaf?.chat.open(turn.sessionId);
    this.go('chat');
    this.focusTurnId = turnId;
    // Keyboard and screen reader users land on the turn too, not on the page's body.
    void focusTurn(turnId);
  }
}
