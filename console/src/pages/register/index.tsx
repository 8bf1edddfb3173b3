import { Button, Card, Form, Input, Message, Typography } from '@arco-design/web-react';
import { IconEmail, IconLock, IconSafe, IconUser } from '@arco-design/web-react/icon';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { register, sendVerificationCode } from '../../api/account.ts';
import SsoButtons from '../../components/SsoButtons/index.tsx';
import Turnstile from '../../components/Turnstile/index.tsx';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { useCountdown } from '../../utils/use-countdown.ts';
import '../login/style/index.css';

/** localStorage key of the inviter's code (from ?aff=), sent with the registration. */
export const AFF_KEY = 'aff';

/** /register: username, password twice, and the email code when email verification is on. */
export default function RegisterPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { status } = useStatus();
  const [form, setForm] = useState({ username: '', password: '', password2: '', email: '', code: '' });
  const [loading, setLoading] = useState(false);
  const [turnstileToken, setTurnstileToken] = useState('');
  const resend = useCountdown(30);
  const [affCode, setAffCode] = useState(() => localStorage.getItem(AFF_KEY) ?? '');

  useEffect(() => {
    const aff = params.get('aff');
    if (aff) {
      localStorage.setItem(AFF_KEY, aff);
      setAffCode(aff);
    }
  }, [params]);

  const set = (key: keyof typeof form) => (value: string) => setForm((f) => ({ ...f, [key]: value }));

  const turnstileReady = () => {
    if (status.turnstile_check && !turnstileToken) {
      Message.info(t('login.turnstileWait'));
      return false;
    }
    return true;
  };

  const sendCode = async () => {
    if (!form.email) {
      Message.warning(t('register.emailRequired'));
      return;
    }
    if (!turnstileReady()) return;
    resend.start();
    const res = await sendVerificationCode(form.email, turnstileToken);
    if (res.success) Message.success(t('register.codeSent'));
  };

  const submit = async () => {
    if (!form.username || !form.password) {
      Message.warning(t('register.required'));
      return;
    }
    if (form.password.length < 8) {
      Message.warning(t('register.tooShort'));
      return;
    }
    if (form.password !== form.password2) {
      Message.warning(t('register.mismatch'));
      return;
    }
    if (!turnstileReady()) return;
    setLoading(true);
    const res = await register(
      {
        username: form.username,
        password: form.password,
        password2: form.password2,
        email: status.email_verification ? form.email : undefined,
        verification_code: status.email_verification ? form.code : undefined,
        aff_code: affCode || undefined,
      },
      turnstileToken,
    );
    setLoading(false);
    if (!res.success) return;
    Message.success(t('register.success'));
    navigate('/login');
  };

  return (
    <div className="aigw-login">
      <Card className="aigw-login-card" bordered={false}>
        <Typography.Title heading={5} className="aigw-login-title">
          {t('register.title')}
        </Typography.Title>
        <Form layout="vertical" onSubmit={() => void submit()}>
          <Form.Item>
            <Input
              name="username"
              prefix={<IconUser />}
              placeholder={t('register.username')}
              maxLength={12}
              value={form.username}
              onChange={set('username')}
              autoComplete="username"
            />
          </Form.Item>
          <Form.Item>
            <Input.Password
              name="password"
              prefix={<IconLock />}
              placeholder={t('register.password')}
              maxLength={20}
              value={form.password}
              onChange={set('password')}
              autoComplete="new-password"
            />
          </Form.Item>
          <Form.Item>
            <Input.Password
              name="password2"
              prefix={<IconLock />}
              placeholder={t('register.password2')}
              maxLength={20}
              value={form.password2}
              onChange={set('password2')}
              autoComplete="new-password"
            />
          </Form.Item>
          {status.email_verification && (
            <>
              <Form.Item>
                <Input
                  name="email"
                  prefix={<IconEmail />}
                  placeholder={t('register.email')}
                  value={form.email}
                  onChange={set('email')}
                  addAfter={
                    <Button type="text" size="mini" disabled={resend.left > 0} onClick={() => void sendCode()}>
                      {resend.left > 0 ? t('register.resend', { n: resend.left }) : t('register.sendCode')}
                    </Button>
                  }
                />
              </Form.Item>
              <Form.Item>
                <Input
                  name="verification_code"
                  prefix={<IconSafe />}
                  placeholder={t('register.code')}
                  value={form.code}
                  onChange={set('code')}
                />
              </Form.Item>
            </>
          )}
          {affCode && (
            <Typography.Text type="secondary" className="aigw-register-aff">
              {t('register.invitedBy', { code: affCode })}
            </Typography.Text>
          )}
          <Button type="primary" htmlType="submit" long loading={loading}>
            {t('register.submit')}
          </Button>
        </Form>
        <div className="aigw-login-links">
          <span>
            {t('register.haveAccount')} <Link to="/login">{t('register.toLogin')}</Link>
          </span>
        </div>
        <SsoButtons divider />
        {status.turnstile_check && status.turnstile_site_key && (
          <Turnstile siteKey={status.turnstile_site_key} onVerify={setTurnstileToken} />
        )}
      </Card>
    </div>
  );
}
