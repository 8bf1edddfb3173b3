import { Button, Card, Space, Typography } from '@arco-design/web-react';
import { useNavigate } from 'react-router-dom';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';

/** Home page; the admin's HomePageContent will replace the welcome text later. */
export default function HomePage() {
  const t = useT();
  const { status } = useStatus();
  const { user } = useUser();
  const navigate = useNavigate();
  const name = status.system_name || t('app.name');
  return (
    <Card bordered={false}>
      <Typography.Title heading={4}>
        {t('home.welcome')} {name}
      </Typography.Title>
      <Typography.Paragraph type="secondary">{t('home.intro')}</Typography.Paragraph>
      <Space>
        <Button type="primary" onClick={() => navigate(user ? '/token' : '/login')}>
          {user ? t('menu.token') : t('nav.login')}
        </Button>
        <Button onClick={() => navigate('/pricing')}>{t('menu.pricing')}</Button>
      </Space>
    </Card>
  );
}
