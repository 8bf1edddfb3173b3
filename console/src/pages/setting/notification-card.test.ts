import { describe, expect, it } from 'vitest';
import { parseNotifySetting } from '../../api/notify-setting.ts';
import { notifySettingProblem } from './notification-card.tsx';

describe('personal notification settings', () => {
  it('when the stored setting is read, then its fields fill the form and the write-only secrets stay empty', () => {
    const s = parseNotifySetting(
      '{"notify_type":"gotify","quota_warning_threshold":2000,"gotify_url":"https://g.example","gotify_priority":8}',
      500_000,
    );
    expect(s).toMatchObject({
      notify_type: 'gotify',
      quota_warning_threshold: 2000,
      gotify_priority: 8,
      gotify_token: '',
    });
    expect(parseNotifySetting('', 500_000)).toMatchObject({ notify_type: 'email', quota_warning_threshold: 500_000 });
    expect(parseNotifySetting('not json', 7).quota_warning_threshold).toBe(7);
  });

  it("when a setting breaks new-api's rules, then the problem is named before saving", () => {
    const base = parseNotifySetting('', 1000);
    expect(notifySettingProblem(base, false)).toBeUndefined();
    expect(notifySettingProblem({ ...base, quota_warning_threshold: 0 }, false)).toBe(
      'setting.notifyThresholdPositive',
    );
    expect(notifySettingProblem({ ...base, notification_email: 'nope' }, false)).toBe('setting.notifyEmailInvalid');
    expect(notifySettingProblem({ ...base, notify_type: 'webhook', webhook_url: 'ftp://x' }, false)).toBe(
      'setting.notifyWebhookInvalid',
    );
    expect(notifySettingProblem({ ...base, notify_type: 'bark', bark_url: '' }, false)).toBe(
      'setting.notifyUrlMustHttp',
    );
    const gotify = { ...base, notify_type: 'gotify' as const, gotify_url: 'https://g.example' };
    expect(notifySettingProblem(gotify, false)).toBe('setting.notifyGotifyTokenEmpty');
    expect(notifySettingProblem(gotify, true)).toBeUndefined();
  });
});
