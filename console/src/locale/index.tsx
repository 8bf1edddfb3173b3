import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import { LANG_KEY, type Lang, storedLang, translate } from './translate.ts';
import type { LocaleKey } from './zh-CN.ts';

export type { Lang } from './translate.ts';
export type { LocaleKey } from './zh-CN.ts';

export type TFunction = (key: LocaleKey, vars?: Record<string, string | number>) => string;

interface LocaleValue {
  lang: Lang;
  setLang: (lang: Lang) => void;
  t: TFunction;
}

const LocaleContext = createContext<LocaleValue>({
  lang: 'zh-CN',
  setLang: () => {},
  t: (key, vars) => translate('zh-CN', key, vars),
});

/** Holds the current language (persisted in localStorage) for the whole app. */
export function LocaleProvider({ children }: { children: ReactNode }) {
  const [lang, setLangState] = useState<Lang>(storedLang);
  const setLang = useCallback((next: Lang) => {
    localStorage.setItem(LANG_KEY, next);
    setLangState(next);
  }, []);
  const value = useMemo<LocaleValue>(
    () => ({ lang, setLang, t: (key, vars) => translate(lang, key, vars) }),
    [lang, setLang],
  );
  return <LocaleContext.Provider value={value}>{children}</LocaleContext.Provider>;
}

/** The language, its setter and t(key). */
export function useLocale(): LocaleValue {
  return useContext(LocaleContext);
}

/** Just t(key). */
export function useT(): TFunction {
  return useContext(LocaleContext).t;
}
