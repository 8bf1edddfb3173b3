import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router-dom';
import { EXPIRED_LOGIN_PATH } from '../../api/request.ts';
import { useUser } from '../../store/user-context.tsx';
import { loginExpired } from '../../store/user-storage.ts';

/**
 * Renders children for a stored user; otherwise redirects to /login, remembering where it came
 * from, or to /login?expired=true when a 401 just cleared the user (spec 01 section 8: this guard
 * re-renders on that change and would otherwise win against the API client's redirect).
 */
export default function RequireLogin({ children }: { children: ReactNode }) {
  const { user } = useUser();
  const location = useLocation();
  if (!user) {
    const to = loginExpired() ? EXPIRED_LOGIN_PATH : '/login';
    return <Navigate to={to} replace state={{ from: `${location.pathname}${location.search}` }} />;
  }
  return <>{children}</>;
}
