import { describe, expect, it } from 'vitest';
import { ChatService } from '../../../src/services/chat/chat';
import { plainPreparer } from '../../../src/services/chat/reply-prompt';
import { InMemoryRepository } from '../../support/in-memory-repository';
import type { ChatMessage, GenerateOptions, LanguageModel } from '../../../src/ports';
import { StorageFullError, STORAGE_FULL_MESSAGE } from '../../../src/store/errors';

const H = 3600_000;

/** Streams `reply` word by word; can fail after some words or wait for an abort. */
class StreamingModel implements LanguageModel {
  readonly modelId = 'stream-test';
  /** Resolves once every word was streamed and the model waits for an abort (`hang`). */
  readonly hanging: Promise<void>;
  private hung!: () => void;
  constructor(
    private reply: string,
    private failAfter = Infinity,
    private hang = false,
  ) {
    this.hanging = new Promise((r) => (this.hung = r));
  }
  async chat(_m: ChatMessage[], o: GenerateOptions = {}): Promise<string> {
    let out = '';
    const words = this.reply.split(' ');
    for (let i = 0; i < words.length; i++) {
      if (i === this.failAfter) throw new Error('GPU device was lost');
      if (o.signal?.aborted) return out;
      const piece = (i ? ' ' : '') + words[i];
      out += piece;
      o.onToken?.(piece);
      await new Promise((r) => setTimeout(r, 1));
    }
    if (this.hang) {
      const aborted = new Promise<void>((r) => o.signal?.addEventListener('abort', () => r()));
      this.hung();
      await aborted;
    }
    return out;
  }
  async json(): Promise<string> {
    return '{}';
  }
}

function setup(model: LanguageModel | undefined, clock = { t: 10 * H }) {
  const repo = new InMemoryRepository();
  const errors: string[] = [];
  const chat = new ChatService({
    repo,
    preparer: plainPreparer,
    getModel: () => model,
    idleGapMs: () => H,
    now: () => clock.t,
    saveEveryMs: 0,
  });
  chat.on('error', ({ message }) => errors.push(message));
  return { repo, chat, errors, clock };
}

describe('ChatService', () => {
  it('saves the user turn and the streamed reply', async () => {
    const { repo, chat } = setup(new StreamingModel('hello there friend'));
    await chat.send('  hi  ');
    const [s] = await repo.listSessions();
    const turns = await repo.listTurns(s.id);
    expect(turns.map((t) => [t.index, t.role, t.text, t.status])).toEqual([
      [0, 'user', 'hi', 'complete'],
      [1, 'assistant', 'hello there friend', 'complete'],
    ]);
    expect(s.title).toBe('hi');
  });

  it('keeps the user message when no model is loaded, and says what to do', async () => {
    const { repo, chat, errors } = setup(undefined);
    await chat.send('remember this');
    const [s] = await repo.listSessions();
    expect((await repo.listTurns(s.id)).map((t) => t.text)).toEqual(['remember this']);
    expect(errors[0]).toMatch(/No language model is loaded/);
  });

  it('stop keeps what had arrived, marked stopped', async () => {
    const model = new StreamingModel('one two three', Infinity, true);
    const { repo, chat } = setup(model);
    const done = chat.send('go');
    // Stopped once every word has arrived (a stop before the reply began would stop nothing).
    await model.hanging;
    chat.stop();
    await done;
    const [s] = await repo.listSessions();
    const reply = (await repo.listTurns(s.id))[1];
    expect(reply).toMatchObject({ status: 'stopped', text: 'one two three' });
  });

  it('after stop the reply keeps what the user saw: tokens still in flight and the whole text are dropped', async () => {
    // A worker that had finished the whole reply before the stop reached it: its queued tokens
    // arrive after the abort, and the call resolves with the whole text.
    let abort: () => void = () => {};
    const late: LanguageModel = {
      modelId: 'late-test',
      async chat(_m, o: GenerateOptions = {}) {
        o.onToken?.('Once');
        o.onToken?.(' upon');
        abort();
        o.onToken?.(' a');
        o.onToken?.(' time');
        return 'Once upon a time';
      },
      json: async () => '{}',
    };
    const { repo, chat } = setup(late);
    abort = () => chat.stop();
    const seen: string[] = [];
    chat.on('turn', (t) => t.role === 'assistant' && seen.push(t.text));
    await chat.send('go');
    const [s] = await repo.listSessions();
    expect((await repo.listTurns(s.id))[1]).toMatchObject({ status: 'stopped', text: 'Once upon' });
    expect(seen.at(-1)).toBe('Once upon');
    expect(seen).not.toContain('Once upon a');
  });

  it('a failing model keeps the partial reply, marked error, and reports it', async () => {
    const { repo, chat, errors } = setup(new StreamingModel('a b c d e', 2));
    await chat.send('go');
    const [s] = await repo.listSessions();
    expect((await repo.listTurns(s.id))[1]).toMatchObject({ status: 'error', text: 'a b' });
    expect(errors[0]).toMatch(/device was lost/);
  });

  it('a reply streaming when the tab closed is marked interrupted at the next start', async () => {
    const { repo } = setup(undefined);
    await repo.apply({
      sessions: [{ id: 's', title: 't', startedAt: 10 * H, lastActivityAt: 10 * H, status: 'open' }],
      turns: [
        { id: 'u', sessionId: 's', index: 0, role: 'user', text: 'q', time: 10 * H, status: 'complete' },
        { id: 'a', sessionId: 's', index: 1, role: 'assistant', text: 'part', time: 10 * H, status: 'streaming' },
      ],
    });
    const chat2 = new ChatService({ repo, preparer: plainPreparer, getModel: () => undefined, idleGapMs: () => H, now: () => 10 * H + 5 });
    await chat2.start();
    expect((await repo.listTurns('s'))[1]).toMatchObject({ status: 'interrupted', text: 'part' });
    expect(chat2.current?.id).toBe('s');
  });

  it('after the idle gap a new message starts a new session and the old one is queued for memorising', async () => {
    const { repo, chat, clock } = setup(new StreamingModel('ok'));
    await chat.send('first');
    clock.t += H + 1;
    await chat.send('second');
    const sessions = (await repo.listSessions()).sort((a, b) => a.startedAt - b.startedAt);
    expect(sessions.map((s) => s.status)).toEqual(['ended', 'open']);
    expect(sessions[0].endReason).toBe('idle');
    const jobs = await repo.listJobs();
    expect(jobs.map((j) => [j.kind, j.sessionId, j.status])).toEqual([['memorise', sessions[0].id, 'pending']]);
  });

  it('regenerate replaces the last reply; end session queues one job; empty sessions vanish', async () => {
    const model = new StreamingModel('first answer');
    const { repo, chat } = setup(model);
    await chat.send('q');
    (model as unknown as { reply: string }).reply = 'second answer';
    await chat.regenerate();
    const [s] = await repo.listSessions();
    expect((await repo.listTurns(s.id)).map((t) => t.text)).toEqual(['q', 'second answer']);
    await chat.endCurrent();
    expect((await repo.getSession(s.id))?.status).toBe('ended');
    expect((await repo.listJobs()).length).toBe(1);
    await chat.newChat();
    expect((await repo.listSessions()).length).toBe(1);
  });
});

// A full disk is a state, not a crash.
describe('ChatService with a full disk', () => {
  function fullDiskSetup(model: LanguageModel | undefined, clock = { t: 10 * H }) {
    const disk = { full: false, fullAfter: Infinity };
    const repo = new InMemoryRepository({
      beforeApply: () => {
        if (disk.full || disk.fullAfter-- <= 0) throw new StorageFullError();
      },
    });
    const errors: string[] = [];
    const opts = { repo, preparer: plainPreparer, getModel: () => model, idleGapMs: () => H, now: () => clock.t, saveEveryMs: 0 };
    const chat = new ChatService(opts);
    chat.on('error', ({ message }) => errors.push(message));
    return { repo, chat, errors, clock, disk, opts };
  }

  it('start-up goes on when ending a chat past the idle gap is refused; the chat ends at a later start', async () => {
    const { repo, chat, clock, disk, opts } = fullDiskSetup(new StreamingModel('ok'));
    await chat.send('an open chat');
    const [s] = await repo.listSessions();
    clock.t += 2 * H; // past the idle gap
    disk.full = true;
    const later = new ChatService(opts);
    await expect(later.start()).resolves.toBeUndefined();
    expect((await repo.getSession(s.id))?.status).toBe('open'); // nothing half-written
    expect(await repo.listJobs()).toEqual([]);
    expect(later.current).toBeUndefined();
    disk.full = false;
    await new ChatService(opts).start();
    expect((await repo.getSession(s.id))?.status).toBe('ended');
    expect((await repo.listJobs()).map((j) => j.sessionId)).toEqual([s.id]);
  });

  it('a message that cannot be saved is refused with the storage message, and the chat is not left busy', async () => {
    const { repo, chat, disk } = fullDiskSetup(new StreamingModel('hello there'));
    disk.full = true;
    await expect(chat.send('do not lose me')).rejects.toThrow(STORAGE_FULL_MESSAGE);
    expect(repo.turns.size).toBe(0);
    expect(chat.busy).toBe(false);
    disk.full = false;
    await chat.send('do not lose me');
    expect([...repo.turns.values()].map((t) => t.text)).toEqual(['do not lose me', 'hello there']);
  });

  it('a full disk after the message was saved fails the reply, not the message, and the next message still goes', async () => {
    const { repo, chat, errors, disk } = fullDiskSetup(new StreamingModel('hello there'));
    disk.fullAfter = 1; // the user's turn lands, the reply's turn does not
    await expect(chat.send('saved first')).resolves.toBeUndefined();
    expect([...repo.turns.values()].map((t) => t.text)).toEqual(['saved first']);
    expect(errors.at(-1)).toBe(STORAGE_FULL_MESSAGE);
    expect(chat.busy).toBe(false);
    disk.fullAfter = Infinity;
    await chat.send('and again');
    expect([...repo.turns.values()].map((t) => t.text)).toEqual(['saved first', 'and again', 'hello there']);
  });
});
