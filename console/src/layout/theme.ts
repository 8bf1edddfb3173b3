export type Theme = 'light' | 'dark';

/** localStorage key of the chosen theme. */
export const THEME_KEY = 'arco-theme';

/** The stored theme; light unless dark was chosen. */
export function storedTheme(): Theme {
  return localStorage.getItem(THEME_KEY) === 'dark' ? 'dark' : 'light';
}

/** Switches Arco's palette through the `arco-theme` attribute on body. */
export function applyTheme(theme: Theme): void {
  if (theme === 'dark') document.body.setAttribute('arco-theme', 'dark');
  else document.body.removeAttribute('arco-theme');
}

/** Applies and remembers the theme. */
export function setTheme(theme: Theme): void {
  localStorage.setItem(THEME_KEY, theme);
  applyTheme(theme);
}
