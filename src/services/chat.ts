// The chat loop: every turn is saved the moment it exists, replies stream into the store, and a
// reply cut off (stop, error, closed tab) keeps what had arrived, marked so.
import { clampText } from '../memory/limits';
import { errorText } from '../errors';
import type { ChangeSet, ChatMessage, LanguageModel, Repository } from '../ports';
import type { Job, Millis, Session, Turn, UsedMemory } from '../memory/types';
import { createMemoriseJob } from '../memory/ingest/memorise';
import { Emitter } from './emitter';
import { newId } from './ids';
import { endSession, isEmptySession, isIdleExpired, sessionsToEnd, titleFrom } from './session-rules';

export interface PreparedTurn {
  messages: ChatMessage[];
  usedMemory?: UsedMemory;
}

/** Builds the prompt for a reply: the memory method plugs in here (retrieval, timelines). */
export interface TurnPreparer {
  prepare(input: { session: Session; history: Turn[]; now: Millis; llm: LanguageModel; signal: AbortSignal }): Promise<PreparedTurn>;
}

export type ChatEvents = {
  sessions: Session[];
  turns: { sessionId: string; turns: Turn[] };
  /** One streaming reply changed (cheap, frequent). */
  turn: Turn;
  busy: { phase: 'idle' | 'remembering' | 'replying' };
  error: { message: string };
  /** A session ended and a memorising job was queued. */
  ended: { session: Session; job: Job };
  /** The chat shown is temporary (kept in this page only) or not. */
  temporary: boolean;
};

export interface ChatOptions {
  repo: Repository;
  preparer: TurnPreparer;
  getModel: () => LanguageModel | undefined;
  idleGapMs: () => Millis;
  now?: () => Millis;
  /** How often a streaming reply is written to the store (a closed tab loses at most this much). */
  saveEveryMs?: number;
  /** Whether an ended session is queued for memorising (the memory-creation switch); default yes. */
  memorise?: () => boolean;
}

const HISTORY_TURNS = 12;

export function defaultSystemPrompt(now: Millis): string {
  return [
    'You are Tealeaf, a warm, concise personal companion. You run entirely on the user\'s own device;',
    'nothing they say leaves it. Answer in plain, friendly language; use markdown only when it helps.',
    `Today is ${new Date(now).toDateString()}.`,
  ].join(' ');
}

/** Recent dialogue as chat messages (interrupted replies included: they are what the user saw). */
export function historyMessages(turns: Turn[]): ChatMessage[] {
  return turns
    .filter((t) => t.text.trim().length > 0)
    .slice(-HISTORY_TURNS)
    .map((t) => ({ role: t.role, content: t.text }));
}

export const plainPreparer: TurnPreparer = {
  async prepare({ history, now }) {
    return { messages: [{ role: 'system', content: defaultSystemPrompt(now) }, ...historyMessages(history)] };
  },
};

export class ChatService extends Emitter<ChatEvents> {
  private abort?: AbortController;
  private readonly now: () => Millis;
  current?: Session;
  turns: Turn[] = [];
  /**
   * A temporary chat: its session and turns live in this object only. Nothing of it is written to
   * the store, so it is neither remembered nor kept after it is closed.
   */
  temporary = false;

  private readonly channel?: BroadcastChannel;

  constructor(private readonly opts: ChatOptions) {
    super();
    this.now = opts.now ?? Date.now;
    if (typeof BroadcastChannel !== 'undefined') {
      this.channel = new BroadcastChannel('tealeaf-chat');
      this.channel.onmessage = (e: MessageEvent<{ type: string; sessionId: string }>) => {
        // Another tab wrote to a session: show it here too (unless this tab is mid-reply).
        if (e.data?.type !== 'session-changed' || this.busy) return;
        if (this.current?.id === e.data.sessionId) void this.open(e.data.sessionId);
        else void this.emitSessions();
      };
    }
  }

  get busy(): boolean {
    return this.abort !== undefined;
  }

  /**
   * At start-up: replies that were streaming when the tab closed become "interrupted"; sessions
   * past the idle gap end (and are queued for memorising); the latest open session is resumed.
   */
  async start(): Promise<void> {
    const sessions = await this.opts.repo.listSessions();
    const open = sessions.filter((s) => s.status === 'open').sort((a, b) => b.lastActivityAt - a.lastActivityAt);
    const keep = open.find((s) => !isIdleExpired(s, this.now(), this.opts.idleGapMs()));
    for (const { session, reason } of sessionsToEnd(open, this.now(), this.opts.idleGapMs(), keep?.id ?? '')) {
      await this.finish(session, reason);
    }
    // A reply can only have been streaming in one of the latest sessions: look there only.
    const recent = [...sessions].sort((a, b) => b.lastActivityAt - a.lastActivityAt).slice(0, 3);
    for (const s of recent) {
      const turns = await this.opts.repo.listTurns(s.id);
      const cut = turns.filter((t) => t.status === 'streaming').map((t) => ({ ...t, status: 'interrupted' as const }));
      if (cut.length) await this.opts.repo.apply({ turns: cut });
    }
    if (keep) await this.open(keep.id);
    else await this.emitSessions();
  }

  /** Ends the open session once it has been idle for the gap (called periodically). */
  async checkIdle(): Promise<void> {
    const s = this.current;
    if (!s || this.busy || this.temporary || !isIdleExpired(s, this.now(), this.opts.idleGapMs())) return;
    await this.finish(s, 'idle');
    await this.open(s.id);
  }

  /** Turns by id (a memory's sources), in the order given. */
  getTurns(ids: string[]): Promise<Turn[]> {
    return this.opts.repo.getTurns(ids);
  }

  /** Re-reads sessions after background work changed them (e.g. memorised). */
  async refresh(): Promise<void> {
    if (this.current) this.current = (await this.opts.repo.getSession(this.current.id)) ?? this.current;
    await this.emitSessions();
  }

  async listSessions(): Promise<Session[]> {
    const all = await this.opts.repo.listSessions();
    return all.sort((a, b) => b.lastActivityAt - a.lastActivityAt);
  }

  async open(sessionId: string): Promise<void> {
    const s = await this.opts.repo.getSession(sessionId);
    if (!s) return;
    this.leaveTemporary();
    this.current = s;
    this.turns = await this.opts.repo.listTurns(sessionId);
    this.emit('turns', { sessionId, turns: this.turns });
    await this.emitSessions();
  }

  /** Ends the open session (it will be memorised) and shows an empty chat. */
  async newChat(): Promise<void> {
    if (this.busy) this.stop();
    if (this.current?.status === 'open' && !this.temporary) await this.finish(this.current, 'new-chat');
    this.leaveTemporary();
    this.current = undefined;
    this.turns = [];
    this.emit('turns', { sessionId: '', turns: [] });
    await this.emitSessions();
  }

  /** Starts a temporary chat: the open session ends as with a new chat; nothing of this one is stored. */
  async startTemporary(): Promise<void> {
    await this.newChat();
    this.temporary = true;
    this.emit('temporary', true);
  }

  /** A temporary chat is dropped (never stored) when another chat is shown. */
  private leaveTemporary(): void {
    if (!this.temporary) return;
    this.stop();
    this.temporary = false;
    this.emit('temporary', false);
  }

  async endCurrent(): Promise<void> {
    if (this.temporary) return this.newChat();
    if (this.busy) this.stop();
    if (this.current?.status === 'open') await this.finish(this.current, 'button');
    if (this.current) await this.open(this.current.id);
  }

  /** Sends a user message and streams the reply. Resolves when the reply is done or cut off. */
  async send(text: string): Promise<void> {
    // A message longer than a record may hold is cut with a note, never refused or lost.
    const clean = clampText(text.trim());
    if (!clean || this.busy) return;
    const now = this.now();
    let session = this.current;
    if (session && !this.temporary && (session.status !== 'open' || isIdleExpired(session, now, this.opts.idleGapMs()))) {
      if (session.status === 'open') await this.finish(session, 'idle');
      session = undefined;
    }
    if (!session) {
      session = { id: newId(this.temporary ? 'tmp' : 'ses'), title: titleFrom(clean), startedAt: now, lastActivityAt: now, status: 'open' };
      this.turns = [];
    }
    const userTurn: Turn = { id: newId('turn'), sessionId: session.id, index: 0, role: 'user', text: clean, time: now, status: 'complete' };
    session = { ...session, lastActivityAt: now };
    const s = session;
    this.turns = await this.appendTurn(userTurn, this.turns.length > 0, (t) => ({ sessions: [s], turns: [t] }));
    this.current = session;
    if (!this.temporary) this.broadcast(session.id);
    this.emit('turns', { sessionId: session.id, turns: this.turns });
    await this.emitSessions();
    await this.reply();
  }

  /** Replaces the last reply with a new one. */
  async regenerate(): Promise<void> {
    if (this.busy || !this.current) return;
    const last = this.turns.at(-1);
    if (!last || last.role !== 'assistant') return;
    this.turns = this.turns.slice(0, -1);
    await this.write({ deleteTurns: [last.id] });
    this.emit('turns', { sessionId: this.current.id, turns: this.turns });
    await this.reply();
  }

  /**
   * Adds a turn at the end of its session. Another tab may have written to the same session, so
   * the index comes from the store, and a clash at an index (unique in the store) is retried.
   */
  private async appendTurn(turn: Turn, existing: boolean, change: (t: Turn) => ChangeSet): Promise<Turn[]> {
    if (this.temporary) {
      const turns = existing ? this.turns : [];
      return [...turns, { ...turn, index: turns.length }];
    }
    for (let attempt = 0; ; attempt++) {
      const turns = existing ? await this.opts.repo.listTurns(turn.sessionId) : [];
      const t = { ...turn, index: turns.length };
      try {
        await this.opts.repo.apply(change(t));
        return [...turns, t];
      } catch (e) {
        if (attempt >= 3 || !isConstraintError(e)) throw e;
        existing = true;
      }
    }
  }

  /** Writes a change of the chat shown, unless it is temporary (then nothing is stored). */
  private async write(change: ChangeSet): Promise<void> {
    if (!this.temporary) await this.opts.repo.apply(change);
  }

  /** Tells other tabs that a session changed, so they can show it. */
  private broadcast(sessionId: string): void {
    this.channel?.postMessage({ type: 'session-changed', sessionId });
  }

  stop(): void {
    this.abort?.abort();
  }

  private async reply(): Promise<void> {
    const session = this.current;
    const llm = this.opts.getModel();
    if (!session) return;
    if (!llm) {
      this.emit('error', { message: 'No language model is loaded. Open Models to download or load one; your message is saved.' });
      return;
    }
    const abort = (this.abort = new AbortController());
    // Fixed for the whole reply: a temporary chat left mid-reply still writes nothing.
    const temporary = this.temporary;
    const started = this.now();
    let turn: Turn = {
      id: newId('turn'), sessionId: session.id, index: this.turns.length, role: 'assistant', text: '',
      time: started, status: 'streaming', modelId: llm.modelId,
    };
    this.turns = await this.appendTurn(turn, true, (t) => ({ turns: [t] }));
    turn = this.turns[this.turns.length - 1];
    this.emit('turns', { sessionId: session.id, turns: this.turns });

    let lastSave = started;
    let saving: Promise<void> = Promise.resolve();
    const save = (t: Turn) => {
      if (temporary) return saving;
      saving = saving.then(async () => void (await this.opts.repo.apply({ turns: [{ ...t, text: clampText(t.text) }] }))).catch((e: unknown) => {
        this.emit('error', { message: `Could not save the reply: ${errorText(e)}` });
      });
      return saving;
    };
    const update = (t: Turn) => {
      turn = t;
      this.turns = this.turns.map((x) => (x.id === t.id ? t : x));
      this.emit('turn', t);
    };

    try {
      this.emit('busy', { phase: 'remembering' });
      const history = this.turns.filter((t) => t.id !== turn.id);
      const prepared = await this.opts.preparer.prepare({ session, history, now: started, llm, signal: abort.signal });
      if (prepared.usedMemory) update({ ...turn, usedMemory: prepared.usedMemory });
      this.emit('busy', { phase: 'replying' });
      let text = '';
      const full = await llm.chat(prepared.messages, {
        signal: abort.signal,
        onToken: (delta) => {
          text += delta;
          update({ ...turn, text });
          if (this.now() - lastSave >= (this.opts.saveEveryMs ?? 250)) {
            lastSave = this.now();
            void save(turn);
          }
        },
      });
      update({ ...turn, text: full || text, status: abort.signal.aborted ? 'stopped' : 'complete' });
    } catch (e) {
      const stopped = abort.signal.aborted;
      update({ ...turn, status: stopped ? 'stopped' : 'error' });
      if (!stopped) this.emit('error', { message: errorText(e) });
    } finally {
      this.abort = undefined;
      await save(turn);
      const s = { ...session, lastActivityAt: this.now() };
      if (!temporary) {
        this.current = s;
        await this.opts.repo.apply({ sessions: [s] });
      } else if (this.temporary && this.current?.id === s.id) this.current = s;
      this.emit('busy', { phase: 'idle' });
      await this.emitSessions();
      if (!temporary) this.broadcast(session.id);
    }
  }

  /** Ends a session and queues its memorising job in the same transaction; empty ones vanish. */
  private async finish(session: Session, reason: NonNullable<Session['endReason']>): Promise<void> {
    const turns = await this.opts.repo.listTurns(session.id);
    if (isEmptySession(turns)) {
      await this.opts.repo.apply({ deleteSessions: [session.id], deleteTurns: turns.map((t) => t.id) });
      if (this.current?.id === session.id) this.current = undefined;
      return;
    }
    const ended = endSession(session, reason);
    const now = this.now();
    // Memory creation off: the session ends and is kept, but no memorising job is queued for it.
    if (this.opts.memorise?.() === false) {
      await this.opts.repo.apply({ sessions: [ended] });
      if (this.current?.id === session.id) this.current = ended;
      this.broadcast(session.id);
      return;
    }
    const job: Job = createMemoriseJob(session.id, now);
    await this.opts.repo.apply({ sessions: [ended], jobs: [job] });
    if (this.current?.id === session.id) this.current = ended;
    this.emit('ended', { session: ended, job });
    this.broadcast(session.id);
  }

  private async emitSessions(): Promise<void> {
    this.emit('sessions', await this.listSessions());
  }
}

function isConstraintError(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; x && depth < 4; depth++) {
    if ((x as { name?: unknown }).name === 'ConstraintError') return true;
    x = (x as { cause?: unknown }).cause;
  }
  return false;
}

