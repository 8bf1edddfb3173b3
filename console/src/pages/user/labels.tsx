import { Tag } from '@arco-design/web-react';
import type { UserRecord } from '../../api/account.ts';
import { tr } from '../../locale/translate.ts';

/** Role labels of spec 01 section 6. */
export function roleLabel(role: number): string {
  if (role === 1) return tr('common.user');
  if (role === 10) return tr('common.admin');
  if (role === 100) return tr('common.root');
  return tr('common.unknownRole');
}

export function RoleTag({ role }: { role: number }) {
  const color = role === 100 ? 'orange' : role === 10 ? 'arcoblue' : role === 1 ? 'gray' : 'red';
  return <Tag color={color}>{roleLabel(role)}</Tag>;
}

/** Status labels of spec 01 section 4; a soft-deleted user shows 已注销. */
export function statusLabel(user: Pick<UserRecord, 'status' | 'DeletedAt'>): string {
  if (user.DeletedAt) return tr('user.deleted');
  if (user.status === 1) return tr('user.active');
  if (user.status === 2) return tr('user.banned');
  return tr('common.unknownStatus');
}

export function StatusTag({ user }: { user: Pick<UserRecord, 'status' | 'DeletedAt'> }) {
  const color = user.DeletedAt ? 'gray' : user.status === 1 ? 'green' : 'red';
  return <Tag color={color}>{statusLabel(user)}</Tag>;
}
