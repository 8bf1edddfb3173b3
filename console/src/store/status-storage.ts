import type { Status } from '../api/types.ts';

/** localStorage key of the whole status object. */
export const STATUS_KEY = 'status';

/**
 * Status fields also kept under their own localStorage keys, because pages of the reference
 * consoles read them one by one (spec 02 section 3 "Status settings").
 */
const SCALAR_KEYS = [
  'system_name',
  'logo',
  'footer_html',
  'quota_per_unit',
  'display_in_currency',
  'enable_drawing',
  'enable_task',
  'enable_data_export',
  'data_export_default_time',
  'default_collapse_sidebar',
  'mj_notify_enabled',
  'server_address',
  'top_up_link',
  'min_topup',
  'enable_online_topup',
] as const satisfies readonly (keyof Status)[];

/** Keys that are removed rather than stored empty, so "is a link configured" is a presence test. */
const OPTIONAL_KEYS = ['chat_link', 'chat_link2'] as const satisfies readonly (keyof Status)[];

/** Saves the status under `status` and the individual keys. */
export function saveStatus(status: Status): void {
  localStorage.setItem(STATUS_KEY, JSON.stringify(status));
  for (const key of SCALAR_KEYS) {
    const value = status[key];
    if (value === undefined || value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, String(value));
  }
  localStorage.setItem('chats', JSON.stringify(status.chats ?? []));
  for (const key of OPTIONAL_KEYS) {
    const value = status[key];
    if (value) localStorage.setItem(key, value);
    else localStorage.removeItem(key);
  }
}

/** The last status saved, or an empty object. */
export function getStoredStatus(): Status {
  const raw = localStorage.getItem(STATUS_KEY);
  if (!raw) return {};
  try {
    return (JSON.parse(raw) as Status | null) ?? {};
  } catch {
    return {};
  }
}
