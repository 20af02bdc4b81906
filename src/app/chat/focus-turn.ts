// A source link ("Open →" in the explorer, a trait's source in the persona panel) leaves the view
// it was in, so focus would fall back to the page's body. This moves it to the turn the link names
// once the chat shows it: keyboard users carry on from there, and a screen reader reads the turn
// (an <article> named "You said" or "Tealeaf said", Message.svelte) as it gains focus.

const selector = (turnId: string) => `[data-turn-id="${CSS.escape(turnId)}"]`;

/**
 * Waits (up to `timeoutMs`) for the turn's element, then focuses it and scrolls it to the middle
 * of the chat. Resolves with whether it was found.
 */
export async function focusTurn(turnId: string, { timeoutMs = 5_000, root = document } = {}): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const el = root.querySelector<HTMLElement>(selector(turnId));
    if (el) {
      // Focusable from script only: the turn does not become a Tab stop.
      if (!el.hasAttribute('tabindex')) el.tabIndex = -1;
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: 'center' });
      return true;
    }
    if (Date.now() > end) return false;
    // A timer, not an animation frame: frames stop in a background tab.
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}
