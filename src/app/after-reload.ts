// A confirmation that outlives a page reload: actions that end in location.reload() (delete
// everything, leave or remove the demo) leave their words here; the reloaded page shows them once.
// Per tab (sessionStorage): another tab did not act, so it is not told.

const KEY = 'tealeaf-after-reload';

/** Keeps `message` for the next page load in this tab (the last one wins). */
export function sayAfterReload(message: string): void {
  try {
    sessionStorage.setItem(KEY, message);
  } catch {
    // Storage refused (private mode, quota): the action still happened; only its words are lost.
  }
}

/** The message left for this load, removed as it is read so that it is shown once. */
export function takeAfterReload(): string | null {
  try {
    const message = sessionStorage.getItem(KEY);
    sessionStorage.removeItem(KEY);
    return message;
  } catch {
    return null;
  }
}
