// Talks to a relay (relay/relay.mjs): posts sealed messages to a room and reads them back in order.
// Writes are signed with the room's key (room-key.ts); refusals come back in words (relay-refusal.ts).
import type { Bytes } from './bytes';
import { type RelayRefusal, refusalWords } from './relay-refusal';
import { signedHeaders } from './room-key';

export interface RelayMessage {
  /** The relay's position of the message in the room: 1, 2, 3... */
  seq: number;
  bytes: Bytes;
}

export interface RoomRead {
  messages: RelayMessage[];
  last: number;
  /** The position of the notice that closed the room (a key change), once closed. */
  closed?: number;
}

export class RelayError extends Error {
  override readonly name = 'RelayError';
  constructor(
    message: string,
    readonly status?: number,
    /** The relay's reason code (relay/limits.mjs), when it gave one. */
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** What the engine needs of a relay (engine-types.ts): a room read after a position, and a post. */
export type RoomRelay = Pick<RelayClient, 'read' | 'post'>;

export class RelayClient {
  constructor(
    readonly baseUrl: string,
    private readonly fetchFn: typeof fetch = (...a) => fetch(...a),
  ) {}

  private roomPath(room: string, tail = ''): string {
    return `/v1/rooms/${encodeURIComponent(room)}${tail}`;
  }

  private roomUrl(room: string, tail = ''): string {
    return `${this.baseUrl.replace(/\/+$/, '')}${this.roomPath(room, tail)}`;
  }

  private async call(url: string, init?: RequestInit): Promise<Response> {
    let res: Response;
    try {
      res = await this.fetchFn(url, init);
    } catch (e) {
      throw new RelayError(`The relay at ${this.baseUrl} cannot be reached (${(e as Error).message}).`);
    }
    if (!res.ok) {
      const body = (await res.json().catch(() => undefined)) as RelayRefusal | undefined;
      throw new RelayError(refusalWords(res.status, body), res.status, body?.reason);
    }
    return res;
  }

  /**
   * Posts one message; with `compact`, the relay then drops every message at or before that
   * position (a snapshot replaces them); with `close`, the message (a key change's notice) is the
   * room's last: the relay takes no write after it, so no holder of the old key can erase it.
   */
  async post(room: string, bytes: Bytes, signal?: AbortSignal, compact?: number, close = false): Promise<number> {
    const tail = close ? '/messages?close=1' : compact === undefined ? '/messages' : `/messages?compact=${compact}`;
    const res = await this.call(this.roomUrl(room, tail), {
      method: 'POST',
      body: bytes,
      headers: { 'content-type': 'application/octet-stream', ...(await signedHeaders(room, 'POST', this.roomPath(room, tail), bytes)) },
      signal,
    });
    return ((await res.json()) as { seq: number }).seq;
  }

  /**
   * Messages after `after`, at most `limit` (the relay may send fewer), the room's last seq, and
   * where a key change closed it (`closed`: its notice's position; absent while open).
   */
  async read(room: string, after: number, limit = 1000, signal?: AbortSignal): Promise<RoomRead> {
    const res = await this.call(this.roomUrl(room, `/messages?after=${after}&limit=${limit}`), { signal });
    const buf = new Uint8Array(await res.arrayBuffer());
    const view = new DataView(buf.buffer);
    const messages: RelayMessage[] = [];
    for (let at = 0; at + 8 <= buf.length;) {
      const seq = view.getUint32(at);
      const len = view.getUint32(at + 4);
      if (at + 8 + len > buf.length) throw new RelayError('The relay sent a cut-off message.');
      messages.push({ seq, bytes: buf.slice(at + 8, at + 8 + len) });
      at += 8 + len;
    }
    const closed = res.headers.get('x-room-closed');
    return { messages, last: Number(res.headers.get('x-last-seq') ?? 0), ...(closed === null ? {} : { closed: Number(closed) }) };
  }

  /** Resolves with the room's last seq once it is past `after` (or when the relay's wait ends). */
  async wait(room: string, after: number, signal?: AbortSignal): Promise<number> {
    const res = await this.call(this.roomUrl(room, `/wait?after=${after}`), { signal });
    return ((await res.json()) as { last: number }).last;
  }

  /** Signed with the room's key: only its devices may delete it. */
  async deleteRoom(room: string): Promise<void> {
    await this.call(this.roomUrl(room), {
      method: 'DELETE',
      headers: await signedHeaders(room, 'DELETE', this.roomPath(room), new Uint8Array(0)),
    });
  }
}

/** A client that reports each read's position (the first sync's progress bar). */
export class ProgressRelay extends RelayClient {
  onRead?: (seq: number, last: number) => void;
  override async read(room: string, after: number, limit?: number, signal?: AbortSignal) {
    const got = await super.read(room, after, limit, signal);
    this.onRead?.(got.messages.at(-1)?.seq ?? after, got.last);
    return got;
  }
}
