// What a record may hold: one set of limits for what the app writes and what a backup may bring
// back, so that everything the app can store it can also export and import again. Every way in
// applies them: typed messages, imported histories and LoCoMo files, replies streamed from a model,
// passages and memories the pipeline makes, names a model server reports, and the store itself
// (src/store/fit.ts) as the last guard; backup validation checks the same numbers.

/**
 * The longest text the app stores in one field (a message, a memory, a passage): about 250 pages
 * of prose. A backup accepts texts up to this length.
 */
export const MAX_TEXT = 1_000_000;

/**
 * The longest message (typed, imported, or a reply). Below MAX_TEXT so that a passage holding one
 * whole message, with its speaker's name in front, still fits a record.
 */
export const MAX_MESSAGE = 990_000;

/**
 * The longest model name kept (on every reply, and in the settings): model servers report ids of a
 * few dozen characters (a name and tag, or a file path). A longer one is not offered at all.
 */
export const MAX_MODEL_ID = 500;

/** JavaScript Dates cover ±8.64e15 ms around 1970; a time outside cannot be shown or compared. */
export const MIN_TIME = -8.64e15;
export const MAX_TIME = 8.64e15;

const count = (n: number) => n.toLocaleString('en-US');

/** A cut that never splits a surrogate pair: a lone half would not survive the round trip as the same text. */
function cutAt(text: string, end: number): number {
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/**
 * The text as it can be stored: unchanged when within `max` (a message by default), else cut with
 * a note saying so. For text that is not the user's own words (a reply, a LoCoMo turn); what the
 * user types is refused instead (messageTooLong), and an imported message split (splitMessage).
 */
export function clampText(text: string, max: number = MAX_MESSAGE): string {
  if (text.length <= max) return text;
  const note = `\n\n[Cut here: Tealeaf keeps at most ${count(max)} characters of one text.]`;
  return text.slice(0, cutAt(text, max - note.length)) + note;
}

/** Why a message cannot be sent as it is, or undefined when it can. */
export function messageTooLong(length: number): string | undefined {
  if (length <= MAX_MESSAGE) return undefined;
  return (
    `This message is ${count(length)} characters; Tealeaf keeps at most ${count(MAX_MESSAGE)} in one message. ` +
    'Split it into parts and send them one after another.'
  );
}

/**
 * An imported message longer than MAX_MESSAGE as consecutive parts that each fit, cut at a
 * paragraph, line or space near the limit where there is one: nothing of it is lost.
 */
export function splitMessage(text: string): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > MAX_MESSAGE) {
    let end = cutAt(rest, MAX_MESSAGE);
    const start = end - 10_000;
    const window = rest.slice(start, end);
    for (const sep of ['\n\n', '\n', ' ']) {
      const at = window.lastIndexOf(sep);
      if (at >= 0) {
        end = start + at + sep.length;
        break;
      }
    }
    parts.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  parts.push(rest);
  return parts;
}

/** Whether a model name is one the app keeps (a longer one is not offered and not stored). */
export function isUsableModelId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_MODEL_ID;
}

/** A model name as a reply keeps it: only a label there, so an overlong one is cut, with "…". */
export function clampModelId(id: string): string {
  return id.length <= MAX_MODEL_ID ? id : `${id.slice(0, cutAt(id, MAX_MODEL_ID - 1))}…`;
}

/**
 * A link joins two different memories. A memory linked to itself is no step of any timeline and
 * no edge of the graph (MemoryGraph leaves it out), so it is not kept: a backup import leaves it
 * out and says so, the store's writer drops it. Data stored before still opens (it is ignored).
 */
export function isSelfLink(edge: { from: string; to: string }): boolean {
  return edge.from === edge.to;
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
