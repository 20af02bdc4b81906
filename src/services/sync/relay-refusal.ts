// The relay's refusals (relay/limits.mjs) in the app's words: a status and a JSON reason become the
// sentence Settings shows under "Sync stopped on an error".

export interface RelayRefusal {
  reason?: string;
  error?: string;
  limit?: number;
  retryAfter?: number;
}

const round = (x: number) => Math.round(x * 10) / 10;
const mib = (n: number | undefined) =>
  n === undefined ? 'its limit' : n < 1024 * 1024 ? `${round(n / 1024)} KiB` : `${round(n / 1024 / 1024)} MiB`;
const later = (s: number | undefined) => (s === undefined ? 'a while' : s < 90 ? `${s} seconds` : `${Math.round(s / 60)} minutes`);

const WORDS: Record<string, (r: RelayRefusal) => string> = {
  'room-full': (r) =>
    `Your relay is full: your sync room holds its limit of ${mib(r.limit)}. Changes stay on this device; whoever runs the relay can give it more room.`,
  'relay-full': () =>
    'Your relay is full: it takes no more messages from anyone. Changes stay on this device until whoever runs it makes room.',
  'too-large': (r) => `A change is too large for your relay: it takes at most ${mib(r.limit)} at once.`,
  'too-many-posts': (r) => `Your relay is busy: it takes no more changes from here for ${later(r.retryAfter)}.`,
  'too-many-rooms': (r) =>
    `Your relay refused a new sync room: too many were made from this network lately. Try again in ${later(r.retryAfter)}.`,
  'too-many-polls': () => 'Your relay refused to wait for changes: too many devices or tabs on this network are waiting on it at once.',
  'mailbox-full': () => 'The pairing mailbox on the relay is full: start pairing again with a new code.',
  unsigned: () => 'Your relay refused a change that was not signed: update Tealeaf on this device.',
  'bad-signature': () => 'Your relay refused this device’s signature. Update Tealeaf on this device, or pair it again.',
  clock: () => 'Your relay refused this device’s changes: this device’s clock is more than 15 minutes off. Set its date and time right.',
  'not-yours': () =>
    'Your relay says another key owns this sync room, so it refuses changes from here. Someone else claimed it first: turn sync off and on again to start a new room.',
  replayed: () => 'Your relay had already taken this change.',
  'room-closed': () =>
    'Your relay says a key change closed this sync room: your devices moved to a new key. This device follows it when it reads the change.',
  'store-unavailable': () => 'Your relay’s database cannot be reached just now.',
  // Faults of this app, not of the user: said plainly all the same.
  'bad-compact': () => 'Your relay refused to compact at a position the room does not have (a fault in Tealeaf).',
  empty: () => 'Your relay refused an empty message (a fault in Tealeaf).',
  'bad-query': () => 'Your relay refused a request it could not read (a fault in Tealeaf).',
  'mailbox-kept': () => 'Your relay keeps a pairing mailbox until it expires: it cannot be deleted (a fault in Tealeaf).',
};

/** Words for a refusal; the status alone when the relay said no reason (an older relay, a proxy). */
export function refusalWords(status: number, body: RelayRefusal | undefined): string {
  const words = body?.reason ? WORDS[body.reason] : undefined;
  return words ? words(body!) : `The relay answered ${status}.`;
}
