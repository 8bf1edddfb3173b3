import { request } from './request.ts';

/** new-api's user setting (PUT /api/user/setting, GET /api/user/self's `setting`), same field names. */
export interface NotifySetting {
  notify_type: 'email' | 'webhook' | 'bark' | 'gotify';
  quota_warning_threshold: number;
  notification_email: string;
  webhook_url: string;
  /** Write-only: empty keeps the stored secret. */
  webhook_secret: string;
  bark_url: string;
  gotify_url: string;
  /** Write-only: empty keeps the stored token. */
  gotify_token: string;
  gotify_priority: number;
}

/** The setting as stored (JSON text; missing or unreadable fields take the defaults). */
export function parseNotifySetting(text: string | undefined, defaultThreshold: number): NotifySetting {
  let raw: Partial<NotifySetting> = {};
  try {
    raw = text ? (JSON.parse(text) as Partial<NotifySetting>) : {};
  } catch {
    raw = {};
  }
  return {
    notify_type: raw.notify_type ?? 'email',
    quota_warning_threshold: raw.quota_warning_threshold || defaultThreshold,
    notification_email: raw.notification_email ?? '',
    webhook_url: raw.webhook_url ?? '',
    webhook_secret: '',
    bark_url: raw.bark_url ?? '',
    gotify_url: raw.gotify_url ?? '',
    gotify_token: '',
    gotify_priority: raw.gotify_priority ?? 5,
  };
}

export const updateNotifySetting = (body: NotifySetting) => request<null>('PUT', '/api/user/setting', { body });
