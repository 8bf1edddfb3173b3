import { describe, expect, it } from 'vitest';
import {
  batchNames,
  checkExpiry,
  checkGroup,
  checkTokenLimit,
  effectiveStatus,
  newTokenKey,
  normaliseAllowIps,
} from './token-rules.ts';

describe('token rules', () => {
  it('when a key is drawn, then it has 48 alphanumeric characters', () => {
    const keys = new Set(Array.from({ length: 50 }, newTokenKey));
    expect(keys.size).toBe(50);
    for (const k of keys) expect(k).toMatch(/^[0-9a-zA-Z]{48}$/);
  });

  it('when a token is expired or exhausted, then its status says so (unless disabled)', () => {
    const t = { status: 1, expired_time: 100, unlimited_quota: false };
    expect(effectiveStatus(t, 10, 50)).toBe(1);
    expect(effectiveStatus(t, 10, 100)).toBe(3);
    expect(effectiveStatus({ ...t, expired_time: -1 }, 0, 50)).toBe(4);
    expect(effectiveStatus({ ...t, expired_time: -1, unlimited_quota: true }, 0, 50)).toBe(1);
    expect(effectiveStatus({ ...t, status: 2 }, 0, 500)).toBe(2);
  });

  it('when an allow-list holds IPs and CIDRs, then it is normalised; a bad entry is named', () => {
    expect(normaliseAllowIps(' 10.0.0.1\n192.168.0.0/16, ::1 \n\n2001:db8::/32')).toBe(
      '10.0.0.1\n192.168.0.0/16\n::1\n2001:db8::/32',
    );
    expect(() => normaliseAllowIps('10.0.0.300')).toThrow('IP 白名单格式错误：10.0.0.300');
    expect(() => normaliseAllowIps('10.0.0.0/33')).toThrow('IP 白名单格式错误');
  });

  it('when an expiry is past or malformed, then it is refused', () => {
    expect(checkExpiry(-1, 100)).toBe(-1);
    expect(checkExpiry(200, 100)).toBe(200);
    expect(() => checkExpiry(50, 100)).toThrow('过期时间不能早于当前时间');
    expect(() => checkExpiry(1.5, 100)).toThrow('过期时间格式错误！');
  });

  it('when a group is not usable, then it is refused', () => {
    expect(checkGroup('vip', { default: 'a', vip: 'b' })).toBe('vip');
    expect(checkGroup('', { default: 'a' })).toBe('');
    expect(() => checkGroup('svip', { default: 'a' })).toThrow('分组 svip 不可用');
  });

  it('when tokens are created in a batch, then extra names get a 6-character suffix', () => {
    const names = batchNames('t', 3);
    expect(names[0]).toBe('t');
    expect(names[1]).toMatch(/^t-[0-9a-zA-Z]{6}$/);
    expect(new Set(names).size).toBe(3);
  });

  it("when a token's RPM, TPM or concurrency limit is set, then only whole numbers from 0 to 1e9 are kept", () => {
    expect(checkTokenLimit(0, 'RPM 限制')).toBe(0);
    expect(checkTokenLimit(60, 'RPM 限制')).toBe(60);
    expect(() => checkTokenLimit(-1, 'RPM 限制')).toThrow('RPM 限制必须是 0 到 1000000000 之间的整数（0 表示不限制）');
    expect(() => checkTokenLimit(1.5, '并发请求限制')).toThrow('并发请求限制必须是');
    expect(() => checkTokenLimit(2_000_000_000, 'TPM 限制')).toThrow('TPM 限制必须是');
  });
});
