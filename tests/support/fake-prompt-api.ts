// TEST DOUBLE of the browser's Prompt API (`globalThis.LanguageModel`), e2e builds only: installed
// by tests/support/e2e-main.ts when localStorage 'tealeaf-test-builtin' is 'downloadable' or
// 'available', so every other test sees a browser without it. The first create() of a
// 'downloadable' model reports download progress and then marks it 'available' (as a browser keeps
// its model). Streaming replies say "Built in: <message>"; structured calls answer like the
// scripted model (by schema title), so the memory pipeline runs end to end. Like the real API it
// has a window (contextWindow, contextUsage, measureContextUsage; a word or a mark is a token here)
// and refuses what passes it with a QuotaExceededError; a session holds what it was prompted and
// what it answered (its usage grows), and each call logs how much the session held already.
import type { ChatMessage, JsonSchema } from '../../src/ports';
import { ScriptedModel } from './scripted-model';

const KEY = 'tealeaf-test-builtin';
type Message = { role: 'system' | 'user' | 'assistant'; content: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Gemini Nano's window in Chrome's first Prompt API (inputQuota), the smallest it has had. */
const WINDOW = 6144;
/** The fake's token count: a word or a punctuation mark is a token, a message costs 4 more. */
const tokens = (messages: Message[]) => messages.reduce((n, m) => n + 4 + (m.content.match(/\w+|[^\w\s]/g) ?? []).length, 0);
const tooLarge = (requested: number) =>
  Object.assign(new DOMException('The input is too large.', 'QuotaExceededError'), { requested, quota: WINDOW });

export function installFakePromptApi(): void {
  const state = localStorage.getItem(KEY);
  if (state !== 'downloadable' && state !== 'available') return;
  const calls: Array<{ kind: 'stream' | 'prompt'; session: number; input: string; system: string; held: number }> = [];
  let sessions = 0;
  (globalThis as { __builtinCalls?: typeof calls }).__builtinCalls = calls;
  const scripted = new ScriptedModel();

  class FakeSession {
    readonly contextWindow = WINDOW;
    private readonly held: Message[];
    private readonly id = ++sessions;
    constructor(private readonly initial: Message[]) {
      this.held = [...initial];
    }
    get contextUsage(): number {
      return tokens(this.held);
    }
    async measureContextUsage(input: string | Message[]): Promise<number> {
      return tokens(typeof input === 'string' ? [{ role: 'user', content: input }] : input);
    }
    private fits(input: string): void {
      const n = this.contextUsage + tokens([{ role: 'user', content: input }]);
      if (n > WINDOW) throw tooLarge(n);
    }
    private messages(input: string): ChatMessage[] {
      return [...this.held, { role: 'user', content: input }];
    }
    promptStreaming(input: string, options: { responseConstraint?: unknown } = {}): ReadableStream<string> {
      try {
        this.fits(input);
      } catch (e) {
        return new ReadableStream<string>({ start: (c) => c.error(e) });
      }
      // A structured call (the app streams those too) answers like prompt() below, in pieces.
      if (options.responseConstraint !== undefined) {
        let pending: string[] | undefined;
        return new ReadableStream<string>({
          pull: async (controller) => {
            pending ??= (await this.prompt(input, options)).match(/[\s\S]{1,16}/g) ?? [];
            const piece = pending.shift();
            if (piece === undefined) controller.close();
            else controller.enqueue(piece);
          },
        });
      }
      calls.push({
        kind: 'stream',
        session: this.id,
        input,
        system: this.initial.find((m) => m.role === 'system')?.content ?? '',
        held: this.contextUsage,
      });
      const answer = `Built in: ${input}`;
      const words = answer.match(/\S+\s*/g) ?? [];
      const held = this.held;
      return new ReadableStream<string>({
        async pull(controller) {
          const w = words.shift();
          if (w === undefined) {
            held.push({ role: 'user', content: input }, { role: 'assistant', content: answer });
            return controller.close();
          }
          await sleep(10);
          controller.enqueue(w);
        },
      });
    }
    async prompt(input: string, options: { responseConstraint?: unknown } = {}): Promise<string> {
      this.fits(input);
      calls.push({
        kind: 'prompt',
        session: this.id,
        input,
        system: this.initial.find((m) => m.role === 'system')?.content ?? '',
        held: this.contextUsage,
      });
      const answer = await scripted.json(this.messages(input), (options.responseConstraint ?? {}) as JsonSchema);
      this.held.push({ role: 'user', content: input }, { role: 'assistant', content: answer });
      return answer;
    }
    destroy(): void {}
  }

  const api = {
    async availability(): Promise<string> {
      return localStorage.getItem(KEY) ?? 'unavailable';
    },
    async create(options: { initialPrompts?: Message[]; monitor?: (m: EventTarget) => void } = {}): Promise<FakeSession> {
      const monitor = new EventTarget();
      options.monitor?.(monitor);
      if (localStorage.getItem(KEY) === 'downloadable') {
        for (const loaded of [0, 0.4, 0.8, 1]) {
          await sleep(150);
          monitor.dispatchEvent(Object.assign(new Event('downloadprogress'), { loaded }));
        }
        localStorage.setItem(KEY, 'available');
      }
      const initial = options.initialPrompts ?? [];
      if (tokens(initial) > WINDOW) throw tooLarge(tokens(initial));
      return new FakeSession(initial);
    },
  };
  (globalThis as { LanguageModel?: unknown }).LanguageModel = api;
}
