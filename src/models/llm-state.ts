// The load state both downloaded-model engines (web-llm on WebGPU, transformers.js on the CPU)
// report to the Models service: one holder with listeners, so the two runtimes report alike.
import type { LlmState } from './llm-runtime';

export abstract class LlmStateHolder {
  protected current: LlmState = { status: 'idle' };
  private readonly listeners = new Set<(s: LlmState) => void>();

  /** The loaded model's id, or "" when none is loaded. */
  get modelId(): string {
    return this.current.status === 'ready' ? this.current.modelId : '';
  }

  get state(): LlmState {
    return this.current;
  }

  /** Calls `listener` on every state change (progress included); returns an unsubscribe. */
  subscribe(listener: (s: LlmState) => void): () => void {
    this.listeners.add(listener);
    listener(this.current);
    return () => this.listeners.delete(listener);
  }

  protected setState(s: LlmState): void {
    this.current = s;
    for (const l of this.listeners) l(s);
  }

  /** No one hears of this runtime any more (it is disposed). */
  protected dropListeners(): void {
    this.listeners.clear();
  }
}
