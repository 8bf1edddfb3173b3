import { Button, Card, Form, Input, Result, Typography } from '@arco-design/web-react';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { confirmReset } from '../../api/account.ts';
import { useT } from '../../locale/index.tsx';
import { copyText } from '../../utils/clipboard.ts';
import '../login/style/index.css';

/** /user/reset?email=&token=: confirms the mailed link, then shows and copies the new password. */
export default function UserResetPage() {
  const t = useT();
  const [params] = useSearchParams();
  const email = params.get('email') ?? '';
  const token = params.get('token') ?? '';
  const [loading, setLoading] = useState(false);
  const [password, setPassword] = useState('');

  const submit = async () => {
    setLoading(true);
    const res = await confirmReset(email, token);
    setLoading(false);
    if (!res.success || !res.data) return;
    setPassword(res.data);
    await copyText(res.data, t('reset.copied', { password: res.data }));
  };

  if (!email || !token) {
    return <Result status="error" title={t('reset.invalidLink')} extra={<Link to="/reset">{t('reset.title')}</Link>} />;
  }
  return (
    <div className="aigw-login">
      <Card className="aigw-login-card" bordered={false}>
        <Typography.Title heading={5} className="aigw-login-title">
          {t('reset.confirmTitle')}
        </Typography.Title>
        <Form layout="vertical" onSubmit={() => void submit()}>
          <Form.Item label={t('reset.email')}>
            <Input name="email" value={email} readOnly />
          </Form.Item>
          {password && (
            <Form.Item label={t('reset.newPassword')}>
              <Input name="new_password" value={password} readOnly onClick={() => void copyText(password)} />
            </Form.Item>
          )}
          <Button type="primary" htmlType="submit" long loading={loading} disabled={Boolean(password)}>
            {t('reset.confirm')}
          </Button>
        </Form>
        <div className="aigw-login-links">
          <Link to="/login">{t('reset.toLogin')}</Link>
        </div>
      </Card>
    </div>
  );
}
