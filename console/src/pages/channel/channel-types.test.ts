import { describe, expect, it } from 'vitest';
import { CHANNEL_TYPE_OPTIONS, defaultOther, keyHint, responseTimeBadge, statusReason } from './channel-types.ts';

describe('channel type helpers', () => {
  it('when the options are listed, then all 30 types are there', () => {
    expect(CHANNEL_TYPE_OPTIONS).toHaveLength(30);
  });

  it('when response times are shown, then the spec colours apply', () => {
    expect(responseTimeBadge(0)).toEqual({ color: 'gray', text: '未测试' });
    expect(responseTimeBadge(1000).color).toBe('green');
    expect(responseTimeBadge(2999).color).toBe('lime');
    expect(responseTimeBadge(5000).color).toBe('gold');
    expect(responseTimeBadge(5001)).toEqual({ color: 'red', text: '5.00 秒' });
  });

  it('when a type has a key format or default version, then hints say so', () => {
    expect(keyHint(15)).toContain('APIKey|SecretKey');
    expect(keyHint(33)).toContain('Ak|Sk|Region');
    expect(defaultOther(3)).toBe('2023-06-01-preview');
    expect(defaultOther(18)).toBe('v2.1');
    expect(statusReason('{"status_reason":"bad key","status_time":5}')).toEqual({ reason: 'bad key', time: 5 });
    expect(statusReason('')).toBeUndefined();
  });
});
