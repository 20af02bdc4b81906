// The chat loop: every turn is saved the moment it exists, replies stream into the store, and a
// reply cut off (stop, error, closed tab) keeps what had arrived, marked so.
import { messageTooLong } from '../../memory/limits';
import { errorText } from '../../errors';
import type { ChangeSet } from '../../ports';
import type { Millis, Session, Turn } from '../../memory/types';
import { Emitter } from '../emitter';
import { newId } from '../ids';
import { isIdleExpired, renameSession, startUpChats, titleFrom, writeSessionEnd } from './session-rules';
import { addVersion, showVersion, type VersionChange } from './turn-versions';
import { ChatSearch, type SessionMatch } from './chat-search';
import { plainPreparer } from './reply-prompt';
import { appendTurn } from './turn-append';
import { FOLLOW_ON_NOTICE, followedTurns } from './follow-on';
import { ReplySaver, touchAfterReply } from './reply-saver';
import { replyErrorText, streamReply } from './reply-stream';
import { ChatOwner, NO_SYNC, newChatNotice } from '../sync/chat-owner';
import type { ChatEvents, ChatOptions } from './types';

export type { ChatEvents, ChatOptions } from './types';

export class ChatService extends Emitter<ChatEvents> {
  private abort?: AbortController;
  /** The reply being written, so a delete can wait for its last save. */
  private replying?: Promise<void>;
  private readonly searchIndex = new ChatSearch(async (id) => (await this.opts.repo.listTurns(id)).map((t) => t.text));
  private readonly now: () => Millis;
  readonly owner = new ChatOwner(() => this.opts.devices?.() ?? Promise.resolve(NO_SYNC));
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
        // Another tab wrote to a session, or sync did (no id; perhaps the chat shown, open on another
        // device): show it here too (unless this tab is mid-reply).
        if (e.data?.type !== 'session-changed' || this.busy) return;
        this.searchIndex.drop(e.data.sessionId);
        if (this.current && !this.temporary && [this.current.id, ''].includes(e.data.sessionId)) void this.open(this.current.id);
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
    await this.owner.load();
    const keep = await startUpChats(this.opts.repo, this.now(), this.opts.idleGapMs(), (s, r) => this.finish(s, r), this.owner.ours);
    if (keep) await this.open(keep.id);
    else await this.emitSessions();
  }

  /** Ends the open session once it has been idle for the gap (called periodically). */
  async checkIdle(): Promise<void> {
    const s = this.current;
    if (!s || this.busy || this.temporary || !this.owner.ours(s) || !isIdleExpired(s, this.now(), this.opts.idleGapMs())) return;
    await this.finish(s, 'idle');
    await this.open(s.id);
  }

  /** Turns by id (a memory's sources), in the order given. */
  getTurns(ids: string[]): Promise<Turn[]> {
    return this.opts.repo.getTurns(ids);
  }

  /** Re-reads sessions after background work changed them (e.g. memorised). */
  async refresh(): Promise<void> {
    const shown = this.current;
    if (shown && !this.temporary) {
      this.current = (await this.opts.repo.getSession(shown.id)) ?? shown;
      // Memory changed: notes built from a deleted or edited memory are gone from the store (the
      // reply being written stays as it is on screen until it is saved).
      const stored = await this.opts.repo.listTurns(shown.id);
      const writing = this.abort ? this.turns[this.turns.length - 1] : undefined;
      if (this.current?.id !== shown.id || stored.length !== this.turns.length) return this.emitSessions();
      this.turns = stored.map((t) => (t.id === writing?.id ? writing : t));
      this.emit('turns', { sessionId: shown.id, turns: this.turns });
    }
    await this.emitSessions();
  }

  async listSessions(): Promise<Session[]> {
    return (await this.opts.repo.listSessions()).sort((a, b) => b.lastActivityAt - a.lastActivityAt);
  }

  async open(sessionId: string): Promise<void> {
    const s = await this.opts.repo.getSession(sessionId);
    if (!s) {
      // Deleted (here or in another tab) while shown: show an empty chat instead.
      if (this.current?.id === sessionId) await this.forget(sessionId);
      return;
    }
    this.leaveTemporary();
    this.current = s;
    await this.owner.load();
    this.turns = await this.opts.repo.listTurns(sessionId);
    this.emit('turns', { sessionId, turns: this.turns });
    await this.emitSessions();
  }

  /** Ends the open session (it will be memorised) and shows an empty chat. */
  async newChat(): Promise<void> {
    if (this.busy) this.stop();
    if (this.current?.status === 'open' && !this.temporary && this.owner.ours(this.current)) await this.finish(this.current, 'new-chat');
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
    if (this.current?.status === 'open' && this.owner.ours(this.current)) await this.finish(this.current, 'button');
    if (this.current) await this.open(this.current.id);
  }

  /** Sends a user message and streams the reply. Resolves when the reply is done or cut off. */
  async send(text: string): Promise<void> {
    const clean = text.trim();
    if (messageTooLong(clean.length)) return this.emit('error', { message: messageTooLong(clean.length)! });
    if (!clean || this.busy) return;
    const now = this.now();
    let session = this.current;
    const place = this.owner.place(session, await this.owner.load());
    let follows: string | undefined;
    if (session && !this.temporary && (place.kind !== 'here' || isIdleExpired(session, now, this.opts.idleGapMs()))) {
      // An ended chat, or one open on another device, is never continued here: a new one starts,
      // which follows on from an ended one (its replies see the messages shown: follow-on.ts).
      if (place.kind === 'here') await this.finish(session, 'idle');
      follows = place.kind === 'elsewhere' ? undefined : session.id;
      session = undefined;
      this.emit('notice', { message: follows ? FOLLOW_ON_NOTICE : newChatNotice(place) });
    }
    if (!session) {
      const id = newId(this.temporary ? 'tmp' : 'ses');
      const tie = { ...this.owner.stamp(), ...(follows ? { follows } : {}) };
      session = { id, title: titleFrom(clean), startedAt: now, lastActivityAt: now, status: 'open', ...tie };
      this.turns = [];
    }
    const userTurn: Turn = { id: newId('turn'), sessionId: session.id, index: 0, role: 'user', text: clean, time: now, status: 'complete' };
    session = { ...session, lastActivityAt: now };
    const s = session;
    this.turns = await this.appendTurn(userTurn, this.turns.length > 0, (t) => ({ sessions: [s], turns: [t] }));
    this.current = session;
    this.searchIndex.drop(session.id);
    if (!this.temporary) this.broadcast(session.id);
    this.emit('turns', { sessionId: session.id, turns: this.turns });
    await this.emitSessions();
    // Saved: from here a failure is the reply's, reported, never thrown back (the composer keeps
    // the text only while it is not saved: ChatView).
    await this.answer(clean).catch((e: unknown) => this.emit('error', { message: errorText(e) }));
  }

  /** A memory command is answered from the store (src/services/commands/, answer stored), the rest by the model. */
  private async answer(text: string): Promise<void> {
    const turns = await this.opts.commands?.answer(text, this.turns, this.temporary);
    return turns ? this.applyVersions({ turns, put: [], deleteTurnIds: [] }) : this.reply();
  }

  /** The open session's turn with this id and its position, when it may get a new version. */
  private editable(turnId: string, role: Turn['role']): number {
    if (this.busy || this.current?.status !== 'open' || !this.owner.ours(this.current)) return -1;
    const i = this.turns.findIndex((t) => t.id === turnId);
    return this.turns[i]?.role === role ? i : -1;
  }

  /** Writes a version change and shows it. */
  private async applyVersions(change: VersionChange): Promise<void> {
    const session = this.current!;
    await this.write({ turns: change.put, deleteTurns: change.deleteTurnIds });
    this.turns = change.turns;
    this.searchIndex.drop(session.id);
    this.emit('turns', { sessionId: session.id, turns: this.turns });
    if (!this.temporary) this.broadcast(session.id);
  }

  /**
   * Writes a new version of a reply (the last one by default); the earlier versions stay to flip
   * through, with the turns that had followed them.
   */
  async regenerate(turnId?: string): Promise<void> {
    const id = turnId ?? this.turns.at(-1)?.id ?? '';
    const i = this.editable(id, 'assistant');
    const llm = this.opts.getModel();
    if (i < 0) return;
    if (!llm) {
      this.emit('error', { message: 'No language model is loaded. Open Models to download or load one.' });
      return;
    }
    const change = addVersion(this.turns, i, { text: '', time: this.now(), status: 'streaming', modelId: llm.modelId });
    await this.applyVersions(change);
    await this.reply(change.turns[i]);
  }

  /** Edits a message of the open chat as a new version of it and answers it again. */
  async editAndResend(turnId: string, text: string): Promise<void> {
    const clean = text.trim();
    if (messageTooLong(clean.length)) return this.emit('error', { message: messageTooLong(clean.length)! });
    const i = this.editable(turnId, 'user');
    if (!clean || i < 0 || clean === this.turns[i].text) return;
    await this.applyVersions(addVersion(this.turns, i, { text: clean, time: this.now(), status: 'complete' }));
    await this.reply();
  }

  /** Shows another version of a turn of the open chat (with the turns that followed it). */
  async showVersion(turnId: string, version: number): Promise<void> {
    if (this.busy || this.current?.status !== 'open' || !this.owner.ours(this.current)) return;
    const i = this.turns.findIndex((t) => t.id === turnId);
    if (i < 0) return;
    const change = showVersion(this.turns, i, version);
    if (change.put.length > 0) await this.applyVersions(change);
  }

  /** Renames a chat (here and in other tabs). */
  async rename(sessionId: string, title: string): Promise<void> {
    const renamed = await renameSession(this.opts.repo, sessionId, title);
    if (!renamed) return;
    if (this.current?.id === sessionId) this.current = { ...this.current, title: renamed.title };
    this.searchIndex.drop(sessionId);
    this.broadcast(sessionId);
    await this.emitSessions();
  }

  /**
   * Chats whose title or shown messages contain every word of the query, newest first, each with
   * where it matched. Turns are read once per session and kept until the session changes.
   */
  async search(query: string): Promise<SessionMatch[]> {
    return this.searchIndex.find(await this.listSessions(), query);
  }

  /**
   * Makes a session safe to delete from this tab: its reply (if any) is stopped and its last save
   * has landed, so nothing writes to it afterwards.
   */
  async release(sessionId: string): Promise<void> {
    if (this.current?.id !== sessionId) return;
    this.stop();
    await this.replying?.catch(() => undefined);
  }

  /** A session was deleted: stop showing it. */
  async forget(sessionId: string): Promise<void> {
    this.searchIndex.drop(sessionId);
    if (this.current?.id === sessionId) {
      this.current = undefined;
      this.turns = [];
      this.emit('turns', { sessionId: '', turns: [] });
    }
    this.broadcast(sessionId);
    await this.emitSessions();
  }

  /** Adds a turn at the end of its session (in this object only for a temporary chat). */
  private async appendTurn(turn: Turn, existing: boolean, change: (t: Turn) => ChangeSet): Promise<Turn[]> {
    if (!this.temporary) return appendTurn(this.opts.repo, turn, existing, change);
    const turns = existing ? this.turns : [];
    return [...turns, { ...turn, index: turns.length }];
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

  /** Streams a reply into a new turn at the end, or into `target` (a new version, already stored). */
  private reply(target?: Turn): Promise<void> {
    return (this.replying = this.replyOnce(target));
  }

  private async replyOnce(target?: Turn): Promise<void> {
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
    let turn: Turn;
    if (target) {
      turn = target;
    } else {
      turn = {
        id: newId('turn'),
        sessionId: session.id,
        index: this.turns.length,
        role: 'assistant',
        text: '',
        time: started,
        status: 'streaming',
        modelId: llm.modelId,
      };
      try {
        this.turns = await this.appendTurn(turn, true, (t) => ({ turns: [t] }));
      } catch (e) {
        // Not saved (e.g. a full disk): no reply is under way, so the chat is not left busy.
        this.abort = undefined;
        throw e;
      }
      turn = this.turns[this.turns.length - 1];
      this.emit('turns', { sessionId: session.id, turns: this.turns });
    }

    const saver = new ReplySaver({
      repo: temporary ? undefined : this.opts.repo,
      now: this.now,
      everyMs: this.opts.saveEveryMs ?? 250,
      onError: (message) => this.emit('error', { message }),
    });
    const update = (t: Turn) => {
      turn = t;
      this.turns = this.turns.map((x) => (x.id === t.id ? t : x));
      this.emit('turn', t);
    };

    try {
      this.emit('busy', { phase: 'remembering' });
      const history = this.turns.filter((t) => t.index < turn.index);
      const earlier = temporary ? [] : await followedTurns(this.opts.repo, session);
      // A temporary chat neither uses nor makes memories: nothing remembered goes into its prompt.
      const preparer = temporary ? (this.opts.memoryless ?? plainPreparer) : this.opts.preparer;
      const reply = await streamReply({
        llm,
        preparer,
        prepare: { session, history, earlier, now: started },
        signal: abort.signal,
        temperature: this.opts.temperature?.(),
        now: this.now,
        phase: (phase) => this.emit('busy', { phase }),
        usedMemory: (usedMemory) => update({ ...turn, usedMemory }),
        grew: (text) => {
          update({ ...turn, text });
          saver.grew(turn);
        },
      });
      // Stopped: what had arrived, not the whole text a call that finished anyway resolves with.
      const stopped = abort.signal.aborted;
      const text = stopped ? reply.text : reply.full || reply.text;
      update({ ...turn, text, status: stopped ? 'stopped' : 'complete', ...(reply.start ? { start: reply.start } : {}) });
      this.emit('cut', { turnId: turn.id, cut: Boolean(reply.cut) && !stopped });
    } catch (e) {
      const stopped = abort.signal.aborted;
      update({ ...turn, status: stopped ? 'stopped' : 'error' });
      this.emit('cut', { turnId: turn.id, cut: false });
      if (!stopped) this.emit('error', { message: replyErrorText(e), turnId: turn.id });
    } finally {
      this.abort = undefined;
      await saver.last(turn);
      // As stored now: a rename during the reply stays, and a deleted chat is not brought back.
      let deletedElsewhere = false;
      if (!temporary) {
        const after = await touchAfterReply(this.opts.repo, turn.id, session.id, this.now(), (message) => this.emit('error', { message }));
        if (after.saved && this.turns.some((t) => t.id === turn.id)) update(after.saved);
        if (after.session && this.current?.id === session.id) this.current = after.session;
        deletedElsewhere = !after.session && this.current?.id === session.id;
      } else if (this.temporary && this.current?.id === session.id) this.current = { ...session, lastActivityAt: this.now() };
      this.searchIndex.drop(session.id);
      this.emit('busy', { phase: 'idle' });
      await this.emitSessions();
      if (!temporary) this.broadcast(session.id);
      // Another tab deleted this chat mid-reply: stop showing it, or the next message would
      // bring it back.
      if (deletedElsewhere) {
        await this.forget(session.id);
        this.emit('notice', { message: 'This chat was deleted in another tab.' });
      }
    }
  }

  /** Ends a session and queues its memorising job in the same transaction; empty ones vanish. */
  private async finish(session: Session, reason: NonNullable<Session['endReason']>): Promise<void> {
    const written = await writeSessionEnd(this.opts.repo, session, reason, this.now(), this.opts.memorise?.() !== false);
    if (this.current?.id === session.id) this.current = written.kept ? written.ended : undefined;
    if (!written.kept) return;
    if (written.job) this.emit('ended', { session: written.ended, job: written.job });
    this.broadcast(session.id);
  }

  private async emitSessions(): Promise<void> {
    this.emit('sessions', await this.listSessions());
  }
}
