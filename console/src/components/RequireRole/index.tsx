import { Button, Card, Result } from '@arco-design/web-react';
import { type ReactNode, useEffect } from 'react';
import { useNavigate } from 'react-router-dom';
import { useT } from '../../locale/index.tsx';
import { hasRole } from '../../store/roles.ts';
import { useUser } from '../../store/user-context.tsx';

/** How long the refusal shows before the browser is sent home. */
export const FORBIDDEN_REDIRECT_MS = 1500;

/** Renders children when the user holds the role; otherwise says 无权进行此操作, then goes home. */
export default function RequireRole({ role, children }: { role: number | undefined; children: ReactNode }) {
  const { user } = useUser();
  const t = useT();
  const navigate = useNavigate();
  const allowed = hasRole(user, role);
  useEffect(() => {
    if (allowed) return;
    const timer = setTimeout(() => navigate('/', { replace: true }), FORBIDDEN_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [allowed, navigate]);
  if (allowed) return <>{children}</>;
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
