import { Tag } from '@arco-design/web-react';
import type { UserRecord } from '../../api/account.ts';

/** Role labels of spec 01 section 6. */
export function roleLabel(role: number): string {
  if (role === 1) return '普通用户';
  if (role === 10) return '管理员';
  if (role === 100) return '超级管理员';
  return '未知身份';
}

export function RoleTag({ role }: { role: number }) {
  const color = role === 100 ? 'orange' : role === 10 ? 'arcoblue' : role === 1 ? 'gray' : 'red';
  return <Tag color={color}>{roleLabel(role)}</Tag>;
}

/** Status labels of spec 01 section 4; a soft-deleted user shows 已注销. */
export function statusLabel(user: Pick<UserRecord, 'status' | 'DeletedAt'>): string {
  if (user.DeletedAt) return '已注销';
  if (user.status === 1) return '已激活';
  if (user.status === 2) return '已封禁';
  return '未知状态';
}

export function StatusTag({ user }: { user: Pick<UserRecord, 'status' | 'DeletedAt'> }) {
  const color = user.DeletedAt ? 'gray' : user.status === 1 ? 'green' : 'red';
  return <Tag color={color}>{statusLabel(user)}</Tag>;
}
