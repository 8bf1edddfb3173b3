import {
  Alert,
  Button,
  DatePicker,
  Form,
  type FormInstance,
  InputNumber,
  Select,
  Space,
  Switch,
  Typography,
} from '@arco-design/web-react';
import type { UserGroup } from '../../api/account.ts';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import { renderQuota } from '../../utils/format.ts';
import {
  BUDGET_FIELDS,
  type BudgetField,
  COUNT_PRESETS,
  expiryIn,
  LIMIT_FIELDS,
  MAX_TOKEN_LIMIT,
  QUOTA_PRESETS,
  type TokenFormValues,
} from './token-form.ts';

type TokenForm = FormInstance<TokenFormValues>;

/** A cleared number field holds this instead of nothing. */
const numberOr = (fallback: number) => (v?: number) => v ?? fallback;

/** The expiry: a date picker (seconds in the form, -1 never) and the quick buttons. */
export function ExpiryField({ form }: { form: TokenForm }) {
  const set = (choice: Parameters<typeof expiryIn>[0]) => form.setFieldValue('expired_time', expiryIn(choice));
  return (
    <Form.Item label={tr('token.expires')}>
      <Form.Item
        field="expired_time"
        noStyle
        formatter={(v?: number) => (v === -1 || v === undefined ? undefined : v * 1000)}
        getValueFromEvent={(_s: string, d?: { valueOf(): number }) => (d ? Math.floor(d.valueOf() / 1000) : -1)}
      >
        <DatePicker showTime style={{ width: '100%' }} placeholder={tr('token.neverExpires')} />
      </Form.Item>
      <Space style={{ marginTop: 8 }}>
        <Button size="small" onClick={() => set('never')}>
          {tr('token.neverExpires')}
        </Button>
        <Button size="small" onClick={() => set('hour')}>
          {tr('token.oneHour')}
        </Button>
        <Button size="small" onClick={() => set('day')}>
          {tr('token.oneDay')}
        </Button>
        <Button size="small" onClick={() => set('month')}>
          {tr('token.oneMonth')}
        </Button>
      </Space>
    </Form.Item>
  );
}

/** The quota with its presets, the count of a new token with its presets, and the unlimited switch. */
export function QuotaFields({ form, editing }: { form: TokenForm; editing: boolean }) {
  const { status } = useStatus();
  const unlimited = Form.useWatch('unlimited_quota', form) as boolean;
  const quota = Form.useWatch('remain_quota', form) as number;
  return (
    <>
      <Alert type="warning" style={{ marginBottom: 16 }} content={tr('token.noteATokenSQuota')} />
      <Form.Item label={tr('common.quotaOf', { quota: renderQuota(quota ?? 0, status) })}>
        <Form.Item field="remain_quota" noStyle normalize={numberOr(0)}>
          <InputNumber min={0} precision={0} disabled={unlimited} />
        </Form.Item>
        <Space wrap style={{ marginTop: 8 }}>
          {QUOTA_PRESETS.map((p) => (
            <Button
              key={p.label}
              size="small"
              disabled={unlimited}
              onClick={() => form.setFieldValue('remain_quota', p.quota)}
            >
              {p.label}
            </Button>
          ))}
        </Space>
      </Form.Item>
      {!editing && (
        <Form.Item label={tr('token.count')}>
          <Form.Item field="count" noStyle normalize={numberOr(1)}>
            <InputNumber min={1} max={100} precision={0} disabled={unlimited} />
          </Form.Item>
          <Space wrap style={{ marginTop: 8 }}>
            {COUNT_PRESETS.map((n) => (
              <Button key={n} size="small" disabled={unlimited} onClick={() => form.setFieldValue('count', n)}>
                {tr('token.countN', { n })}
              </Button>
            ))}
          </Space>
        </Form.Item>
      )}
      <Form.Item label={tr('token.unlimitedQuota')} field="unlimited_quota" triggerPropName="checked">
        <Switch />
      </Form.Item>
    </>
  );
}

/** The model limits: on or off, and the models the token may use (from the user's models). */
export function ModelLimitsField({ form, models }: { form: TokenForm; models: string[] }) {
  const enabled = Form.useWatch('model_limits_enabled', form) as boolean;
  return (
    <Form.Item label={tr('token.modelLimits')}>
      <Space direction="vertical" style={{ width: '100%' }}>
        <Form.Item field="model_limits_enabled" noStyle triggerPropName="checked">
          <Switch />
        </Form.Item>
        <Form.Item field="model_limits" noStyle>
          <Select mode="multiple" placeholder={tr('token.selectTheModelsThisToken')} disabled={!enabled} allowClear>
            {models.map((m) => (
              <Select.Option key={m} value={m}>
                {m}
              </Select.Option>
            ))}
          </Select>
        </Form.Item>
      </Space>
    </Form.Item>
  );
}

/** The token's own RPM, TPM and concurrent-request limits (0 no limit; the relay enforces them). */
export function RateLimitFields() {
  return (
    <>
      {LIMIT_FIELDS.map(([field, label]) => (
        <Form.Item
          key={field}
          label={tr(label)}
          extra={tr('token.limitZeroMeansNone')}
          field={field}
          normalize={numberOr(0)}
        >
          <InputNumber min={0} max={MAX_TOKEN_LIMIT} precision={0} step={1} />
        </Form.Item>
      ))}
    </>
  );
}

/** The period budgets, each labelled with its amount; an edited token shows what it spent. */
export function BudgetFields({
  form,
  editing,
  spent,
}: {
  form: TokenForm;
  editing: boolean;
  spent: Record<BudgetField, number>;
}) {
  const { status } = useStatus();
  const values = {
    budget_daily: Form.useWatch('budget_daily', form) as number,
    budget_weekly: Form.useWatch('budget_weekly', form) as number,
    budget_monthly: Form.useWatch('budget_monthly', form) as number,
  };
  return (
    <>
      {BUDGET_FIELDS.map(([field, label]) => (
        <Form.Item
          key={field}
          label={tr('token.budgetOf', { field: tr(label), quota: renderQuota(values[field] ?? 0, status) })}
          extra={
            editing && values[field] > 0
              ? tr('token.budgetSpent', { spent: renderQuota(spent[field], status) })
              : tr('token.budgetZeroMeansNone')
          }
          field={field}
          normalize={numberOr(0)}
        >
          <InputNumber name={field} min={0} precision={0} step={1} />
        </Form.Item>
      ))}
    </>
  );
}

/** The token's group (with the groups the user may choose and their ratios) and, for auto, cross-group retry. */
export function GroupFields({ form, groups }: { form: TokenForm; groups: Record<string, UserGroup> }) {
  const group = Form.useWatch('group', form) as string;
  const names = Object.keys(groups);
  return (
    <>
      <Form.Item label={tr('token.tokenGroup')}>
        {names.length > 0 ? (
          <Form.Item
            field="group"
            noStyle
            formatter={(v?: string) => v || undefined}
            normalize={(v?: string) => v ?? ''}
          >
            <Select placeholder={tr('token.defaultsToTheUserS')} allowClear>
              {names.map((g) => {
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
          </Form.Item>
        ) : (
          <Typography.Text type="secondary">{tr('token.theAdministratorHasNotSet')}</Typography.Text>
        )}
      </Form.Item>
      {group === 'auto' && (
        <Form.Item
          label={tr('token.crossGroupRetry')}
          extra={tr('token.crossGroupRetryHint')}
          field="cross_group_retry"
          triggerPropName="checked"
        >
          <Switch />
        </Form.Item>
      )}
    </>
  );
}
