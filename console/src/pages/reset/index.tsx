import { Button, Card, Form, Input, Message, Typography } from '@arco-design/web-react';
import { IconEmail } from '@arco-design/web-react/icon';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { sendResetMail } from '../../api/account.ts';
import Turnstile from '../../components/Turnstile/index.tsx';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { useCountdown } from '../../utils/use-countdown.ts';
import '../login/style/index.css';

/** /reset: asks for a reset mail; the button then waits 30 s. */
export default function ResetPage() {
  const t = useT();
  const { status } = useStatus();
  const [email, setEmail] = useState('');
  const [loading, setLoading] = useState(false);
  const [turnstileToken, setTurnstileToken] = useState('');
  const wait = useCountdown(30);

  const submit = async () => {
    if (!email) {
      Message.warning(t('register.emailRequired'));
      return;
    }
    if (status.turnstile_check && !turnstileToken) {
      Message.info(t('login.turnstileWait'));
      return;
    }
    setLoading(true);
    wait.start();
    const res = await sendResetMail(email, turnstileToken);
    setLoading(false);
    if (res.success) Message.success(t('reset.sent'));
  };

  return (
    <div className="aigw-login">
      <Card className="aigw-login-card" bordered={false}>
        <Typography.Title heading={5} className="aigw-login-title">
          {t('reset.title')}
        </Typography.Title>
        <Form layout="vertical" onSubmit={() => void submit()}>
          <Form.Item>
            <Input
              name="email"
              prefix={<IconEmail />}
              placeholder={t('reset.email')}
              value={email}
              onChange={setEmail}
              autoComplete="email"
            />
          </Form.Item>
          <Button type="primary" htmlType="submit" long loading={loading} disabled={wait.left > 0}>
            {wait.left > 0 ? t('reset.wait', { n: wait.left }) : t('reset.submit')}
          </Button>
        </Form>
        <div className="aigw-login-links">
          <Link to="/login">{t('reset.toLogin')}</Link>
        </div>
        {status.turnstile_check && status.turnstile_site_key && (
          <Turnstile siteKey={status.turnstile_site_key} onVerify={setTurnstileToken} />
        )}
      </Card>
    </div>
  );
}
