// Unit test files run two at a time in worker threads of one process, and a BroadcastChannel reaches
// every thread of its process: two files' "tabs" (the app's fixed channel names) would hear each
// other, as two browser origins never do. Each thread gets its own channel names, so a file's
// channels are as private as one origin's.
import { threadId } from 'node:worker_threads';

const Native = globalThis.BroadcastChannel;

class ThreadChannel extends Native {
  readonly #name: string;
  constructor(name: string) {
    super(`thread-${threadId}:${name}`);
    this.#name = name;
  }
  override get name(): string {
    return this.#name;
  }
}

globalThis.BroadcastChannel = ThreadChannel;
