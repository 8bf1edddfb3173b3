import { Button, Form, Image, Input, Message, Modal, Typography } from '@arco-design/web-react';
import { useState } from 'react';
import { bindEmail, deleteSelf, sendVerificationCode, wechatBind } from '../../api/account.ts';
import { changePassword } from '../../api/passkey.ts';
import { secondFactors, useSecurityProof } from '../../components/SecureVerification/index.tsx';
import { tr } from '../../locale/translate.ts';
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
      Message.error(tr('setting.pleaseEnterAnEmailAddress'));
      return;
    }
    resend.start();
    const res = await sendVerificationCode(email);
    if (res.success) Message.success(tr('setting.codeSentCheckYourMailbox'));
  };
  const bind = async () => {
    if (!email) {
      Message.error(tr('setting.pleaseEnterAnEmailAddress'));
      return;
    }
    if (!code) {
      Message.error(tr('setting.pleaseEnterTheEmailCode'));
      return;
    }
    const res = await bindEmail(email, code);
    if (res.success) {
      Message.success(tr('setting.emailBound'));
      onClose();
      onBound();
    }
  };
  return (
    <Modal
      title={tr('setting.bindAnEmailAddress')}
      visible={visible}
      onOk={() => void bind()}
      onCancel={onClose}
      okText={tr('setting.bind')}
    >
      <Form layout="vertical">
        <Form.Item label={tr('setting.emailAddress')}>
          <Input
            name="bind_email"
            value={email}
            onChange={setEmail}
            placeholder={tr('setting.enterAnEmailAddress')}
            addAfter={
              <Button type="text" size="mini" disabled={resend.left > 0} onClick={() => void send()}>
                {resend.left > 0 ? tr('register.resend', { n: resend.left }) : tr('setting.getCode')}
              </Button>
            }
          />
        </Form.Item>
        <Form.Item label={tr('setting.verificationCode')}>
          <Input name="bind_code" value={code} onChange={setCode} placeholder={tr('setting.enterTheCode')} />
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
      Message.success(tr('setting.bound'));
      onClose();
      onBound();
    }
  };
  return (
    <Modal
      title={tr('setting.bindWechat')}
      visible={visible}
      onOk={() => void bind()}
      onCancel={onClose}
      okText={tr('setting.bind2')}
    >
      {status.wechat_qrcode && <Image src={status.wechat_qrcode} width={200} preview={false} />}
      <Typography.Paragraph type="secondary">{tr('setting.scanWithWechatFollowThe')}</Typography.Paragraph>
      <Input value={code} onChange={setCode} placeholder={tr('setting.verificationCode')} />
    </Modal>
  );
}

/** Changes the password: the current one, then the new one twice. */
export function ChangePasswordModal({ visible, onClose, hasPassword }: DialogProps & { hasPassword: boolean }) {
  const [form, setForm] = useState({ original: '', password: '', password2: '' });
  const set = (k: keyof typeof form) => (v: string) => setForm((f) => ({ ...f, [k]: v }));
  const proof = useSecurityProof();
  const submit = async () => {
    if (form.password.length < 8) {
      Message.error(tr('setting.thePasswordMustHoldAt'));
      return;
    }
    if (form.password !== form.password2) {
      Message.error(tr('setting.thePasswordsDiffer'));
      return;
    }
    // With 2FA or a passkey the server wants one of them proved again (scope password.change).
    const factors = await secondFactors();
    const token = factors.twoFa || factors.passkey ? await proof.ask('password.change', ['2fa', 'passkey']) : undefined;
    if ((factors.twoFa || factors.passkey) && !token) return;
    const res = await changePassword({ password: form.password, original_password: form.original }, token);
    if (res.success) {
      Message.success(tr('setting.passwordChanged'));
      setForm({ original: '', password: '', password2: '' });
      onClose();
    }
  };
  return (
    <Modal title={tr('setting.changePassword')} visible={visible} onOk={() => void submit()} onCancel={onClose}>
      <Form layout="vertical">
        {hasPassword && (
          <Form.Item label={tr('setting.currentPassword')}>
            <Input.Password
              name="original_password"
              value={form.original}
              onChange={set('original')}
              autoComplete="current-password"
            />
          </Form.Item>
        )}
        <Form.Item label={tr('setting.newPassword')}>
          <Input.Password
            name="new_password"
            value={form.password}
            onChange={set('password')}
            placeholder={tr('setting.8To20Characters')}
            autoComplete="new-password"
          />
        </Form.Item>
        <Form.Item label={tr('setting.confirmTheNewPassword')}>
          <Input.Password
            name="new_password2"
            value={form.password2}
            onChange={set('password2')}
            autoComplete="new-password"
          />
        </Form.Item>
      </Form>
      {proof.modal}
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
      Message.error(tr('setting.enterYourUsernameToConfirm'));
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
      title={tr('setting.dangerousOperation')}
      visible={visible}
      onOk={() => void submit()}
      onCancel={onClose}
      okButtonProps={{ status: 'danger' }}
    >
      <Typography.Paragraph type="error">{tr('setting.youAreDeletingYourOwn')}</Typography.Paragraph>
      <Input
        name="confirm_username"
        value={typed}
        onChange={setTyped}
        placeholder={tr('setting.typeUsername', { username })}
      />
    </Modal>
  );
}
