// Light or dark: follows the system unless the user chose one (Settings, Appearance). Kept in
// localStorage, not in the settings store, so it applies before the app mounts (no flash).
export type ThemeChoice = 'system' | 'light' | 'dark';
const KEY = 'tealeaf-theme';

export function themeChoice(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

const systemDark = (): MediaQueryList | undefined => globalThis.matchMedia?.('(prefers-color-scheme: dark)');
let following: MediaQueryList | undefined;
const followSystem = () => apply('system');

function apply(choice: ThemeChoice): void {
  const dark = choice === 'dark' || (choice === 'system' && !!systemDark()?.matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}

/**
 * Sets data-theme on <html> (app.css reads it). 'system' resolves the device's setting and keeps
 * following it while the page is open.
 */
export function applyTheme(choice: ThemeChoice = themeChoice()): void {
  following?.removeEventListener('change', followSystem);
  following = undefined;
  if (choice === 'system') {
    following = systemDark();
    following?.addEventListener('change', followSystem);
  }
  apply(choice);
}

export function chooseTheme(choice: ThemeChoice): void {
  try {
    if (choice === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
  applyTheme(choice);
}
