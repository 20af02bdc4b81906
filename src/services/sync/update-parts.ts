// A large Yjs update in parts that apply one after another: 20,000 memories
// arriving as one update were merged in one call, a task of 2.4 s on the page. The update's
// structs are read in order (Yjs's own decoder, the format version 1 it writes) and cut into runs
// of at most `size` per client, each run an update of its own; the delete set comes last, alone.
// Applied in order, the parts give the same document as the whole (tests/unit/sync/update-parts).
// Reading is lazy: each part is read when asked for, so the caller can let the page breathe
// between them. An update this cannot read (a struct kind Tealeaf never writes) throws: the caller
// applies it whole.
import * as Y from 'yjs';

/** The decoder's byte reader, as lib0 lays it out (`arr`, `pos`). */
interface Reader {
  arr: Uint8Array;
  pos: number;
}

/** What UpdateDecoderV1 offers that this reads with (its methods read from the same bytes). */
interface StructDecoder {
  readClient(): number;
  readInfo(): number;
  readLen(): number;
  readLeftID(): unknown;
  readRightID(): unknown;
  readParentInfo(): boolean;
  readString(): string;
  readTypeRef(): number;
  readAny(): unknown;
  readBuf(): Uint8Array;
  readJSON(): unknown;
  readKey(): string;
}

function readVarUint(r: Reader): number {
  let n = 0;
  let mult = 1;
  for (;;) {
    if (r.pos >= r.arr.length) throw new Error('an update cut short');
    const x = r.arr[r.pos++];
    n += (x & 127) * mult;
    if (x < 128) return n;
    mult *= 128;
    if (mult > 2 ** 53) throw new Error('a number out of range');
  }
}

function varUint(n: number): number[] {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** Reads one item's content; returns its length in clock ticks. */
function contentLength(d: StructDecoder, ref: number): number {
  switch (ref) {
    case 1: // deleted
      return d.readLen();
    case 2: {
      // JSON
      const len = d.readLen();
      for (let i = 0; i < len; i++) d.readString();
      return len;
    }
    case 3:
      d.readBuf();
      return 1;
    case 4:
      return d.readString().length;
    case 5:
      d.readJSON();
      return 1;
    case 6:
      d.readKey();
      d.readJSON();
      return 1;
    case 7: {
      // A nested type: XmlElement (3) and XmlHook (5) carry a name.
      const type = d.readTypeRef();
      if (type === 3 || type === 5) d.readKey();
      return 1;
    }
    case 8: {
      // Any: what Tealeaf writes (a record as a map's value)
      const len = d.readLen();
      for (let i = 0; i < len; i++) d.readAny();
      return len;
    }
    case 9:
      d.readString();
      d.readAny();
      return 1;
    default:
      throw new Error(`a struct of an unknown kind (${ref})`);
  }
}

const BIT6 = 32;
const BIT7 = 64;
const BIT8 = 128;

/** The parts of `update`, read lazily: runs of at most `size` structs per client, then its delete set. */
export function* updateParts(update: Uint8Array, size = 500): Generator<Uint8Array> {
  const r: Reader = { arr: update, pos: 0 };
  const d = new Y.UpdateDecoderV1(r as never) as unknown as StructDecoder;
  const clients = readVarUint(r);
  for (let c = 0; c < clients; c++) {
    const structs = readVarUint(r);
    const client = d.readClient();
    let clock = readVarUint(r);
    let start = r.pos;
    let first = clock;
    let count = 0;
    for (let s = 0; s < structs; s++) {
      const info = d.readInfo();
      const ref = info & 31;
      if (ref === 0)
        clock += d.readLen(); // GC
      else if (ref === 10)
        clock += readVarUint(r); // Skip
      else {
        if (info & BIT8) d.readLeftID();
        if (info & BIT7) d.readRightID();
        const noOrigin = (info & (BIT7 | BIT8)) === 0;
        if (noOrigin) {
          if (d.readParentInfo()) d.readString();
          else d.readLeftID();
          if (info & BIT6) d.readString();
        }
        clock += contentLength(d, ref);
      }
      if (++count === size || s === structs - 1) {
        yield Uint8Array.from([
          ...varUint(1),
          ...varUint(count),
          ...varUint(client),
          ...varUint(first),
          ...update.subarray(start, r.pos),
          0,
        ]);
        start = r.pos;
        first = clock;
        count = 0;
      }
    }
  }
  // The delete set, alone: every struct it names has arrived by now.
  yield Uint8Array.from([0, ...update.subarray(r.pos)]);
}

/** Lets the page draw and answer between two parts (not throttled in a background tab the way timers are). */
export function breathe(): Promise<void> {
  const s = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler;
  if (s?.yield) return s.yield();
  return new Promise((ok) => {
    if (typeof MessageChannel === 'undefined') return setTimeout(ok, 0);
    const ch = new MessageChannel();
    ch.port1.onmessage = () => (ch.port1.close(), ok());
    ch.port2.postMessage(0);
  });
}
