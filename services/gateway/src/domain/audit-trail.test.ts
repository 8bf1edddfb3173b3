import { describe, expect, it } from 'vitest';
import { describeAction, genericAction, HIDDEN, isSecretOption, MAX_VALUE, optionChange } from './audit-trail.ts';

const req = (method: string, path: string, body: Record<string, unknown> = {}, query: Record<string, unknown> = {}) =>
  describeAction({ method, path, body, query });

describe('audit trail words', () => {
  it('when an option changes, then old and new values are shown and secrets are hidden', () => {
    expect(optionChange('QuotaPerUnit', '500000', '1000')).toBe('修改系统设置 QuotaPerUnit：「500000」→「1000」');
    expect(isSecretOption('SMTPToken')).toBe(true);
    expect(isSecretOption('StripeApiSecret')).toBe(true);
    expect(isSecretOption('SystemName')).toBe(false);
    const secret = optionChange('SMTPToken', 'old-secret', 'new-secret');
    expect(secret).toBe(`修改系统设置 SMTPToken：「${HIDDEN}」→「${HIDDEN}」`);
    expect(secret).not.toContain('secret');
    expect(optionChange('SMTPToken', '', 'x')).toContain('「（空）」→「******」');
    expect(optionChange('ModelRatio', '', 'x'.repeat(MAX_VALUE + 5))).toContain(`共 ${MAX_VALUE + 5} 字符`);
  });

  it('when channels, users, codes and logs are managed, then each action has its words and no key', () => {
    expect(req('POST', '/channel/', { mode: 'single', channel: { name: 'c1', type: 1, key: 'sk-up' } })).toBe(
      '创建渠道「c1」（类型 1，single）',
    );
    const edit = req('PUT', '/channel/', { id: 3, name: 'c1', key: 'sk-secret-upstream' });
    expect(edit).toBe('编辑渠道 #3（c1），字段：name、key');
    expect(req('DELETE', '/channel/12')).toBe('删除渠道 #12');
    expect(req('GET', '/channel/test/12', {}, { model: 'gpt-4o' })).toBe('测试渠道 #12（模型 gpt-4o）');
    expect(req('POST', '/channel/multi_key/manage', { channel_id: 4, action: 'disable_key', key_index: 1 })).toBe(
      '管理渠道 #4 的多密钥：disable_key（密钥 #1）',
    );
    expect(req('POST', '/user/', { username: 'bob', password: 'pw', role: 10 })).toBe('创建用户「bob」（管理员）');
    const user = req('PUT', '/user/', { id: 5, quota: 100, role: 1, password: 'new-pass-123' }) ?? '';
    expect(user).toBe('编辑用户 #5：额度设为 100，角色设为普通用户，重设密码');
    expect(user).not.toContain('new-pass');
    expect(req('POST', '/user/manage', { id: 5, action: 'disable' })).toBe('用户 #5：封禁');
    expect(req('DELETE', '/user/5/2fa')).toBe('关闭用户 #5 的两步验证');
    expect(req('POST', '/redemption/', { name: 'gift', count: 3, quota: 500 })).toBe(
      '创建兑换码「gift」3 个，额度 500',
    );
    expect(req('PUT', '/redemption/', { id: 2, status: 2 }, { status_only: 'true' })).toBe('兑换码 #2 状态设为 2');
    expect(req('DELETE', '/log/', {}, { target_timestamp: '100' })).toBe('清理 100 之前的日志');
  });

  it('when an admin route the table does not name changes something, then its route, ids and field names are recorded', () => {
    expect(genericAction('PATCH', '/subscription/admin/plans/:id', { id: '3' }, { title: 'x', price: 9 })).toBe(
      '管理操作 PATCH /api/subscription/admin/plans/:id（id=3），字段：title、price',
    );
    expect(genericAction('DELETE', '/user/:id/reset_passkey', { id: '5' }, {})).toBe(
      '管理操作 DELETE /api/user/:id/reset_passkey（id=5）',
    );
  });

  it('when a request is not an admin action, then nothing is recorded', () => {
    expect(req('GET', '/channel/')).toBeUndefined();
    expect(req('GET', '/channel/12')).toBeUndefined();
    expect(req('POST', '/token/', { name: 'x' })).toBeUndefined();
    expect(req('PUT', '/user/self', { display_name: 'x' })).toBeUndefined();
  });
});
