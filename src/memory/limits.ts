// What a record may hold: one set of limits for what the app writes and what a backup may bring
// back, so that everything the app can store it can also export and import again.

/**
 * The longest text the app stores in one field (a message, a memory, a segment): about 250 pages
 * of prose. Longer input is cut at this length, with a note, before it is stored.
 */
export const MAX_TEXT = 1_000_000;

/** JavaScript Dates cover ±8.64e15 ms around 1970; a time outside cannot be shown or compared. */
export const MIN_TIME = -8.64e15;
export const MAX_TIME = 8.64e15;

const CUT_NOTE = '\n\n[Cut here: Tealeaf keeps at most 1,000,000 characters of one message.]';

/** The text as it can be stored: unchanged when within MAX_TEXT, else cut with a note saying so. */
export function clampText(text: string): string {
  if (text.length <= MAX_TEXT) return text;
  let end = MAX_TEXT - CUT_NOTE.length;
  // Never split a surrogate pair: a lone half would not survive the round trip as the same text.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return text.slice(0, end) + CUT_NOTE;
}

/** A time that JavaScript can turn into a Date. */
export function isValidTime(t: number): boolean {
  return Number.isFinite(t) && t >= MIN_TIME && t <= MAX_TIME;
}

/**
 * A chat-history export (ChatGPT's or Claude's conversations.json) is read and checked as one
 * string on the page: past this size it would take seconds of a frozen page and gigabytes of memory.
 */
export const MAX_IMPORT_BYTES = 256 * 1024 * 1024;
/** Chats one history import may bring: each becomes a memorising job for the local model. */
export const MAX_IMPORT_CHATS = 20_000;
/** Messages one history import may bring in all (the backup's per-collection bound is far above). */
export const MAX_IMPORT_MESSAGES = 500_000;
/** Messages kept of one imported chat; a longer one keeps its first ones, with a note (like clampText). */
export const MAX_IMPORT_CHAT_MESSAGES = 5_000;
