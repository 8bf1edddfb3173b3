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
interface EditValues {
  username: string;
  display_name: string;
  password: string;
  group: string;
  quota: number;
  remark: string;
}

const valuesOf = (user: UserRecord): EditValues => ({
  username: user.username,
  display_name: user.display_name,
  password: '',
  group: user.group,
  quota: user.quota,
  remark: user.remark ?? '',
});

/** The admin's edit form: name, display name, password, group and quota (with the add-quota modal). */
export default function EditUserForm({ user, onSaved, onCancel }: Props) {
  const { status } = useStatus();
  const [form] = Form.useForm<EditValues>();
  const quota = (Form.useWatch('quota', form) as number | undefined) ?? user.quota;
  const group = (Form.useWatch('group', form) as string | undefined) ?? user.group;
  const [groups, setGroups] = useState<string[]>([]);
  const [adding, setAdding] = useState(false);
  const [addQuota, setAddQuota] = useState(0);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    form.resetFields();
    form.setFieldsValue(valuesOf(user));
  }, [user, form]);
  useEffect(() => {
    void listGroups().then((res) => res.success && setGroups(res.data ?? []));
  }, []);

  const submit = async (values: EditValues) => {
    setSaving(true);
    const res = await updateUser({
      id: user.id,
      username: values.username,
      display_name: values.display_name,
      password: values.password || undefined,
      group: values.group,
      quota: values.quota,
      remark: values.remark,
    });
    setSaving(false);
    if (res.success) {
      Message.success(tr('user.userUpdated'));
      onSaved();
    }
  };

  return (
    <Form form={form} layout="vertical" initialValues={valuesOf(user)} onSubmit={(v: EditValues) => void submit(v)}>
      <Form.Item label={tr('common.username2')} field="username">
        <Input name="username" maxLength={12} />
      </Form.Item>
      <Form.Item label={tr('user.displayName')} field="display_name">
        <Input name="display_name" maxLength={20} />
      </Form.Item>
      <Form.Item label={tr('user.password')} field="password">
        <Input.Password name="password" placeholder={tr('user.newPasswordAtLeast8')} autoComplete="new-password" />
      </Form.Item>
      <Form.Item label={tr('common.group')} field="group">
        <Select allowCreate>
          {[...new Set([group, ...groups])].map((g) => (
            <Select.Option key={g} value={g}>
              {g}
            </Select.Option>
          ))}
        </Select>
      </Form.Item>
      <Form.Item label={tr('user.remainQuotaOf', { quota: renderQuota(quota, status) })}>
        <Space>
          <Form.Item
            field="quota"
            noStyle
            normalize={(v?: number) => Number(v ?? 0)}
            rules={[
              {
                validator: (v: number | undefined, cb) =>
                  cb(Number.isInteger(v) ? undefined : tr('user.theQuotaMustBeAn')),
              },
            ]}
          >
            <InputNumber name="quota" precision={0} placeholder={tr('user.newRemainingQuota')} />
          </Form.Item>
          <Button onClick={() => setAdding(true)}>{tr('user.addQuota')}</Button>
        </Space>
      </Form.Item>
      <Form.Item label={tr('user.remark')} field="remark">
        <Input.TextArea
          name="remark"
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
          form.setFieldValue('quota', quota + addQuota);
          setAddQuota(0);
          setAdding(false);
        }}
      >
        <Typography.Paragraph>
          {tr('user.newQuota')}
          {renderQuota(quota, status)} + {renderQuota(addQuota, status)} = {renderQuota(quota + addQuota, status)}
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
