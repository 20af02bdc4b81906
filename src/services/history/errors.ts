// The ways a history import ends without importing, shared by the page and the parsing worker.
// Kept free of zod so the page's side of the import stays small.
import { MAX_IMPORT_BYTES } from '../../memory/limits';

/** The file cannot be imported; the message says why and what to do. Nothing was written. */
export class HistoryImportError extends Error {
  override readonly name = 'HistoryImportError';
}

/** The user cancelled: what was saved before the cancel was taken back, so nothing changed. */
export class HistoryImportCancelledError extends Error {
  override readonly name = 'HistoryImportCancelledError';
  constructor() {
    super('Import cancelled. Nothing was changed.');
  }
}

export const NOTHING = 'Nothing was imported.';

const megabytes = (bytes: number) => `${Math.ceil(bytes / (1024 * 1024))} MB`;

/** Refuses a file too large to read on the page, before it is read. */
export function checkHistorySize(bytes: number): void {
  if (bytes > MAX_IMPORT_BYTES) {
    throw new HistoryImportError(
      `This file is ${megabytes(bytes)}; Tealeaf imports history files up to ${megabytes(MAX_IMPORT_BYTES)}. ${NOTHING} ` +
        'conversations.json is a JSON list of chats: split it into smaller lists and import them one after another.',
    );
  }
}
