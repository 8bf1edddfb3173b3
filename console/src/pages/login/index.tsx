import { Button, Card, Form, Input, Message, Modal, Typography } from '@arco-design/web-react';
import { IconLock, IconUser } from '@arco-design/web-react/icon';
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { login } from '../../api/user.ts';
import { useT } from '../../locale/index.tsx';
import { useUser } from '../../store/user-context.tsx';
import './style/index.css';

/** Password login (third-party buttons and Turnstile come later). */
export default function LoginPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { setUser } = useUser();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [loading, setLoading] = useState(false);
  const expiredShown = useRef(false);

  useEffect(() => {
    if (params.get('expired') === 'true' && !expiredShown.current) {
      expiredShown.current = true;
      Message.error(t('login.expired'));
    }
  }, [params, t]);

  const submit = async () => {
    if (!username || !password) {
      Message.warning(t('login.empty'));
      return;
    }
    setLoading(true);
    const res = await login({ username, password });
    setLoading(false);
    if (!res.success || !res.data) return;
    setUser(res.data);
    if (username === 'root' && password === '123456') {
      Modal.error({ title: t('login.defaultPasswordTitle'), content: t('login.defaultPasswordContent'), simple: true });
    }
    Message.success(t('login.success'));
    navigate('/token');
  };

  return (
    <div className="aigw-login">
      <Card className="aigw-login-card" bordered={false}>
        <Typography.Title heading={5} className="aigw-login-title">
          {t('login.title')}
        </Typography.Title>
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
        </Form>
        <div className="aigw-login-links">
          <span>
            {t('login.noAccount')} <Link to="/register">{t('login.toRegister')}</Link>
          </span>
          <span>
            {t('login.forgot')} <Link to="/reset">{t('login.toReset')}</Link>
          </span>
        </div>
      </Card>
    </div>
  );
}
