// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from 'vitest';
import { hasRole, isAdmin, isRoot, roleLabel } from './roles.ts';
import { getStoredStatus, saveStatus } from './status-storage.ts';
import { clearStoredUser, getStoredUser, getStoredUserId, onStoredUserChange, setStoredUser } from './user-storage.ts';

beforeEach(() => localStorage.clear());

describe('roles', () => {
  it('admin is role >= 10, root is role >= 100', () => {
    expect(isAdmin({ role: 1 })).toBe(false);
    expect(isAdmin({ role: 10 })).toBe(true);
    expect(isRoot({ role: 10 })).toBe(false);
    expect(isRoot({ role: 100 })).toBe(true);
    expect(isAdmin(null)).toBe(false);
    expect(hasRole(null, undefined)).toBe(true);
    expect(hasRole({ role: 1 }, 10)).toBe(false);
  });

  it('labels roles as the spec does', () => {
    expect([1, 10, 100, 5].map(roleLabel)).toEqual(['普通用户', '管理员', '超级管理员', '未知身份']);
  });
});

describe('user storage', () => {
  it('stores, reads, notifies and clears the user under `user`', () => {
    const seen: unknown[] = [];
    const off = onStoredUserChange((user) => seen.push(user?.id ?? null));
    expect(getStoredUserId()).toBe(-1);
    setStoredUser({ id: 3, username: 'c', role: 1 });
    expect(JSON.parse(localStorage.getItem('user') ?? '{}').id).toBe(3);
    expect(getStoredUserId()).toBe(3);
    clearStoredUser();
    expect(getStoredUser()).toBeNull();
    off();
    expect(seen).toEqual([3, null]);
  });

  it('treats unreadable stored text as logged out', () => {
    localStorage.setItem('user', '{not json');
    expect(getStoredUser()).toBeNull();
  });
});

describe('status storage', () => {
  it('keeps the status object and its individual local keys', () => {
    saveStatus({
      system_name: 'X',
      server_address: 'https://gw',
      top_up_link: 'https://shop',
      min_topup: 5,
      enable_online_topup: true,
      footer_html: '<i>f</i>',
      mj_notify_enabled: false,
      chats: [{ A: 'a' }],
      chat_link: 'https://chat',
    });
    expect(getStoredStatus().system_name).toBe('X');
    expect(localStorage.getItem('server_address')).toBe('https://gw');
    expect(localStorage.getItem('top_up_link')).toBe('https://shop');
    expect(localStorage.getItem('min_topup')).toBe('5');
    expect(localStorage.getItem('enable_online_topup')).toBe('true');
    expect(localStorage.getItem('footer_html')).toBe('<i>f</i>');
    expect(localStorage.getItem('mj_notify_enabled')).toBe('false');
    expect(localStorage.getItem('chats')).toBe('[{"A":"a"}]');
    expect(localStorage.getItem('chat_link')).toBe('https://chat');
    saveStatus({ system_name: 'Y' });
    expect(localStorage.getItem('chat_link')).toBeNull();
    expect(localStorage.getItem('chats')).toBe('[]');
  });
});
