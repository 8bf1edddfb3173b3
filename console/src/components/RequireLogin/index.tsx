import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router-dom';
import { useUser } from '../../store/user-context.tsx';

/** Renders children for a stored user; otherwise redirects to /login, remembering where it came from. */
export default function RequireLogin({ children }: { children: ReactNode }) {
  const { user } = useUser();
  const location = useLocation();
  if (!user) return <Navigate to="/login" replace state={{ from: `${location.pathname}${location.search}` }} />;
  return <>{children}</>;
}
