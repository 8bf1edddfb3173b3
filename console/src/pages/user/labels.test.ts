import { describe, expect, it } from 'vitest';
import { roleLabel, statusLabel } from './labels.tsx';

describe('user labels', () => {
  it('when roles are shown, then 1, 10 and 100 have names and the rest 未知身份', () => {
    expect([1, 10, 100, 5].map(roleLabel)).toEqual(['普通用户', '管理员', '超级管理员', '未知身份']);
  });
  it('when a user is soft-deleted, then 已注销 wins over the status', () => {
    expect(statusLabel({ status: 1, DeletedAt: null })).toBe('已激活');
    expect(statusLabel({ status: 2, DeletedAt: null })).toBe('已封禁');
    expect(statusLabel({ status: 1, DeletedAt: '2026-01-01T00:00:00.000Z' })).toBe('已注销');
    expect(statusLabel({ status: 3, DeletedAt: null })).toBe('未知状态');
  });
});
