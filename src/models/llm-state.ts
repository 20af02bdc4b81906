// The load state both downloaded-model engines (web-llm on WebGPU, transformers.js on the CPU)
// report to the Models service, and cancelling a load: one holder, so the two runtimes act alike.
import type { ClassifiedError } from './errors';
import type { ModelProgress } from './progress';

export type LlmState =
  | { status: 'idle' }
  | { status: 'loading'; modelId: string; progress?: ModelProgress }
  | { status: 'ready'; modelId: string }
  /** The last load or generation failed; a new load() starts from a fresh worker. */
  | { status: 'error'; modelId?: string; error: ClassifiedError };

export abstract class LlmStateHolder {
  protected current: LlmState = { status: 'idle' };
  /** Counts loads: a load that finds it moved on was cancelled or superseded. */
  protected loadSeq = 0;
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

  /** Ends the engine's worker (what it was doing fails with `reason`); the next call starts a fresh one. */
  protected abstract resetWorker(reason: Error): void;

  /**
   * Stops a download by ending the worker; files already complete stay in the browser's cache,
   * so a later load resumes.
   */
  cancel(): void {
    if (this.current.status !== 'loading') return;
    this.loadSeq++;
    this.resetWorker(new Error('Model loading was cancelled by the user.'));
    this.setState({ status: 'idle' });
  }

  /** No one hears of this runtime any more (it is disposed). */
  protected dropListeners(): void {
    this.listeners.clear();
  }
}
