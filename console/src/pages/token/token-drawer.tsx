import {
  Alert,
  Button,
  DatePicker,
  Drawer,
  Form,
  Input,
  InputNumber,
  Message,
  Select,
  Space,
  Switch,
  Typography,
} from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { getUserGroups, getUserModels, type UserGroup } from '../../api/account.ts';
import { createTokens, getToken, type TokenInput, updateToken } from '../../api/token.ts';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import { renderQuota } from '../../utils/format.ts';

/** Quota presets of spec 02 section 5 (500000 units = 1 dollar). */
export const QUOTA_PRESETS = [
  { label: '1$', quota: 500000 },
  { label: '10$', quota: 5000000 },
  { label: '50$', quota: 25000000 },
  { label: '100$', quota: 50000000 },
  { label: '500$', quota: 250000000 },
  { label: '1000$', quota: 500000000 },
];
export const COUNT_PRESETS = [10, 20, 30, 100];

interface FormState {
  name: string;
  remain_quota: number;
  unlimited_quota: boolean;
  expired_time: number;
  count: number;
  model_limits_enabled: boolean;
  model_limits: string[];
  allow_ips: string;
  group: string;
  cross_group_retry: boolean;
  rpm_limit: number;
  tpm_limit: number;
  concurrency_limit: number;
  budget_daily: number;
  budget_weekly: number;
  budget_monthly: number;
}

/** The largest RPM, TPM or concurrency limit the server accepts. */
export const MAX_TOKEN_LIMIT = 1_000_000_000;
const LIMIT_FIELDS = [
  ['rpm_limit', 'token.rpmLimit'],
  ['tpm_limit', 'token.tpmLimit'],
  ['concurrency_limit', 'token.concurrencyLimit'],
] as const;

/** The first invalid rate limit field (its label key), or undefined when all are whole numbers in range. */
export function invalidLimit(
  form: Pick<FormState, 'rpm_limit' | 'tpm_limit' | 'concurrency_limit'>,
): (typeof LIMIT_FIELDS)[number][1] | undefined {
  for (const [field, label] of LIMIT_FIELDS) {
    const v = form[field];
    if (!Number.isInteger(v) || v < 0 || v > MAX_TOKEN_LIMIT) return label;
  }
  return undefined;
}

/** Period budgets (quota; 0 none): the relay refuses a token's requests once one is spent. */
export const BUDGET_FIELDS = [
  ['budget_daily', 'token.budgetDaily'],
  ['budget_weekly', 'token.budgetWeekly'],
  ['budget_monthly', 'token.budgetMonthly'],
] as const;

/** The first invalid budget field (its label key), or undefined when all are whole numbers from 0. */
export function invalidBudget(
  form: Pick<FormState, 'budget_daily' | 'budget_weekly' | 'budget_monthly'>,
): (typeof BUDGET_FIELDS)[number][1] | undefined {
  for (const [field, label] of BUDGET_FIELDS) {
    const v = form[field];
    if (!Number.isSafeInteger(v) || v < 0) return label;
  }
  return undefined;
}

const EMPTY: FormState = {
  name: '',
  remain_quota: 500000,
  unlimited_quota: false,
  expired_time: -1,
  count: 1,
  model_limits_enabled: false,
  model_limits: [],
  allow_ips: '',
  group: '',
  cross_group_retry: false,
  rpm_limit: 0,
  tpm_limit: 0,
  concurrency_limit: 0,
  budget_daily: 0,
  budget_weekly: 0,
  budget_monthly: 0,
};

/** Expiry quick buttons: never, one hour, one day, one month (from now). */
export function expiryIn(choice: 'never' | 'hour' | 'day' | 'month', now = Date.now()): number {
  if (choice === 'never') return -1;
  const seconds = { hour: 3600, day: 86400, month: 30 * 86400 }[choice];
  return Math.floor(now / 1000) + seconds;
}

/**
 * Token editor (create when `id` is undefined): name, quota presets with the unlimited toggle,
 * creation count, expiry quick buttons, model limits, IP allow-list, group, and the token's own
 * RPM, TPM and concurrent-request limits (0 no limit; the relay enforces them).
 */
export default function TokenDrawer({
  visible,
  id,
  onClose,
  onSaved,
}: {
  visible: boolean;
  id?: number;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { status } = useStatus();
  const editing = id !== undefined;
  const autoByDefault = status?.default_use_auto_group === true;
  const [form, setForm] = useState<FormState>(EMPTY);
  const [models, setModels] = useState<string[]>([]);
  const [groups, setGroups] = useState<Record<string, UserGroup>>({});
  const [saving, setSaving] = useState(false);
  // What the edited token spent in its current day, week and month (shown beside its budgets).
  const [spent, setSpent] = useState<Record<(typeof BUDGET_FIELDS)[number][0], number>>({
    budget_daily: 0,
    budget_weekly: 0,
    budget_monthly: 0,
  });
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => setForm((f) => ({ ...f, [key]: value }));

  useEffect(() => {
    if (!visible) return;
    void getUserModels().then((res) => res.success && setModels(res.data ?? []));
    void getUserGroups().then((res) => {
      if (!res.success) return;
      setGroups(res.data ?? {});
      // new-api's DefaultUseAutoGroup: a new token starts in group auto when it is offered.
      if (!editing && autoByDefault && res.data?.auto) setForm((f) => (f.group ? f : { ...f, group: 'auto' }));
    });
    if (editing) {
      void getToken(id).then((res) => {
        if (!res.success || !res.data) return;
        const t = res.data;
        setForm({
          name: t.name,
          remain_quota: t.remain_quota,
          unlimited_quota: t.unlimited_quota,
          expired_time: t.expired_time,
          count: 1,
          model_limits_enabled: t.model_limits_enabled,
          model_limits: t.model_limits ? t.model_limits.split(',') : [],
          allow_ips: t.allow_ips,
          group: t.group,
          cross_group_retry: t.cross_group_retry ?? false,
          rpm_limit: t.rpm_limit ?? 0,
          tpm_limit: t.tpm_limit ?? 0,
          concurrency_limit: t.concurrency_limit ?? 0,
          budget_daily: t.budget_daily ?? 0,
          budget_weekly: t.budget_weekly ?? 0,
          budget_monthly: t.budget_monthly ?? 0,
        });
        setSpent({
          budget_daily: t.budget_daily_used ?? 0,
          budget_weekly: t.budget_weekly_used ?? 0,
          budget_monthly: t.budget_monthly_used ?? 0,
        });
      });
    } else setForm(EMPTY);
  }, [visible, editing, id, autoByDefault]);

  const close = () => {
    onClose();
    // The drawer closes first, then resets (spec 02 section 9: 500 ms).
    setTimeout(() => setForm(EMPTY), 500);
  };

  const submit = async () => {
    if (!editing && form.name.trim() === '') {
      Message.error(tr('token.theTokenNameCannotBe'));
      return;
    }
    if (form.expired_time !== -1 && !Number.isFinite(form.expired_time)) {
      Message.error(tr('token.invalidExpiryTime'));
      return;
    }
    const bad = invalidLimit(form);
    if (bad) {
      Message.error(tr('token.limitMustBeWhole', { field: tr(bad), max: MAX_TOKEN_LIMIT }));
      return;
    }
    const badBudget = invalidBudget(form);
    if (badBudget) {
      Message.error(tr('token.budgetMustBeWhole', { field: tr(badBudget) }));
      return;
    }
    const body: TokenInput = {
      name: form.name.trim(),
      remain_quota: form.remain_quota,
      unlimited_quota: form.unlimited_quota,
      expired_time: form.expired_time,
      model_limits_enabled: form.model_limits_enabled,
      model_limits: form.model_limits,
      allow_ips: form.allow_ips,
      group: form.group,
      cross_group_retry: form.group === 'auto' && form.cross_group_retry,
      rpm_limit: form.rpm_limit,
      tpm_limit: form.tpm_limit,
      concurrency_limit: form.concurrency_limit,
      budget_daily: form.budget_daily,
      budget_weekly: form.budget_weekly,
      budget_monthly: form.budget_monthly,
    };
    setSaving(true);
    const res = editing ? await updateToken({ ...body, id }) : await createTokens({ ...body, count: form.count });
    setSaving(false);
    if (!res.success) return;
    Message.success(
      editing ? tr('token.tokenUpdated') : tr('token.createdN', { n: Array.isArray(res.data) ? res.data.length : 1 }),
    );
    onSaved();
    close();
  };

  const groupNames = Object.keys(groups);

  return (
    <Drawer
      width={560}
      title={editing ? tr('token.editToken') : tr('token.newToken')}
      visible={visible}
      onCancel={close}
      footer={
        <Space>
          <Button onClick={close}>{tr('common.cancel')}</Button>
          <Button type="primary" loading={saving} onClick={() => void submit()}>
            {tr('common.submit')}
          </Button>
        </Space>
      }
    >
      <Form layout="vertical">
        <Form.Item label={tr('common.name')} required={!editing}>
          <Input
            name="token-name"
            value={form.name}
            onChange={(v) => set('name', v)}
            placeholder={tr('common.enterAName')}
          />
        </Form.Item>
        <Form.Item label={tr('token.expires')}>
          <DatePicker
            showTime
            style={{ width: '100%' }}
            placeholder={tr('token.neverExpires')}
            value={form.expired_time === -1 ? undefined : form.expired_time * 1000}
            onChange={(_s, d) => set('expired_time', d ? Math.floor(d.valueOf() / 1000) : -1)}
          />
          <Space style={{ marginTop: 8 }}>
            <Button size="small" onClick={() => set('expired_time', expiryIn('never'))}>
              {tr('token.neverExpires')}
            </Button>
            <Button size="small" onClick={() => set('expired_time', expiryIn('hour'))}>
              {tr('token.oneHour')}
            </Button>
            <Button size="small" onClick={() => set('expired_time', expiryIn('day'))}>
              {tr('token.oneDay')}
            </Button>
            <Button size="small" onClick={() => set('expired_time', expiryIn('month'))}>
              {tr('token.oneMonth')}
            </Button>
          </Space>
        </Form.Item>
        <Alert type="warning" style={{ marginBottom: 16 }} content={tr('token.noteATokenSQuota')} />
        <Form.Item label={tr('common.quotaOf', { quota: renderQuota(form.remain_quota, status) })}>
          <InputNumber
            value={form.remain_quota}
            min={0}
            precision={0}
            disabled={form.unlimited_quota}
            onChange={(v) => set('remain_quota', v ?? 0)}
          />
          <Space wrap style={{ marginTop: 8 }}>
            {QUOTA_PRESETS.map((p) => (
              <Button
                key={p.label}
                size="small"
                disabled={form.unlimited_quota}
                onClick={() => set('remain_quota', p.quota)}
              >
                {p.label}
              </Button>
            ))}
          </Space>
        </Form.Item>
        {!editing && (
          <Form.Item label={tr('token.count')}>
            <InputNumber
              value={form.count}
              min={1}
              max={100}
              precision={0}
              disabled={form.unlimited_quota}
              onChange={(v) => set('count', v ?? 1)}
            />
            <Space wrap style={{ marginTop: 8 }}>
              {COUNT_PRESETS.map((n) => (
                <Button key={n} size="small" disabled={form.unlimited_quota} onClick={() => set('count', n)}>
                  {tr('token.countN', { n })}
                </Button>
              ))}
            </Space>
          </Form.Item>
        )}
        <Form.Item label={tr('token.unlimitedQuota')}>
          <Switch checked={form.unlimited_quota} onChange={(v) => set('unlimited_quota', v)} />
        </Form.Item>
        <Form.Item label={tr('token.modelLimits')}>
          <Space direction="vertical" style={{ width: '100%' }}>
            <Switch checked={form.model_limits_enabled} onChange={(v) => set('model_limits_enabled', v)} />
            <Select
              mode="multiple"
              placeholder={tr('token.selectTheModelsThisToken')}
              disabled={!form.model_limits_enabled}
              value={form.model_limits}
              onChange={(v: string[]) => set('model_limits', v)}
              allowClear
            >
              {models.map((m) => (
                <Select.Option key={m} value={m}>
                  {m}
                </Select.Option>
              ))}
            </Select>
          </Space>
        </Form.Item>
        <Form.Item label={tr('token.ipAllowlist')} extra={tr('token.oneIpOrCidrPer')}>
          <Input.TextArea
            value={form.allow_ips}
            onChange={(v) => set('allow_ips', v)}
            placeholder={`${tr('common.forExample')}\n127.0.0.1\n10.0.0.0/8`}
            autoSize={{ minRows: 2, maxRows: 6 }}
          />
        </Form.Item>
        {LIMIT_FIELDS.map(([field, label]) => (
          <Form.Item key={field} label={tr(label)} extra={tr('token.limitZeroMeansNone')}>
            <InputNumber
              value={form[field]}
              min={0}
              max={MAX_TOKEN_LIMIT}
              precision={0}
              step={1}
              onChange={(v) => set(field, v ?? 0)}
            />
          </Form.Item>
        ))}
        {BUDGET_FIELDS.map(([field, label]) => (
          <Form.Item
            key={field}
            label={tr('token.budgetOf', { field: tr(label), quota: renderQuota(form[field], status) })}
            extra={
              editing && form[field] > 0
                ? tr('token.budgetSpent', { spent: renderQuota(spent[field], status) })
                : tr('token.budgetZeroMeansNone')
            }
          >
            <InputNumber
              name={field}
              value={form[field]}
              min={0}
              precision={0}
              step={1}
              onChange={(v) => set(field, v ?? 0)}
            />
          </Form.Item>
        ))}
        <Form.Item label={tr('token.tokenGroup')}>
          {groupNames.length > 0 ? (
            <Select
              value={form.group || undefined}
              placeholder={tr('token.defaultsToTheUserS')}
              onChange={(v: string) => set('group', v ?? '')}
              allowClear
            >
              {groupNames.map((g) => {
                const ratio = groups[g]?.ratio;
                return (
                  <Select.Option key={g} value={g}>
                    {tr('token.groupOption', { name: groups[g]?.desc || g, group: g })}
                    {' · '}
                    {typeof ratio === 'number' ? tr('token.groupRatio', { ratio }) : tr('token.groupAuto')}
                  </Select.Option>
                );
              })}
            </Select>
          ) : (
            <Typography.Text type="secondary">{tr('token.theAdministratorHasNotSet')}</Typography.Text>
          )}
        </Form.Item>
        {form.group === 'auto' && (
          <Form.Item label={tr('token.crossGroupRetry')} extra={tr('token.crossGroupRetryHint')}>
            <Switch checked={form.cross_group_retry} onChange={(v) => set('cross_group_retry', v)} />
          </Form.Item>
        )}
      </Form>
    </Drawer>
  );
}
