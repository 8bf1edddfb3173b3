import { Button, Card, Result } from '@arco-design/web-react';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router-dom';
import { useT } from '../../locale/index.tsx';
import { hasRole } from '../../store/roles.ts';
import { useUser } from '../../store/user-context.tsx';

/** Renders children when the user holds the role; otherwise says 无权进行此操作. */
export default function RequireRole({ role, children }: { role: number | undefined; children: ReactNode }) {
  const { user } = useUser();
  const t = useT();
  const navigate = useNavigate();
  if (hasRole(user, role)) return <>{children}</>;
  return (
    <Card bordered={false}>
      <Result
        status="403"
        title={t('guard.forbidden')}
        extra={
          <Button type="primary" onClick={() => navigate('/')}>
            {t('guard.backHome')}
          </Button>
        }
      />
    </Card>
  );
}
