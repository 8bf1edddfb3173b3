import { Button, Form, Image, Input, Message, Modal, Typography } from '@arco-design/web-react';
import { useState } from 'react';
import { bindEmail, deleteSelf, sendVerificationCode, updateSelf, wechatBind } from '../../api/account.ts';
import { useStatus } from '../../store/status-context.tsx';
import { useCountdown } from '../../utils/use-countdown.ts';

interface DialogProps {
  visible: boolean;
  onClose: () => void;
}

/** Binds an email with a mailed code (30 s resend lock). */
export function EmailBindModal({ visible, onClose, onBound }: DialogProps & { onBound: () => void }) {
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const resend = useCountdown(30);
  const send = async () => {
    if (!email) {
      Message.error('请输入邮箱！');
      return;
    }
    resend.start();
    const res = await sendVerificationCode(email);
    if (res.success) Message.success('验证码发送成功，请检查邮箱！');
  };
  const bind = async () => {
    if (!email) {
      Message.error('请输入邮箱！');
      return;
    }
    if (!code) {
      Message.error('请输入邮箱验证码！');
      return;
    }
    const res = await bindEmail(email, code);
    if (res.success) {
      Message.success('邮箱账户绑定成功！');
      onClose();
      onBound();
    }
  };
  return (
    <Modal title="绑定邮箱地址" visible={visible} onOk={() => void bind()} onCancel={onClose} okText="确认绑定">
      <Form layout="vertical">
        <Form.Item label="邮箱地址">
          <Input
            name="bind_email"
            value={email}
            onChange={setEmail}
            placeholder="输入邮箱地址"
            addAfter={
              <Button type="text" size="mini" disabled={resend.left > 0} onClick={() => void send()}>
                {resend.left > 0 ? `重新发送 (${resend.left})` : '获取验证码'}
              </Button>
            }
          />
        </Form.Item>
        <Form.Item label="验证码">
          <Input name="bind_code" value={code} onChange={setCode} placeholder="输入验证码" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

/** Binds the messaging-app account: scan the QR code, type the code it answers. */
export function WechatBindModal({ visible, onClose, onBound }: DialogProps & { onBound: () => void }) {
  const { status } = useStatus();
  const [code, setCode] = useState('');
  const bind = async () => {
    const res = await wechatBind(code.trim());
    if (res.success) {
      Message.success('绑定成功！');
      onClose();
      onBound();
    }
  };
  return (
    <Modal title="绑定微信账号" visible={visible} onOk={() => void bind()} onCancel={onClose} okText="绑定">
      {status.wechat_qrcode && <Image src={status.wechat_qrcode} width={200} preview={false} />}
      <Typography.Paragraph type="secondary">
        微信扫码关注公众号，输入「验证码」获取验证码（三分钟内有效）
      </Typography.Paragraph>
      <Input value={code} onChange={setCode} placeholder="验证码" />
    </Modal>
  );
}

/** Changes the password: the current one, then the new one twice. */
export function ChangePasswordModal({ visible, onClose, hasPassword }: DialogProps & { hasPassword: boolean }) {
  const [form, setForm] = useState({ original: '', password: '', password2: '' });
  const set = (k: keyof typeof form) => (v: string) => setForm((f) => ({ ...f, [k]: v }));
  const submit = async () => {
    if (form.password.length < 8) {
      Message.error('密码长度不得小于 8 位！');
      return;
    }
    if (form.password !== form.password2) {
      Message.error('两次输入的密码不一致！');
      return;
    }
    const res = await updateSelf({ password: form.password, original_password: form.original });
    if (res.success) {
      Message.success('密码修改成功！');
      setForm({ original: '', password: '', password2: '' });
      onClose();
    }
  };
  return (
    <Modal title="修改密码" visible={visible} onOk={() => void submit()} onCancel={onClose}>
      <Form layout="vertical">
        {hasPassword && (
          <Form.Item label="原密码">
            <Input.Password
              name="original_password"
              value={form.original}
              onChange={set('original')}
              autoComplete="current-password"
            />
          </Form.Item>
        )}
        <Form.Item label="新密码">
          <Input.Password
            name="new_password"
            value={form.password}
            onChange={set('password')}
            placeholder="最短 8 位，最长 20 位"
            autoComplete="new-password"
          />
        </Form.Item>
        <Form.Item label="确认新密码">
          <Input.Password
            name="new_password2"
            value={form.password2}
            onChange={set('password2')}
            autoComplete="new-password"
          />
        </Form.Item>
      </Form>
    </Modal>
  );
}

/** Deletes the account after the user types its name. */
export function DeleteAccountModal({
  visible,
  onClose,
  username,
  onDeleted,
}: DialogProps & { username: string; onDeleted: () => void }) {
  const [typed, setTyped] = useState('');
  const submit = async () => {
    if (typed !== username) {
      Message.error('请输入你的账户名以确认删除！');
      return;
    }
    const res = await deleteSelf();
    if (res.success) {
      onClose();
      onDeleted();
    }
  };
  return (
    <Modal
      title="危险操作"
      visible={visible}
      onOk={() => void submit()}
      onCancel={onClose}
      okButtonProps={{ status: 'danger' }}
    >
      <Typography.Paragraph type="error">您正在删除自己的帐户，将清空所有数据且不可恢复</Typography.Paragraph>
      <Input
        name="confirm_username"
        value={typed}
        onChange={setTyped}
        placeholder={`输入你的账户名 ${username} 以确认删除`}
      />
    </Modal>
  );
}
