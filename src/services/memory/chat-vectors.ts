// The turns of the chats in use, embedded by the memory search model, so that in-chat recall finds
// earlier exchanges by meaning as well as by words (src/memory/recall/chat-window.ts). Turns are
// embedded in the background as they are said (and when a chat is shown), a few at a time, and not
// while a reply is being prepared: a reply waits at most for the few turns in flight and for its
// own message's embedding, which it makes itself and hands over (`put`). Kept in memory only: after
// a reload the chat is embedded again in the background, and until then it is searched by words.
import type { Embedder } from '../../ports';
import type { Id, Role } from '../../memory/types';
import { excerptText } from '../../memory/recall/chat-window';

export interface ChatVectorTurn {
  id: Id;
  role: Role;
  text: string;
}

/** Turns per embedding call of the background: what a reply may find in flight before its own. */
export const CHAT_VECTOR_CHUNK = 4;
/** Turns kept at most (384 floats each for the default model: about 6 MB). */
const MAX_TURNS = 4000;

interface Entry {
  model: string;
  text: string;
  vector: Float32Array;
}

export class ChatVectors {
  private readonly byTurn = new Map<Id, Entry>();
  private queue: ChatVectorTurn[] = [];
  private readonly queued = new Set<string>();
  private running?: Promise<void>;
  private holds = 0;
  private resumers: Array<() => void> = [];
  /** Embedding calls made and turns embedded by the background (tests and the cost figures read them). */
  calls = 0;
  embedded = 0;

  constructor(private readonly getEmbedder: () => Embedder | undefined) {}

  /** The vectors of these turns that the model in use has embedded so far, by turn id. */
  vectorsFor(turns: readonly ChatVectorTurn[]): Map<Id, Float32Array> {
    const model = this.getEmbedder()?.modelId;
    const out = new Map<Id, Float32Array>();
    if (!model) return out;
    for (const t of turns) {
      const e = this.byTurn.get(t.id);
      if (e && e.model === model && e.text === excerptText(t)) out.set(t.id, e.vector);
    }
    return out;
  }

  /** A turn's vector made elsewhere (the reply embeds its own message). */
  put(turn: ChatVectorTurn, vector: Float32Array): void {
    const model = this.getEmbedder()?.modelId;
    if (model) this.set(turn.id, { model, text: excerptText(turn), vector });
  }

  /** Queues the turns not yet embedded by the model in use; the background embeds them. */
  note(turns: readonly ChatVectorTurn[]): void {
    const model = this.getEmbedder()?.modelId;
    if (!model) return;
    for (const t of turns) {
      const text = excerptText(t);
      const key = `${t.id}\u0000${text}`;
      const e = this.byTurn.get(t.id);
      if (text.trim() === '' || this.queued.has(key) || (e && e.model === model && e.text === text)) continue;
      this.queued.add(key);
      this.queue.push(t);
    }
    if (this.queue.length > 0) this.run();
  }

  /** Runs `work` (preparing a reply) with the background held before its next call. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    this.holds++;
    try {
      return await work();
    } finally {
      if (--this.holds === 0) for (const resume of this.resumers.splice(0)) resume();
    }
  }

  /** Resolves when every queued turn is embedded (or given up). Tests wait on it. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private set(id: Id, entry: Entry): void {
    this.byTurn.delete(id);
    this.byTurn.set(id, entry);
    while (this.byTurn.size > MAX_TURNS) this.byTurn.delete(this.byTurn.keys().next().value!);
  }

  private run(): void {
    if (this.running) return;
    this.running = (async () => {
      while (this.queue.length > 0) {
        if (this.holds > 0) await new Promise<void>((resume) => this.resumers.push(resume));
        const embedder = this.getEmbedder();
        const chunk = this.queue.splice(0, CHAT_VECTOR_CHUNK);
        for (const t of chunk) this.queued.delete(`${t.id}\u0000${excerptText(t)}`);
        // No model any more: nothing to embed with (the next note, with a model, queues them again).
        if (!embedder) continue;
        const todo = chunk.filter((t) => {
          const e = this.byTurn.get(t.id);
          return !(e && e.model === embedder.modelId && e.text === excerptText(t));
        });
        if (todo.length === 0) continue;
        try {
          const vectors = await embedder.embed(todo.map((t) => excerptText(t)));
          this.calls++;
          this.embedded += todo.length;
          todo.forEach((t, i) => vectors[i] && this.set(t.id, { model: embedder.modelId, text: excerptText(t), vector: vectors[i] }));
        } catch {
          // Left unembedded: those turns are found by words until they are noted again.
        }
      }
    })().finally(() => {
      this.running = undefined;
    });
  }
}
