import { ok } from '@aigw/common';
import type { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { body, flag, int32, optional, optText, ownMessages } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller } from './wire.ts';

const THRESHOLD = '预警阈值必须大于0';
ownMessages.add(THRESHOLD);

/** new-api's UpdateUserSettingRequest: same field names. */
const Setting = validate({
  body: body({
    notify_type: optText,
    quota_warning_threshold: optional(z.number({ error: THRESHOLD }).finite()),
    webhook_url: optText,
    webhook_secret: optText,
    notification_email: optText,
    bark_url: optText,
    gotify_url: optText,
    gotify_token: optText,
    gotify_priority: optional(int32()),
    accept_unset_model_ratio_model: optional(flag),
    record_ip_log: optional(flag),
  }),
});

/** PUT /api/user/setting: the caller's notification settings (shown in GET /api/user/self's `setting`). */
export function userSettingRoutes(api: Router, { clients, guard }: RouteDeps): void {
  api.put('/user/setting', guard.user, Setting, async (req, res) => {
    const b = input(req, Setting).body;
    await clients.users.updateUserSetting({
      id: caller(req).id,
      setting: {
        notifyType: b.notify_type ?? '',
        quotaWarningThreshold: b.quota_warning_threshold ?? 0,
        webhookUrl: b.webhook_url ?? '',
        webhookSecret: b.webhook_secret ?? '',
        notificationEmail: b.notification_email ?? '',
        barkUrl: b.bark_url ?? '',
        gotifyUrl: b.gotify_url ?? '',
        gotifyToken: b.gotify_token ?? '',
        gotifyPriority: b.gotify_priority ?? 0,
        acceptUnsetModelRatioModel: b.accept_unset_model_ratio_model ?? false,
        recordIpLog: b.record_ip_log ?? false,
      },
    });
    ok(res, undefined, '设置已更新');
  });
}
