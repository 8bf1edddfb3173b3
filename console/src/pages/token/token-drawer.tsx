import { Button, Drawer, Form, type FormInstance, Input, Message, Space } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { getUserGroups, getUserModels, type UserGroup } from '../../api/account.ts';
import { createTokens, getToken, updateToken } from '../../api/token.ts';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import {
  BudgetFields,
  ExpiryField,
  GroupFields,
  ModelLimitsField,
  QuotaFields,
  RateLimitFields,
} from './token-fields.tsx';
import {
  type BudgetField,
  EMPTY_TOKEN,
  spentOf,
  type TokenFormValues,
  tokenBody,
  tokenFormError,
  tokenValuesOf,
} from './token-form.ts';

const FIELDS = Object.keys(EMPTY_TOKEN) as (keyof TokenFormValues)[];
const NOTHING_SPENT: Record<BudgetField, number> = { budget_daily: 0, budget_weekly: 0, budget_monthly: 0 };

/**
 * What the drawer shows when it opens: the user's models and groups, and the edited token's values
 * and spending (a new token starts empty, in group auto when the operator makes that the default).
 */
function useTokenDrawerData(form: FormInstance<TokenFormValues>, visible: boolean, id: number | undefined) {
  const { status } = useStatus();
  const editing = id !== undefined;
  const autoByDefault = status?.default_use_auto_group === true;
  const [models, setModels] = useState<string[]>([]);
  const [groups, setGroups] = useState<Record<string, UserGroup>>({});
  const [spent, setSpent] = useState(NOTHING_SPENT);

  useEffect(() => {
    if (!visible) return;
    void getUserModels().then((res) => res.success && setModels(res.data ?? []));
    void getUserGroups().then((res) => {
      if (!res.success) return;
      setGroups(res.data ?? {});
      // new-api's DefaultUseAutoGroup: a new token starts in group auto when it is offered.
      if (!editing && autoByDefault && res.data?.auto && !form.getFieldValue('group'))
        form.setFieldValue('group', 'auto');
    });
    if (editing) {
      void getToken(id).then((res) => {
        if (!res.success || !res.data) return;
        form.setFieldsValue(tokenValuesOf(res.data));
        setSpent(spentOf(res.data));
      });
    } else form.setFieldsValue(EMPTY_TOKEN);
  }, [visible, editing, id, autoByDefault, form]);

  return { models, groups, spent };
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
  const editing = id !== undefined;
  const [form] = Form.useForm<TokenFormValues>();
  const { models, groups, spent } = useTokenDrawerData(form, visible, id);
  const [saving, setSaving] = useState(false);

  const close = () => {
    onClose();
    // The drawer closes first, then resets (spec 02 section 9: 500 ms).
    setTimeout(() => form.setFieldsValue(EMPTY_TOKEN), 500);
  };

  const submit = async () => {
    const values = form.getFieldsValue(FIELDS) as TokenFormValues;
    const error = tokenFormError(values, editing);
    if (error) {
      Message.error(error);
      return;
    }
    const body = tokenBody(values);
    setSaving(true);
    const res = editing ? await updateToken({ ...body, id }) : await createTokens({ ...body, count: values.count });
    setSaving(false);
    if (!res.success) return;
    Message.success(
      editing ? tr('token.tokenUpdated') : tr('token.createdN', { n: Array.isArray(res.data) ? res.data.length : 1 }),
    );
    onSaved();
    close();
  };

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
      <Form form={form} layout="vertical" initialValues={EMPTY_TOKEN}>
        <Form.Item label={tr('common.name')} required={!editing} field="name" normalize={(v?: string) => v ?? ''}>
          <Input name="token-name" placeholder={tr('common.enterAName')} />
        </Form.Item>
        <ExpiryField form={form} />
        <QuotaFields form={form} editing={editing} />
        <ModelLimitsField form={form} models={models} />
        <Form.Item label={tr('token.ipAllowlist')} extra={tr('token.oneIpOrCidrPer')} field="allow_ips">
          <Input.TextArea
            placeholder={`${tr('common.forExample')}\n127.0.0.1\n10.0.0.0/8`}
            autoSize={{ minRows: 2, maxRows: 6 }}
          />
        </Form.Item>
        <RateLimitFields />
        <BudgetFields form={form} editing={editing} spent={spent} />
        <GroupFields form={form} groups={groups} />
      </Form>
    </Drawer>
  );
}
