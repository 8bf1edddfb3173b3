import { Button, Card, Result } from '@arco-design/web-react';
import { useNavigate } from 'react-router-dom';
import { useT } from '../../locale/index.tsx';

/** Any unknown path: 页面不存在. */
export default function NotFoundPage() {
  const t = useT();
  const navigate = useNavigate();
  return (
    <Card bordered={false}>
      <Result
        status="404"
        title={t('notFound.title')}
        subTitle={t('notFound.subtitle')}
        extra={
          <Button type="primary" onClick={() => navigate('/')}>
            {t('guard.backHome')}
          </Button>
        }
      />
    </Card>
  );
}
