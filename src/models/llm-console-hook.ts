// Imported FIRST by llm.worker.ts, before web-llm: web-llm's logger binds console.error when it
// loads, and its only signal that the GPU device was lost after loading is a log line
// ("Device was lost ..."). Wrapping console.error here lets the worker tell the main thread.

type Listener = (message: string) => void;
const listeners: Listener[] = [];
const DEVICE_LOST_LOG = /Device was lost|device lost/i;

const original = console.error.bind(console);
console.error = (...args: unknown[]): void => {
  original(...args);
  const text = args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : '')).join(' ');
  if (DEVICE_LOST_LOG.test(text)) for (const l of listeners) l(text);
};

export function onDeviceLostLog(listener: Listener): void {
  listeners.push(listener);
}
