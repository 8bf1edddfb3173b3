import { Button, Card, Form, Input, InputNumber, Message, Radio } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { type NotifySetting, parseNotifySetting, updateNotifySetting } from '../../api/notify-setting.ts';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import { quotaPerUnitOf, renderQuota } from '../../utils/format.ts';

const isHttpUrl = (s: string) => /^https?:\/\/\S+$/i.test(s.trim());

/**
 * The first problem of a notification setting (a locale key), as the server checks it (new-api's
 * UpdateUserSetting); `tokenStored`: a Gotify token is already saved (an empty one keeps it).
 */
export function notifySettingProblem(s: NotifySetting, tokenStored: boolean): Parameters<typeof tr>[0] | undefined {
  if (!(s.quota_warning_threshold > 0)) return 'setting.notifyThresholdPositive';
  if (s.notify_type === 'email' && s.notification_email && !/^[^\s@]+@[^\s@]+$/.test(s.notification_email))
    return 'setting.notifyEmailInvalid';
  if (s.notify_type === 'webhook' && !isHttpUrl(s.webhook_url)) return 'setting.notifyWebhookInvalid';
  if (s.notify_type === 'bark' && !isHttpUrl(s.bark_url)) return 'setting.notifyUrlMustHttp';
  if (s.notify_type === 'gotify') {
    if (!isHttpUrl(s.gotify_url)) return 'setting.notifyUrlMustHttp';
    if (!s.gotify_token && !tokenStored) return 'setting.notifyGotifyTokenEmpty';
  }
  return undefined;
}

/** Personal notification settings: how the quota warning reaches the user, and below what balance. */
export default function NotificationCard({ setting, onSaved }: { setting?: string; onSaved: () => void }) {
  const { status } = useStatus();
  // A new setting starts at one currency unit (the server uses QuotaRemindThreshold until one is saved).
  const defaultThreshold = quotaPerUnitOf(status);
  const [form, setForm] = useState<NotifySetting>(() => parseNotifySetting(setting, defaultThreshold));
  const [saving, setSaving] = useState(false);
  useEffect(() => setForm(parseNotifySetting(setting, defaultThreshold)), [setting, defaultThreshold]);
  const set = <K extends keyof NotifySetting>(key: K, value: NotifySetting[K]) =>
    setForm((f) => ({ ...f, [key]: value }));
  const stored = parseNotifySetting(setting, defaultThreshold);

  const save = async () => {
    const problem = notifySettingProblem(form, stored.notify_type === 'gotify' && Boolean(stored.gotify_url));
    if (problem) {
      Message.error(tr(problem));
      return;
    }
    setSaving(true);
    const res = await updateNotifySetting(form);
    setSaving(false);
    if (!res.success) return;
    Message.success(tr('setting.notifySaved'));
    onSaved();
  };

  return (
    <Card title={tr('setting.notifications')} bordered={false} data-card="notifications">
      <Form layout="vertical">
        <Form.Item label={tr('setting.notifyType')}>
          <Radio.Group type="button" value={form.notify_type} onChange={(v) => set('notify_type', v)}>
            <Radio value="email">{tr('setting.notifyEmail')}</Radio>
            <Radio value="webhook">Webhook</Radio>
            <Radio value="bark">Bark</Radio>
            <Radio value="gotify">Gotify</Radio>
          </Radio.Group>
        </Form.Item>
        <Form.Item
          label={tr('setting.notifyThreshold', { quota: renderQuota(form.quota_warning_threshold, status) })}
          extra={tr('setting.notifyThresholdHelp')}
        >
          <InputNumber
            name="quota_warning_threshold"
            value={form.quota_warning_threshold}
            min={1}
            precision={0}
            onChange={(v) => set('quota_warning_threshold', v ?? 0)}
          />
        </Form.Item>
        {form.notify_type === 'email' && (
          <Form.Item label={tr('setting.notifyEmailAddress')} extra={tr('setting.notifyEmailHelp')}>
            <Input value={form.notification_email} onChange={(v) => set('notification_email', v)} />
          </Form.Item>
        )}
        {form.notify_type === 'webhook' && (
          <>
            <Form.Item label={tr('setting.notifyWebhookUrl')} required>
              <Input value={form.webhook_url} onChange={(v) => set('webhook_url', v)} placeholder="https://" />
            </Form.Item>
            <Form.Item label={tr('setting.notifyWebhookSecret')} extra={tr('setting.notifySecretHelp')}>
              <Input.Password value={form.webhook_secret} onChange={(v) => set('webhook_secret', v)} />
            </Form.Item>
          </>
        )}
        {form.notify_type === 'bark' && (
          <Form.Item label={tr('setting.notifyBarkUrl')} required extra={tr('setting.notifyBarkHelp')}>
            <Input
              value={form.bark_url}
              onChange={(v) => set('bark_url', v)}
              placeholder="https://api.day.app/KEY/{{title}}/{{content}}"
            />
          </Form.Item>
        )}
        {form.notify_type === 'gotify' && (
          <>
            <Form.Item label={tr('setting.notifyGotifyUrl')} required>
              <Input value={form.gotify_url} onChange={(v) => set('gotify_url', v)} placeholder="https://" />
            </Form.Item>
            <Form.Item label={tr('setting.notifyGotifyToken')} extra={tr('setting.notifySecretHelp')}>
              <Input.Password value={form.gotify_token} onChange={(v) => set('gotify_token', v)} />
            </Form.Item>
            <Form.Item label={tr('setting.notifyGotifyPriority')}>
              <InputNumber
                value={form.gotify_priority}
                min={0}
                max={10}
                precision={0}
                onChange={(v) => set('gotify_priority', v ?? 5)}
              />
            </Form.Item>
          </>
        )}
        <Button type="primary" loading={saving} onClick={() => void save()}>
          {tr('setting.notifySave')}
        </Button>
      </Form>
    </Card>
  );
}
