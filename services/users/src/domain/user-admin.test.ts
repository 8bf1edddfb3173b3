import { describe, expect, it } from 'vitest';
import { ROLE, STATUS, type UserRecord } from './ports.ts';
import { manageChanges } from './user-admin.ts';

const user = (role: number) => ({ id: 9, role }) as UserRecord;
const root = { userId: 1, role: ROLE.root };
const admin = { userId: 2, role: ROLE.admin };

describe('admin actions on a user', () => {
  it('when root acts, then disable, enable, promote and demote change status and role', () => {
    expect(manageChanges(root, user(ROLE.common), 'disable')).toEqual({ status: STATUS.banned });
    expect(manageChanges(root, user(ROLE.common), 'enable')).toEqual({ status: STATUS.enabled });
    expect(manageChanges(root, user(ROLE.common), 'promote')).toEqual({ role: ROLE.admin });
    expect(manageChanges(root, user(ROLE.admin), 'demote')).toEqual({ role: ROLE.common });
    expect(manageChanges(root, user(ROLE.common), 'delete').deleted_at).toBeGreaterThan(0);
  });

  it('when an action breaks the rules, then it is refused with the new-api message', () => {
    expect(() => manageChanges(root, user(ROLE.root), 'disable')).toThrow('无法禁用超级管理员用户');
    expect(() => manageChanges(root, user(ROLE.root), 'delete')).toThrow('无法删除超级管理员用户');
    expect(() => manageChanges(root, user(ROLE.root), 'demote')).toThrow('无法降级超级管理员用户');
    expect(() => manageChanges(admin, user(ROLE.common), 'promote')).toThrow('普通管理员用户无法提升其他用户为管理员');
    expect(() => manageChanges(root, user(ROLE.admin), 'promote')).toThrow('该用户已经是管理员');
    expect(() => manageChanges(root, user(ROLE.common), 'demote')).toThrow('该用户已经是普通用户');
  });
});
