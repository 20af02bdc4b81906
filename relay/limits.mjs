// The relay's limits (docs/SYNC.md, "Relay limits"), and the refusals they give. Every refusal is an
// HTTP status with a JSON body { error: words, reason: code, ... } that the app turns into its own
// words (src/services/sync/relay-refusal.ts).

export const DEFAULT_LIMITS = {
  /** One message. */
  maxMessage: 8 * 1024 * 1024,
  /** Bytes one room may hold (a snapshot compacts what came before it): about 20 months of a person's edits with no delete. */
  roomBytes: 128 * 1024 * 1024,
  /**
   * Bytes all rooms together may hold: sized for a small server's disk (docs/SYNC.md, "Relay
   * limits"); unlimited only when the operator says so (`--relay-bytes none`).
   */
  relayBytes: 4 * 1024 * 1024 * 1024,
  /** Posts per minute, per room and per client address. */
  roomPostsPerMinute: 240,
  addressPostsPerMinute: 600,
  /** Rooms (pairing mailboxes included) one address may create per hour. */
  addressRoomsPerHour: 30,
  /** Long polls open at once, per room and per address; and per address in one room, so no one address takes a room's all. */
  roomPolls: 16,
  addressPolls: 64,
  roomAddressPolls: 6,
  /** A room nobody posted to for this long is deleted (its devices send what they hold again). */
  idleMs: 90 * 24 * 3600_000,
  /** Pairing mailboxes (pair-...): at most this many messages, forgotten this long after their first. */
  pairMessages: 16,
  pairTtlMs: 15 * 60 * 1000,
  /** A signed request's clock may differ from the relay's by this much; its nonce is kept twice as long. */
  clockSkewMs: 15 * 60 * 1000,
};

/** A refusal: thrown anywhere below the HTTP handler, answered as it says. */
export class Refusal extends Error {
  constructor(status, reason, words, extra = {}) {
    super(words);
    this.status = status;
    this.reason = reason;
    this.extra = extra;
  }
}

const round = (x) => Math.round(x * 10) / 10;
const MiB = (n) => (n < 1024 * 1024 ? `${round(n / 1024)} KiB` : `${round(n / 1024 / 1024)} MiB`);

/** The refusals by reason, in the relay's words (the app has its own, for the same reasons). */
export const refuse = {
  tooLarge: (max) => new Refusal(413, 'too-large', `a message may be at most ${MiB(max)}`, { limit: max }),
  roomFull: (max) => new Refusal(507, 'room-full', `this room would hold more than its ${MiB(max)}`, { limit: max }),
  relayFull: () => new Refusal(507, 'relay-full', 'this relay holds all it may: it takes no more messages'),
  mailboxFull: () => new Refusal(429, 'mailbox-full', 'this pairing mailbox is full'),
  posts: (retryAfter) => new Refusal(429, 'too-many-posts', 'too many messages this minute', { retryAfter }),
  rooms: (retryAfter) => new Refusal(429, 'too-many-rooms', 'too many new rooms from this address this hour', { retryAfter }),
  polls: () => new Refusal(429, 'too-many-polls', 'too many long polls open at once', { retryAfter: 5 }),
  unsigned: () => new Refusal(401, 'unsigned', 'writing to a room needs a request signed with its key'),
  badSignature: () => new Refusal(401, 'bad-signature', 'the signature does not match the request'),
  clock: () => new Refusal(401, 'clock', 'the request is signed at a time too far from the relay’s clock'),
  replayed: () => new Refusal(409, 'replayed', 'this signed request was already taken'),
  notYours: () => new Refusal(403, 'not-yours', 'this room belongs to another key'),
  badCompact: () => new Refusal(400, 'bad-compact', 'compact names a position this room does not have'),
  roomClosed: (closed) => new Refusal(409, 'room-closed', 'this room was closed by a key change: it takes no more writes', { closed }),
  badQuery: (name) => new Refusal(400, 'bad-query', `${name} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`),
  mailboxKept: () =>
    new Refusal(403, 'mailbox-kept', 'a pairing mailbox cannot be deleted: the relay forgets it 15 minutes after its first message'),
  empty: () => new Refusal(400, 'empty', 'empty message'),
};

/** Counts in fixed windows per key (room or address), in this process's memory; forgotten when the window ends. */
export class Windows {
  constructor(windowMs, now) {
    this.windowMs = windowMs;
    this.now = now;
    this.counts = new Map();
  }

  /** Takes one; returns the seconds to wait when `max` were already taken in this window, else 0. */
  take(key, max) {
    const t = this.now();
    let w = this.counts.get(key);
    if (!w || t - w.start >= this.windowMs) this.counts.set(key, (w = { start: t, n: 0 }));
    if (w.n >= max) return Math.max(1, Math.ceil((w.start + this.windowMs - t) / 1000));
    w.n++;
    return 0;
  }

  /** Gives back one taken in this window (what it was taken for did not happen). */
  give(key) {
    const w = this.counts.get(key);
    if (w && this.now() - w.start < this.windowMs && w.n > 0) w.n--;
  }

  /** Drops ended windows, so idle addresses cost nothing. */
  sweep() {
    const t = this.now();
    for (const [k, w] of this.counts) if (t - w.start >= this.windowMs) this.counts.delete(k);
  }
}

/** Open counts (long polls) per key; an entry lives only while something is open. */
export class Gauges {
  constructor() {
    this.counts = new Map();
  }
  add(key, max) {
    const n = this.counts.get(key) ?? 0;
    if (n >= max) return false;
    this.counts.set(key, n + 1);
    return true;
  }
  remove(key) {
    const n = (this.counts.get(key) ?? 1) - 1;
    if (n <= 0) this.counts.delete(key);
    else this.counts.set(key, n);
  }
}
