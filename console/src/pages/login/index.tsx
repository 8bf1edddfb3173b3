import { Button, Card, Divider, Form, Image, Input, Message, Modal, Space, Typography } from '@arco-design/web-react';
import { IconGithub, IconLock, IconUser, IconWechat } from '@arco-design/web-react/icon';
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { getOAuthState, type TelegramAuth, telegramLogin, wechatLogin } from '../../api/account.ts';
import { isPendingLogin, loginTwoFactor } from '../../api/security.ts';
import type { User } from '../../api/types.ts';
import { login } from '../../api/user.ts';
import SsoButtons from '../../components/SsoButtons/index.tsx';
import TelegramLoginButton from '../../components/TelegramLoginButton/index.tsx';
import Turnstile from '../../components/Turnstile/index.tsx';
import { useT } from '../../locale/index.tsx';
import { serverText } from '../../locale/server-messages.ts';
import { translate } from '../../locale/translate.ts';
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';
import PasskeyLogin from './passkey-login.tsx';
import './style/index.css';

/** Sends the browser to GitHub's consent page with a one-time state. */
export async function startGitHubOAuth(clientId: string): Promise<void> {
  const state = await getOAuthState();
  if (!state.success || !state.data) return;
  const url = new URL('https://github.com/login/oauth/authorize');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('state', state.data);
  url.searchParams.set('scope', 'user:email');
  window.location.assign(url.toString());
}

/**
 * /login: username (or email) and password, the third-party buttons the status turns on, the
 * Turnstile check, the expired-login notice and the warning for root's default password.
 */
export default function LoginPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { status } = useStatus();
  const { setUser } = useUser();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [loading, setLoading] = useState(false);
  const [turnstileToken, setTurnstileToken] = useState('');
  const [wechatOpen, setWechatOpen] = useState(false);
  const [wechatCode, setWechatCode] = useState('');
  /** The flow token of a password login that waits for its 2FA code. */
  const [flowToken, setFlowToken] = useState('');
  const [twoFactorCode, setTwoFactorCode] = useState('');
  const expiredShown = useRef(false);

  useEffect(() => {
    if (params.get('expired') === 'true' && !expiredShown.current) {
      expiredShown.current = true;
      Message.error(t('login.expired'));
    }
  }, [params, t]);

  const turnstileReady = () => {
    if (status.turnstile_check && !turnstileToken) {
      Message.info(t('login.turnstileWait'));
      return false;
    }
    return true;
  };

  const loggedIn = (user: User, to: string) => {
    setUser(user);
    Message.success(t('login.success'));
    navigate(to);
  };

  const submit = async () => {
    if (!username || !password) {
      Message.warning(t('login.empty'));
      return;
    }
    if (!turnstileReady()) return;
    setLoading(true);
    const res = await login({ username, password }, turnstileToken);
    setLoading(false);
    if (!res.success || !res.data) return;
    if (isPendingLogin(res.data)) {
      setTwoFactorCode('');
      setFlowToken(res.data.flow_token);
      return;
    }
    const { default_password: defaultPassword, ...user } = res.data as User & { default_password?: boolean };
    if (defaultPassword || (username === 'root' && password === '123456')) {
      Modal.error({ title: t('login.defaultPasswordTitle'), content: t('login.defaultPasswordContent'), simple: true });
    }
    loggedIn(user as User, '/token');
  };

  const submitTwoFactor = async () => {
    const code = twoFactorCode.trim();
    if (!code) return;
    setLoading(true);
    const res = await loginTwoFactor(code, flowToken);
    setLoading(false);
    if (!res.success || !res.data) {
      // An expired flow needs the password again (the server answers in Chinese, shown localized).
      if (res.message === serverText(translate('zh-CN', 'login.twoFactorExpired'))) setFlowToken('');
      return;
    }
    setFlowToken('');
    loggedIn(res.data, '/token');
  };

  const submitWechat = async () => {
    const res = await wechatLogin(wechatCode.trim());
    if (res.success && res.data) {
      setWechatOpen(false);
      loggedIn(res.data, '/');
    }
  };

  const onTelegram = async (fields: TelegramAuth) => {
    const res = await telegramLogin(fields);
    if (res.success && res.data) loggedIn(res.data, '/');
  };

  const thirdParty = Boolean(status.github_oauth || status.wechat_login || status.telegram_oauth);

  return (
    <div className="aigw-login">
      <Card className="aigw-login-card" bordered={false}>
        <Typography.Title heading={5} className="aigw-login-title">
          {t('login.title')}
        </Typography.Title>
        {flowToken ? (
          <Form layout="vertical" onSubmit={() => void submitTwoFactor()} data-form="two-factor">
            <Typography.Paragraph>{t('login.twoFactorHint')}</Typography.Paragraph>
            <Form.Item label={t('login.twoFactorTitle')}>
              <Input
                name="two_factor_code"
                placeholder={t('login.twoFactorCode')}
                value={twoFactorCode}
                onChange={setTwoFactorCode}
                autoComplete="one-time-code"
                autoFocus
              />
            </Form.Item>
            <Button type="primary" htmlType="submit" long loading={loading}>
              {t('login.twoFactorVerify')}
            </Button>
            <Button type="text" long onClick={() => setFlowToken('')} style={{ marginTop: 8 }}>
              {t('login.twoFactorBack')}
            </Button>
          </Form>
        ) : (
          <Form layout="vertical" onSubmit={() => void submit()}>
            <Form.Item>
              <Input
                name="username"
                prefix={<IconUser />}
                placeholder={t('login.username')}
                value={username}
                onChange={setUsername}
                autoComplete="username"
              />
            </Form.Item>
            <Form.Item>
              <Input.Password
                name="password"
                prefix={<IconLock />}
                placeholder={t('login.password')}
                value={password}
                onChange={setPassword}
                autoComplete="current-password"
              />
            </Form.Item>
            <Button type="primary" htmlType="submit" long loading={loading}>
              {t('login.submit')}
            </Button>
            <PasskeyLogin onLoggedIn={(user) => loggedIn(user, '/token')} />
          </Form>
        )}
        <div className="aigw-login-links">
          <span>
            {t('login.noAccount')} <Link to="/register">{t('login.toRegister')}</Link>
          </span>
          <span>
            {t('login.forgot')} <Link to="/reset">{t('login.toReset')}</Link>
          </span>
        </div>
        {thirdParty && (
          <>
            <Divider>{t('login.otherMethods')}</Divider>
            <Space className="aigw-login-oauth" size="large">
              {status.github_oauth && (
                <Button
                  shape="circle"
                  size="large"
                  aria-label={t('login.github')}
                  icon={<IconGithub />}
                  onClick={() => void startGitHubOAuth(status.github_client_id ?? '')}
                />
              )}
              {status.wechat_login && (
                <Button
                  shape="circle"
                  size="large"
                  aria-label={t('login.wechat')}
                  icon={<IconWechat />}
                  onClick={() => setWechatOpen(true)}
                />
              )}
              {status.telegram_oauth && (
                <TelegramLoginButton botName={status.telegram_bot_name ?? ''} onAuth={(u) => void onTelegram(u)} />
              )}
            </Space>
          </>
        )}
        <SsoButtons divider={!thirdParty} />
        {status.turnstile_check && status.turnstile_site_key && (
          <Turnstile siteKey={status.turnstile_site_key} onVerify={setTurnstileToken} />
        )}
      </Card>
      <Modal
        title={t('login.wechatTitle')}
        visible={wechatOpen}
        onOk={() => void submitWechat()}
        onCancel={() => setWechatOpen(false)}
        okText={t('login.submit')}
      >
        {status.wechat_qrcode && <Image src={status.wechat_qrcode} width={200} preview={false} />}
        <Typography.Paragraph type="secondary">{t('login.wechatHint')}</Typography.Paragraph>
        <Input placeholder={t('login.wechatCode')} value={wechatCode} onChange={setWechatCode} />
      </Modal>
    </div>
  );
}
