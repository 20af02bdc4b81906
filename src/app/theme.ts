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

/** Sets data-theme on <html> (app.css reads it); 'system' removes it. */
export function applyTheme(choice: ThemeChoice = themeChoice()): void {
  const root = document.documentElement;
  if (choice === 'system') delete root.dataset.theme;
  else root.dataset.theme = choice;
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
