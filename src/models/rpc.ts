// A small typed request/response layer over postMessage, shared by both model workers.
// Client side: ids, per-call event streams, abort, and failing every pending call when the
// worker dies. Server side: dispatch to handlers with an AbortSignal per call.

import type { MethodMap, RpcRequest, RpcResponse } from './messages';
import { serializeError, type SerializedError } from './errors';

/** What we need of a Worker (a fake implements it in unit tests). */
export interface WorkerLike {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  terminate(): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
  onmessageerror?: ((ev: MessageEvent) => void) | null;
}

/** An error the worker reported for one call. */
export class WorkerCallError extends Error {
  constructor(readonly serialized: SerializedError) {
    super(serialized.message);
    this.name = serialized.name ?? 'Error';
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: unknown): void;
  onEvent?: (event: unknown) => void;
  cleanup(): void;
}

export interface CallOptions<E> {
  onEvent?: (event: E) => void;
  signal?: AbortSignal;
  transfer?: Transferable[];
}

export class RpcClient<M extends MethodMap, N = never> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead?: Error;

  constructor(
    private readonly worker: WorkerLike,
    private readonly onNotice: (notice: N) => void = () => {},
    /** Called once if the worker fails to load or crashes. */
    private readonly onCrash: (err: Error) => void = () => {},
  ) {
    worker.onmessage = (ev) => this.receive(ev.data as RpcResponse<M, N>);
    worker.onerror = (ev) => {
      const msg = ev.message || 'The model worker crashed or could not be loaded.';
      this.fail(new Error(msg));
    };
    worker.onmessageerror = () => this.fail(new Error('A message from the model worker could not be read.'));
  }

  get alive(): boolean {
    return !this.dead;
  }

  call<K extends keyof M & string>(method: K, params: M[K]['params'], opts: CallOptions<M[K]['event']> = {}): Promise<M[K]['result']> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<M[K]['result']>((resolve, reject) => {
      const onAbort = (): void => this.worker.postMessage({ kind: 'abort', id } satisfies RpcRequest<M>);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: resolve as (v: unknown) => void,
        reject,
        onEvent: opts.onEvent as ((e: unknown) => void) | undefined,
        cleanup: () => opts.signal?.removeEventListener('abort', onAbort),
      });
      const request = { kind: 'call', id, method, params } as RpcRequest<M>;
      this.worker.postMessage(request, opts.transfer ?? []);
      // Already aborted before the call: tell the worker straight after the call.
      if (opts.signal?.aborted) onAbort();
    });
  }

  private receive(msg: RpcResponse<M, N>): void {
    if (msg.kind === 'notice') {
      this.onNotice(msg.notice);
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    if (msg.kind === 'event') {
      p.onEvent?.(msg.event);
      return;
    }
    this.pending.delete(msg.id);
    p.cleanup();
    if (msg.kind === 'result') p.resolve(msg.value);
    else p.reject(new WorkerCallError(msg.error));
  }

  /** Rejects every pending call; the client is unusable afterwards. */
  fail(err: Error): void {
    if (this.dead) return;
    this.dead = err;
    for (const p of this.pending.values()) {
      p.cleanup();
      p.reject(err);
    }
    this.pending.clear();
    this.onCrash(err);
  }

  /** Stops the worker at once (cancels downloads) and rejects pending calls with `reason`. */
  terminate(reason: Error): void {
    this.worker.terminate();
    if (!this.dead) {
      this.dead = reason;
      for (const p of this.pending.values()) {
        p.cleanup();
        p.reject(reason);
      }
      this.pending.clear();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Worker side.

export interface CallContext<E> {
  id: number;
  emit(event: E): void;
  /** Aborted when the caller aborts this call. */
  signal: AbortSignal;
  /** Transferables to move (not copy) with the result. */
  transfer(list: Transferable[]): void;
}

export type Handlers<M extends MethodMap> = {
  [K in keyof M & string]: (params: M[K]['params'], ctx: CallContext<M[K]['event']>) => Promise<M[K]['result']>;
};

/** The worker's global scope, or a fake in tests. */
export interface PortLike {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  onmessage: ((ev: MessageEvent) => void) | null;
}

export function serveRpc<M extends MethodMap, N = never>(port: PortLike, handlers: Handlers<M>): { notify(n: N): void } {
  const controllers = new Map<number, AbortController>();
  const post = (msg: RpcResponse<M, N>, transfer: Transferable[] = []): void => port.postMessage(msg, transfer);

  port.onmessage = (ev) => {
    const msg = ev.data as RpcRequest<M>;
    if (msg.kind === 'abort') {
      controllers.get(msg.id)?.abort();
      return;
    }
    const { id, method } = msg;
    const controller = new AbortController();
    controllers.set(id, controller);
    let transfer: Transferable[] = [];
    const ctx: CallContext<unknown> = {
      id,
      emit: (event) => post({ kind: 'event', id, event } as RpcResponse<M, N>),
      signal: controller.signal,
      transfer: (list) => {
        transfer = list;
      },
    };
    const handler = handlers[method] as ((p: unknown, c: CallContext<unknown>) => Promise<unknown>) | undefined;
    const run = handler ? handler(msg.params, ctx) : Promise.reject(new Error(`Unknown method ${method}`));
    run
      .then(
        (value) => post({ kind: 'result', id, value } as RpcResponse<M, N>, transfer),
        (err: unknown) => post({ kind: 'error', id, error: serializeError(err) }),
      )
      .finally(() => controllers.delete(id));
  };

  return { notify: (notice) => post({ kind: 'notice', notice }) };
}
