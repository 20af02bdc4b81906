// What a sealed message holds (docs/SYNC.md, "Messages"). The plaintext of an envelope of version 2:
//
//   | kind u8 | prev varuint | head varuint | payload |
//
// `prev` is the sender's previous message in this room (0 for its first): a receiver that never
// saw it knows the relay dropped or withheld one (seq-book.ts). `head` is how far the sender had
// read the room when it posted: a message cannot come before what its sender had read, so a relay
// that reorders is caught. Both are inside the seal, so the relay can neither read nor change them.
// Version 1 plaintexts (no `prev`, no `head`) are `| kind | payload |`.
import { type Bytes, concat, fromUtf8, utf8 } from './bytes';
import type { SavedBook } from './seq-book';

export const KIND = {
  /** A gzipped Yjs update. */
  update: 1,
  /** A key rotation notice (keys.ts), signed by the rotating device. */
  rotation: 2,
  /** One piece of a large payload: `| kind | index u16 | count u16 | chunk |`. */
  piece: 3,
  /** A device turned sync off, signed by it. */
  left: 4,
  /** A change of the key ring (a device added), signed by a device of the ring (ring.ts). */
  ring: 5,
  /** "Send me what I lack": the sender's Yjs state vector, after a gap it could not close. */
  need: 6,
  /** A gzipped compacted document (compaction.ts): the whole room up to where its sender had read. */
  snapshot: 8,
} as const;

export interface Body {
  kind: number;
  /** Version 2: the sender's previous message in this room (0: its first). Undefined for version 1. */
  prev?: number;
  /** Version 2: the relay position the sender had read when it posted. */
  head?: number;
  payload: Bytes;
}

export class BodyError extends Error {
  override readonly name = 'BodyError';
}

export function encodeBody(kind: number, prev: number, head: number, payload: Uint8Array): Bytes {
  return concat(Uint8Array.of(kind), varuint(prev), varuint(head), payload);
}

/** Reads a plaintext; throws BodyError on one that does not parse (an authentic but broken message). */
export function decodeBody(plain: Uint8Array, version: number): Body {
  if (plain.length < 1) throw new BodyError('an empty message');
  const kind = plain[0];
  if (version === 1) {
    // Version 1 pieces carried updates only, with no kind of their own.
    if (kind === KIND.piece) return { kind, payload: concat(plain.subarray(0, 1), Uint8Array.of(KIND.update), plain.subarray(1)) };
    return { kind, payload: plain.slice(1) };
  }
  const at = { i: 1 };
  const prev = readVaruint(plain, at);
  const head = readVaruint(plain, at);
  return { kind, prev, head, payload: plain.slice(at.i) };
}

/** A payload larger than `size` as pieces (each the payload of a `piece` message). */
export function toPieces(kind: number, payload: Uint8Array, size: number): Bytes[] {
  const count = Math.max(1, Math.ceil(payload.length / size));
  if (count > 0xffff) throw new Error('too large to send');
  const out: Bytes[] = [];
  for (let i = 0; i < count; i++) {
    out.push(concat(Uint8Array.of(kind, i >> 8, i & 255, count >> 8, count & 255), payload.subarray(i * size, (i + 1) * size)));
  }
  return out;
}

/** A piece's place: its payload kind, index, count and chunk. */
export function readPiece(payload: Uint8Array): { kind: number; index: number; count: number; chunk: Bytes } {
  // Version 1's pieces come here with the piece kind first (decodeBody put it there).
  const p = payload[0] === KIND.piece ? payload.subarray(1) : payload;
  if (p.length < 5) throw new BodyError('a piece too short to place');
  return { kind: p[0], index: (p[1] << 8) | p[2], count: (p[3] << 8) | p[4], chunk: p.slice(5) };
}

function varuint(n: number): Bytes {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Uint8Array.from(out);
}

function readVaruint(b: Uint8Array, at: { i: number }): number {
  let n = 0;
  let mult = 1;
  for (;;) {
    if (at.i >= b.length) throw new BodyError('a message cut short');
    const x = b[at.i++];
    n += (x & 127) * mult;
    if (x < 128) return n;
    mult *= 128;
    if (mult > 2 ** 53) throw new BodyError('a number out of range');
  }
}

/** A Yjs state vector as Yjs encodes one: a count, then (client, clock) pairs, all varuints. */
export function encodeVector(v: Map<number, number>): Bytes {
  return concat(varuint(v.size), ...[...v].flatMap(([client, clock]) => [varuint(client), varuint(clock)]));
}

export async function gzip(b: Uint8Array): Promise<Bytes> {
  return pipe(b, new CompressionStream('gzip'));
}

/** Unzips at most `limit` bytes: a small message must not unzip into gigabytes (a zip bomb). */
export async function gunzip(b: Uint8Array, limit = 512 * 1024 * 1024): Promise<Bytes> {
  const reader = new Blob([b as Bytes]).stream().pipeThrough(new DecompressionStream('gzip')).getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (e) {
      throw new BodyError(`not a compressed update (${(e as Error).message})`);
    }
    if (chunk.done) return concat(...parts);
    size += chunk.value.length;
    if (size > limit) {
      await reader.cancel();
      throw new BodyError('an update too large to unzip');
    }
    parts.push(chunk.value);
  }
}

async function pipe(b: Uint8Array, stream: CompressionStream): Promise<Bytes> {
  const out = new Response(new Blob([b as Bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

/**
 * A snapshot, or an answer to `need`: what its sender had seen of each device (so holes it covers
 * close) and a gzipped update. `| varuint length | book as JSON | gzipped update |`.
 */
export function encodeSnapshot(book: SavedBook, gz: Uint8Array): Bytes {
  const head = utf8(JSON.stringify(book));
  return concat(varuint(head.length), head, gz);
}

export function decodeSnapshot(payload: Uint8Array): { book: SavedBook; gz: Bytes } {
  const at = { i: 0 };
  const len = readVaruint(payload, at);
  if (at.i + len > payload.length) throw new BodyError('a snapshot cut short');
  let book: unknown;
  try {
    book = JSON.parse(fromUtf8(payload.subarray(at.i, at.i + len)));
  } catch {
    throw new BodyError('a snapshot whose book does not parse');
  }
  return { book: checkBook(book), gz: payload.slice(at.i + len) };
}

const DEVICE = /^[0-9a-f]{32}$/;
const numbers = (v: unknown): v is number[] => Array.isArray(v) && v.length <= 1024 && v.every((n) => Number.isSafeInteger(n) && n > 0);

/** A book another device sent, checked: device ids as ids, numbers as positive integers. */
function checkBook(v: unknown): SavedBook {
  const b = v as Partial<Record<keyof SavedBook, unknown>> | null;
  const table = (t: unknown, ok: (x: unknown) => boolean) =>
    t === undefined ||
    (typeof t === 'object' &&
      t !== null &&
      !Array.isArray(t) &&
      Object.entries(t).length <= 4096 &&
      Object.entries(t).every(([d, x]) => DEVICE.test(d) && ok(x)));
  if (
    typeof b !== 'object' ||
    b === null ||
    !table(b.marks, (x) => Number.isSafeInteger(x) && (x as number) >= 0) ||
    b.marks === undefined ||
    !table(b.recent, numbers) ||
    !table(b.holes, numbers)
  ) {
    throw new BodyError('a snapshot with a malformed book');
  }
  return b as SavedBook;
}
