// Background model calls wait for the chat to pause on an engine that keeps one conversation only
// (web-llm), so memorising between two messages does not cost the next reply a full read.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CHAT_PAUSE_MS, ConversationFirst } from '../../../src/services/models/conversation-first';
import type { ChatMessage, GenerateOptions, JsonSchema, LanguageModel } from '../../../src/ports';

/** An engine that records the order of the requests it serves; replies end when told to. */
class Engine implements LanguageModel {
  readonly modelId = 'engine';
  readonly log: string[] = [];
  private release?: () => void;
  constructor(readonly keepsConversation: boolean) {}
  async chat(messages: ChatMessage[], _options?: GenerateOptions): Promise<string> {
    this.log.push(`chat:${messages.at(-1)?.content}`);
    await new Promise<void>((r) => (this.release = r));
    return 'reply';
  }
  async json(messages: ChatMessage[], _schema: JsonSchema, _options?: GenerateOptions): Promise<string> {
    this.log.push(`json:${messages.at(-1)?.content}`);
    return '{}';
  }
  finishReply(): void {
    this.release?.();
  }
}

const user = (content: string): ChatMessage[] => [{ role: 'user', content }];
const SCHEMA: JsonSchema = { type: 'object' };

describe('ConversationFirst', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('holds a background call while a reply is under way and for the pause after it, then runs it', async () => {
    const engine = new Engine(true);
    const turns = new ConversationFirst({ now: () => Date.now() });
    const reply = turns.foreground(engine)!.chat(user('hello'));
    const job = turns.background(engine)!.json(user('summarise'), SCHEMA);
    let done = false;
    void job.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(CHAT_PAUSE_MS * 2);
    expect(engine.log).toEqual(['chat:hello']);
    engine.finishReply();
    await reply;
    await vi.advanceTimersByTimeAsync(CHAT_PAUSE_MS - 1_000);
    expect(done).toBe(false);
    // The person answers within the pause: the job waits for the pause after that reply too.
    const second = turns.foreground(engine)!.chat(user('and then?'));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(engine.log).toEqual(['chat:hello', 'chat:and then?']);
    engine.finishReply();
    await second;
    await vi.advanceTimersByTimeAsync(CHAT_PAUSE_MS);
    await job;
    expect(engine.log).toEqual(['chat:hello', 'chat:and then?', 'json:summarise']);
  });

  it('runs background calls at once when no chat has replied, and never holds a reply', async () => {
    const engine = new Engine(true);
    const turns = new ConversationFirst({ now: () => Date.now() });
    await turns.background(engine)!.json(user('label'), SCHEMA);
    expect(engine.log).toEqual(['json:label']);
    expect(turns.isPaused).toBe(true);
  });

  it('does not hold back engines that keep a prefix per request or nothing', async () => {
    const server = new Engine(false);
    const turns = new ConversationFirst({ now: () => Date.now() });
    const reply = turns.foreground(server)!.chat(user('hi'));
    expect(turns.background(server)).toBe(server);
    await server.json(user('summarise'), SCHEMA);
    expect(server.log).toEqual(['chat:hi', 'json:summarise']);
    server.finishReply();
    await reply;
  });

  it('a waiting call stops when its job is stopped', async () => {
    const engine = new Engine(true);
    const turns = new ConversationFirst({ now: () => Date.now() });
    const reply = turns.foreground(engine)!.chat(user('hi'));
    const stop = new AbortController();
    const job = turns.background(engine)!.json(user('summarise'), SCHEMA, { signal: stop.signal });
    stop.abort(new DOMException('stopped', 'AbortError'));
    await expect(job).rejects.toThrow('stopped');
    expect(engine.log).toEqual(['chat:hi']);
    engine.finishReply();
    await reply;
  });

  it('gives the same wrapper for the same model (the job runner compares models), reading its window live', () => {
    const engine = new Engine(true);
    const turns = new ConversationFirst();
    expect(turns.background(engine)).toBe(turns.background(engine));
    expect(turns.foreground(engine)).toBe(turns.foreground(engine));
    expect(turns.background(engine)!.modelId).toBe('engine');
    expect(turns.background(engine)!.keepsConversation).toBe(true);
    expect(turns.background(undefined)).toBeUndefined();
  });
  it('says what it holds back and until when, so the app can say why memorising waits', async () => {
    const engine = new Engine(true);
    const turns = new ConversationFirst({ now: () => Date.now() });
    const seen: Array<{ waiting: number; until?: number }> = [];
    turns.on('hold', (h) => seen.push(h));
    expect(turns.hold).toEqual({ waiting: 0 });
    const reply = turns.foreground(engine)!.chat(user('hello'));
    const job = turns.background(engine)!.json(user('summarise'), SCHEMA);
    await vi.advanceTimersByTimeAsync(10);
    // Held while the reply is under way: no time yet.
    expect(turns.hold).toEqual({ waiting: 1, until: undefined });
    engine.finishReply();
    await reply;
    const ended = Date.now();
    expect(turns.hold).toEqual({ waiting: 1, until: ended + CHAT_PAUSE_MS });
    await vi.advanceTimersByTimeAsync(CHAT_PAUSE_MS);
    await job;
    expect(turns.hold).toEqual({ waiting: 0 });
    expect(seen).toEqual([{ waiting: 1, until: undefined }, { waiting: 1, until: ended + CHAT_PAUSE_MS }, { waiting: 0 }]);
  });

  it('holds nothing where the chat has paused or the engine keeps a prefix per request', async () => {
    const turns = new ConversationFirst({ now: () => Date.now() });
    const seen: unknown[] = [];
    turns.on('hold', (h) => seen.push(h));
    await turns.background(new Engine(true))!.json(user('a'), SCHEMA);
    const server = new Engine(false);
    const reply = turns.foreground(server)!.chat(user('hello'));
    await turns.background(server)!.json(user('b'), SCHEMA);
    server.finishReply();
    await reply;
    expect(seen).toEqual([]);
  });
});
