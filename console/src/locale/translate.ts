import { enUS } from './en-US.ts';
import { type LocaleKey, type LocaleMessages, zhCN } from './zh-CN.ts';

export type Lang = 'zh-CN' | 'en-US';
export const LANGS: readonly Lang[] = ['zh-CN', 'en-US'];
export const DEFAULT_LANG: Lang = 'zh-CN';
/** localStorage key of the chosen language. */
export const LANG_KEY = 'lang';

const messages: Record<Lang, LocaleMessages> = { 'zh-CN': zhCN, 'en-US': enUS };

/** The label for key in lang, with {name} placeholders filled from vars. */
export function translate(lang: Lang, key: LocaleKey, vars?: Record<string, string | number>): string {
  const text = messages[lang][key] ?? zhCN[key] ?? key;
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** The stored language, zh-CN unless another known one was chosen. */
export function storedLang(): Lang {
  const value = typeof localStorage === 'undefined' ? null : localStorage.getItem(LANG_KEY);
  return LANGS.includes(value as Lang) ? (value as Lang) : DEFAULT_LANG;
}

/**
 * The label for key in the stored language, for code outside components (tables' column
 * definitions, messages, helpers). The LocaleProvider remounts the app when the language
 * changes, so everything rendered with tr() follows the choice.
 */
export function tr(key: LocaleKey, vars?: Record<string, string | number>): string {
  return translate(storedLang(), key, vars);
}
