import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { notify } from '../api/request.ts';
import { getStatus } from '../api/status.ts';
import type { Status } from '../api/types.ts';
import { translate } from '../locale/translate.ts';
import { getStoredStatus, saveStatus } from './status-storage.ts';

interface StatusValue {
  /** The last known status: the stored one until GET /api/status answers. */
  status: Status;
  /** True once the server answered (successfully or not). */
  loaded: boolean;
  reload: () => Promise<void>;
}

const StatusContext = createContext<StatusValue>({ status: {}, loaded: false, reload: async () => {} });

/** Sets the page title and the favicon from the status settings. */
export function applyBranding(status: Status): void {
  if (status.system_name) document.title = status.system_name;
  if (status.logo) {
    let link = document.querySelector<HTMLLinkElement>('link[rel~="icon"]');
    if (!link) {
      link = document.createElement('link');
      link.rel = 'icon';
      document.head.appendChild(link);
    }
    link.removeAttribute('type');
    link.href = status.logo;
  }
}

/** Loads GET /api/status on start and keeps it (and its local keys) for the app. */
export function StatusProvider({ children }: { children: ReactNode }) {
  const [status, setStatus] = useState<Status>(getStoredStatus);
  const [loaded, setLoaded] = useState(false);

  const reload = useCallback(async () => {
    const res = await getStatus();
    if (res.success && res.data) {
      saveStatus(res.data);
      setStatus(res.data);
      applyBranding(res.data);
    } else {
      notify('error', translate('zh-CN', 'app.connectFailed'));
    }
    setLoaded(true);
  }, []);

  useEffect(() => {
    applyBranding(getStoredStatus());
    void reload();
  }, [reload]);

  const value = useMemo(() => ({ status, loaded, reload }), [status, loaded, reload]);
  return <StatusContext.Provider value={value}>{children}</StatusContext.Provider>;
}

/** The status settings. */
export function useStatus(): StatusValue {
  return useContext(StatusContext);
}
