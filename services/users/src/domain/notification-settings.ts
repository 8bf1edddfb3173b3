import { isHttpUrl, type Notification, type SendOptions, sendBark, sendGotify, sendWebhook } from '@aigw/common';
import { invalid, notFound } from '@aigw/common/errors';
import type { Mailer, UserStore } from './ports.ts';

/** new-api's user setting (dto.UserSetting), as stored in the user's `setting` (JSON text). */
export interface UserSetting {
  notify_type?: string;
  quota_warning_threshold?: number;
  webhook_url?: string;
  webhook_secret?: string;
  notification_email?: string;
  bark_url?: string;
  gotify_url?: string;
  gotify_token?: string;
  gotify_priority?: number;
  accept_unset_model_ratio_model?: boolean;
  record_ip_log?: boolean;
}

export const NOTIFY_TYPES = ['email', 'webhook', 'bark', 'gotify'] as const;

/** The stored setting; an empty or unreadable text is no setting. */
export function parseSetting(text: string | undefined): UserSetting {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as UserSetting) : {};
  } catch {
    return {};
  }
}

/** The setting shown to others than its owner: without the webhook secret and the Gotify token. */
export function publicSetting(text: string | undefined): string {
  if (!text) return '';
  const { webhook_secret: _s, gotify_token: _t, ...rest } = parseSetting(text);
  return JSON.stringify(rest);
}

/**
 * Checks a PUT /api/user/setting body as new-api's UpdateUserSetting does (its messages) and keeps
 * only the fields of the chosen notify_type.
 */
export function checkSetting(req: Required<UserSetting>): UserSetting {
  const type = req.notify_type;
  if (!(NOTIFY_TYPES as readonly string[]).includes(type)) throw invalid('无效的预警类型');
  if (!(req.quota_warning_threshold > 0)) throw invalid('预警阈值必须大于0');
  const out: UserSetting = {
    notify_type: type,
    quota_warning_threshold: req.quota_warning_threshold,
    accept_unset_model_ratio_model: req.accept_unset_model_ratio_model,
    record_ip_log: req.record_ip_log,
  };
  if (type === 'webhook') {
    if (!req.webhook_url) throw invalid('Webhook地址不能为空');
    if (!isHttpUrl(req.webhook_url)) throw invalid('无效的Webhook地址');
    out.webhook_url = req.webhook_url;
    if (req.webhook_secret) out.webhook_secret = req.webhook_secret;
  }
  if (type === 'email' && req.notification_email) {
    if (!/^[^\s@]+@[^\s@]+$/.test(req.notification_email)) throw invalid('无效的邮箱地址');
    out.notification_email = req.notification_email;
  }
  if (type === 'bark') {
    if (!req.bark_url) throw invalid('Bark推送URL不能为空');
    if (!isHttpUrl(req.bark_url)) throw invalid('URL必须以http://或https://开头');
    out.bark_url = req.bark_url;
  }
  if (type === 'gotify') {
    if (!req.gotify_url) throw invalid('Gotify服务器地址不能为空');
    if (!req.gotify_token) throw invalid('Gotify令牌不能为空');
    if (!isHttpUrl(req.gotify_url)) throw invalid('URL必须以http://或https://开头');
    out.gotify_url = req.gotify_url;
    out.gotify_token = req.gotify_token;
    const p = req.gotify_priority;
    out.gotify_priority = Number.isInteger(p) && p >= 0 && p <= 10 ? p : 5;
  }
  return out;
}

/** Escapes text for the mail's HTML body. */
const html = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Notification settings and sending (new-api's NotifyUser): by the user's notify_type, email
 * (notification_email, else the account's) by default; a user with nowhere to be told is skipped.
 */
export function notificationSettings(deps: { users: UserStore; mailer: Mailer; send?: SendOptions }) {
  const { users, mailer } = deps;
  const send = deps.send ?? {};
  return {
    /** Saves the caller's setting; an empty webhook secret or Gotify token keeps the stored one. */
    async update(id: number, req: Required<UserSetting>) {
      const prev = parseSetting((await users.findById(id))?.setting);
      const setting = checkSetting({
        ...req,
        webhook_secret: req.webhook_secret || prev.webhook_secret || '',
        gotify_token: req.gotify_token || prev.gotify_token || '',
      });
      const user = await users.update(id, { setting: JSON.stringify(setting) });
      if (!user) throw notFound('用户不存在');
      return user;
    },

    /** Sends `n` to the user; false when the user has no address for the chosen way. */
    async notify(userId: number, n: Notification): Promise<boolean> {
      const user = await users.findById(userId);
      if (!user) throw notFound('用户不存在');
      const s = parseSetting(user.setting);
      switch (s.notify_type || 'email') {
        case 'webhook':
          if (!s.webhook_url) return false;
          await sendWebhook(s.webhook_url, s.webhook_secret ?? '', n, send);
          return true;
        case 'bark':
          if (!s.bark_url) return false;
          await sendBark(s.bark_url, n, send);
          return true;
        case 'gotify':
          if (!s.gotify_url || !s.gotify_token) return false;
          await sendGotify(s.gotify_url, s.gotify_token, s.gotify_priority ?? 5, n, send);
          return true;
        default: {
          const to = s.notification_email || user.email;
          if (!to) return false;
          let i = 0;
          const body = html(n.content).replace(/\{\{value\}\}/g, (m) =>
            i < n.values.length ? html(String(n.values[i++])) : m,
          );
          await mailer.send(to, n.title, body);
          return true;
        }
      }
    },
  };
}

export type NotificationSettings = ReturnType<typeof notificationSettings>;
