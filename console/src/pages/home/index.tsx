import { Button, Card, Space, Spin, Typography } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { getHomePageContent } from '../../api/status.ts';
import RichContent from '../../components/RichContent/index.tsx';
import { useT } from '../../locale/index.tsx';
import { useStatus } from '../../store/status-context.tsx';
import { useUser } from '../../store/user-context.tsx';
import { frameUrl } from '../../utils/rich-content.ts';

/** The welcome card shown while the admin has not written HomePageContent. */
function Welcome() {
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

/** Home page: the admin's HomePageContent (Markdown/HTML, or a URL in a frame), else a welcome card. */
export default function HomePage() {
  const t = useT();
  const [content, setContent] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void getHomePageContent().then((res) => {
      if (live) setContent(res.success && typeof res.data === 'string' ? res.data : '');
    });
    return () => {
      live = false;
    };
  }, []);

  if (content === null) return <Spin className="aigw-page-loading" />;
  if (!content.trim()) return <Welcome />;
  if (frameUrl(content)) return <RichContent content={content} title={t('route.home')} />;
  return (
    <Card bordered={false}>
      <RichContent content={content} title={t('route.home')} />
    </Card>
  );
}
