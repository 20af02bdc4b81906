// A WorkerLike whose "worker side" runs in this process: messages are structured-cloned and
// delivered asynchronously, like postMessage between threads, so Error classes and prototypes
// are lost exactly as they are across a real worker boundary.
import type { PortLike, WorkerLike } from '../../src/models/rpc';

export interface InProcessWorker extends WorkerLike {
  terminated: boolean;
  /** Every message the main side posted. */
  sent: unknown[];
}

export function inProcessWorker(setup: (port: PortLike) => void): InProcessWorker {
  const clone = <T>(v: T, transfer?: Transferable[]): T =>
    structuredClone(v, transfer && transfer.length ? { transfer: transfer as unknown as Transferable[] } : undefined);
  const worker: InProcessWorker = {
    terminated: false,
    sent: [],
    onmessage: null,
    onerror: null,
    onmessageerror: null,
    postMessage(message, transfer) {
      if (worker.terminated) return;
      worker.sent.push(message);
      const data = clone(message, transfer);
      setTimeout(() => {
        if (!worker.terminated) port.onmessage?.({ data } as MessageEvent);
      }, 0);
    },
    terminate() {
      worker.terminated = true;
    },
  };
  const port: PortLike = {
    onmessage: null,
    postMessage(message, transfer) {
      if (worker.terminated) return;
      const data = clone(message, transfer);
      setTimeout(() => {
        if (!worker.terminated) worker.onmessage?.({ data } as MessageEvent);
      }, 0);
    },
  };
  setup(port);
  return worker;
}
