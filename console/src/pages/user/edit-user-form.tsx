import {
  Button,
  Form,
  Input,
  InputNumber,
  Message,
  Modal,
  Popconfirm,
  Select,
  Space,
  Typography,
} from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import type { UserRecord } from '../../api/account.ts';
import { listGroups, updateUser } from '../../api/admin-user.ts';
import { adminResetPasskey } from '../../api/passkey.ts';
import { adminDisableTwoFactor } from '../../api/security.ts';
import { tr } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import { renderQuota } from '../../utils/format.ts';

interface Props {
  user: UserRecord;
  onSaved: () => void;
  onCancel?: () => void;
}

/** The admin's edit form: name, display name, password, group and quota (with the add-quota modal). */
export default function EditUserForm({ user, onSaved, onCancel }: Props) {
  const { status } = useStatus();
  const [form, setForm] = useState({
    username: user.username,
    display_name: user.display_name,
    password: '',
    group: user.group,
    quota: user.quota,
    remark: user.remark ?? '',
  });
  const [groups, setGroups] = useState<string[]>([]);
  const [adding, setAdding] = useState(false);
  const [addQuota, setAddQuota] = useState(0);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    setForm({
      username: user.username,
      display_name: user.display_name,
      password: '',
      group: user.group,
      quota: user.quota,
      remark: user.remark ?? '',
    });
  }, [user]);
  useEffect(() => {
    void listGroups().then((res) => res.success && setGroups(res.data ?? []));
  }, []);

  const submit = async () => {
    if (!Number.isInteger(form.quota)) {
      Message.error(tr('user.theQuotaMustBeAn'));
      return;
    }
    setSaving(true);
    const res = await updateUser({
      id: user.id,
      username: form.username,
      display_name: form.display_name,
      password: form.password || undefined,
      group: form.group,
      quota: form.quota,
      remark: form.remark,
    });
    setSaving(false);
    if (res.success) {
      Message.success(tr('user.userUpdated'));
      onSaved();
    }
  };

  return (
    <Form layout="vertical" onSubmit={() => void submit()}>
      <Form.Item label={tr('common.username2')}>
        <Input
          name="username"
          value={form.username}
          onChange={(v) => setForm((f) => ({ ...f, username: v }))}
          maxLength={12}
        />
      </Form.Item>
      <Form.Item label={tr('user.displayName')}>
        <Input
          name="display_name"
          value={form.display_name}
          onChange={(v) => setForm((f) => ({ ...f, display_name: v }))}
          maxLength={20}
        />
      </Form.Item>
      <Form.Item label={tr('user.password')}>
        <Input.Password
          name="password"
          value={form.password}
          onChange={(v) => setForm((f) => ({ ...f, password: v }))}
          placeholder={tr('user.newPasswordAtLeast8')}
          autoComplete="new-password"
        />
      </Form.Item>
      <Form.Item label={tr('common.group')}>
        <Select value={form.group} onChange={(v: string) => setForm((f) => ({ ...f, group: v }))} allowCreate>
          {[...new Set([form.group, ...groups])].map((g) => (
            <Select.Option key={g} value={g}>
              {g}
            </Select.Option>
          ))}
        </Select>
      </Form.Item>
      <Form.Item label={tr('user.remainQuotaOf', { quota: renderQuota(form.quota, status) })}>
        <Space>
          <InputNumber
            name="quota"
            value={form.quota}
            precision={0}
            onChange={(v) => setForm((f) => ({ ...f, quota: Number(v ?? 0) }))}
            placeholder={tr('user.newRemainingQuota')}
          />
          <Button onClick={() => setAdding(true)}>{tr('user.addQuota')}</Button>
        </Space>
      </Form.Item>
      <Form.Item label={tr('user.remark')}>
        <Input.TextArea
          name="remark"
          value={form.remark}
          onChange={(v) => setForm((f) => ({ ...f, remark: v }))}
          maxLength={255}
          placeholder={tr('user.remarkPlaceholder')}
          autoSize={{ minRows: 1, maxRows: 4 }}
        />
      </Form.Item>
      <Space>
        <Button type="primary" htmlType="submit" loading={saving}>
          {tr('common.submit')}
        </Button>
        <Popconfirm
          title={tr('user.resetTwoFactorConfirm')}
          onOk={async () => {
            const res = await adminDisableTwoFactor(user.id);
            if (res.success) Message.success(res.message || tr('user.resetTwoFactor'));
          }}
        >
          <Button status="warning">{tr('user.resetTwoFactor')}</Button>
        </Popconfirm>
        <Popconfirm
          title={tr('user.resetPasskeyConfirm')}
          onOk={async () => {
            const res = await adminResetPasskey(user.id);
            if (res.success) Message.success(res.message || tr('user.resetPasskey'));
          }}
        >
          <Button status="warning">{tr('user.resetPasskey')}</Button>
        </Popconfirm>
        {onCancel && <Button onClick={onCancel}>{tr('common.cancel')}</Button>}
      </Space>
      <Modal
        title={tr('user.addQuota')}
        visible={adding}
        onCancel={() => setAdding(false)}
        onOk={() => {
          setForm((f) => ({ ...f, quota: f.quota + addQuota }));
          setAddQuota(0);
          setAdding(false);
        }}
      >
        <Typography.Paragraph>
          {tr('user.newQuota')}
          {renderQuota(form.quota, status)} + {renderQuota(addQuota, status)} ={' '}
          {renderQuota(form.quota + addQuota, status)}
        </Typography.Paragraph>
        <InputNumber
          name="add_quota"
          value={addQuota}
          precision={0}
          onChange={(v) => setAddQuota(Number(v ?? 0))}
          placeholder={tr('user.quotaToAddMayBe')}
        />
      </Modal>
    </Form>
  );
}
