// TEST DOUBLE of the browser's Prompt API (`globalThis.LanguageModel`), e2e builds only: installed
// by tests/support/e2e-main.ts when localStorage 'tealeaf-test-builtin' is 'downloadable' or
// 'available', so every other test sees a browser without it. The first create() of a
// 'downloadable' model reports download progress and then marks it 'available' (as a browser keeps
// its model). Streaming replies say "Built in: <message>"; structured calls answer like the
// scripted model (by schema title), so the memory pipeline runs end to end.
import type { ChatMessage, JsonSchema } from '../../src/ports';
import { ScriptedModel } from './scripted-model';

const KEY = 'tealeaf-test-builtin';
type Message = { role: 'system' | 'user' | 'assistant'; content: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function installFakePromptApi(): void {
  const state = localStorage.getItem(KEY);
  if (state !== 'downloadable' && state !== 'available') return;
  const calls: Array<{ kind: 'stream' | 'prompt'; input: string; system: string }> = [];
  (globalThis as { __builtinCalls?: typeof calls }).__builtinCalls = calls;
  const scripted = new ScriptedModel();

  class FakeSession {
    constructor(private readonly initial: Message[]) {}
    private messages(input: string): ChatMessage[] {
      return [...this.initial, { role: 'user', content: input }];
    }
    promptStreaming(input: string, options: { responseConstraint?: unknown } = {}): ReadableStream<string> {
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
      calls.push({ kind: 'stream', input, system: this.initial.find((m) => m.role === 'system')?.content ?? '' });
      const words = `Built in: ${input}`.match(/\S+\s*/g) ?? [];
      return new ReadableStream<string>({
        async pull(controller) {
          const w = words.shift();
          if (w === undefined) return controller.close();
          await sleep(10);
          controller.enqueue(w);
        },
      });
    }
    async prompt(input: string, options: { responseConstraint?: unknown } = {}): Promise<string> {
      calls.push({ kind: 'prompt', input, system: this.initial.find((m) => m.role === 'system')?.content ?? '' });
      return scripted.json(this.messages(input), (options.responseConstraint ?? {}) as JsonSchema);
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
      return new FakeSession(options.initialPrompts ?? []);
    },
  };
  (globalThis as { LanguageModel?: unknown }).LanguageModel = api;
}
