import { Role, type User } from '../api/types.ts';
import { tr } from '../locale/translate.ts';

type WithRole = Pick<User, 'role'> | null | undefined;

/** Admin means role >= 10. */
export function isAdmin(user: WithRole): boolean {
  return (user?.role ?? 0) >= Role.admin;
}

/** Super admin (root) means role >= 100. */
export function isRoot(user: WithRole): boolean {
  return (user?.role ?? 0) >= Role.root;
}

/** True when the user holds at least the given role; a missing requirement always passes. */
export function hasRole(user: WithRole, required: number | undefined): boolean {
  return required === undefined || (user?.role ?? 0) >= required;
}

/** Role label of spec 01 section 6. */
export function roleLabel(role: number): string {
  if (role === Role.common) return tr('common.user');
  if (role === Role.admin) return tr('common.admin');
  if (role === Role.root) return tr('common.root');
  return tr('common.unknownRole');
}
