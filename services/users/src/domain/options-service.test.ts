import { describe, expect, it } from 'vitest';
import { validateOption } from './validate-option.ts';

describe('validateOption', () => {
  it('when an address has trailing slashes, then they are stripped', () => {
    expect(validateOption('ServerAddress', 'https://a.example.com//').value).toBe('https://a.example.com');
  });
  it('when the top-up group ratio is not JSON, then the spec message is given', () => {
    expect(() => validateOption('TopupGroupRatio', '{bad')).toThrow('充值分组倍率不是合法的 JSON 字符串');
  });
  it('when a ratio field is not JSON, then it is refused', () => {
    expect(() => validateOption('ModelRatio', 'nope')).toThrow('不是合法的 JSON 字符串');
  });
  it('when a token-kind ratio (cache, audio, image) is set, then it must map model names to non-negative numbers', () => {
    for (const key of [
      'CacheRatio',
      'CacheCreationRatio',
      'CreateCacheRatio',
      'AudioRatio',
      'AudioCompletionRatio',
      'ImageRatio',
    ]) {
      expect(validateOption(key, '{"gpt-4o": 0.5}').value).toBe('{"gpt-4o": 0.5}');
      expect(() => validateOption(key, '{"gpt-4o": -1}')).toThrow('不是合法的 JSON 字符串');
      expect(() => validateOption(key, '{"gpt-4o": "half"}')).toThrow('不是合法的 JSON 字符串');
    }
  });
  it('when MinTopUp is below 1, then it is refused', () => {
    expect(() => validateOption('MinTopUp', '0')).toThrow();
    expect(validateOption('MinTopUp', '2').value).toBe('2');
  });
  it('when the SMTP port is 465, then SSL is switched on too', () => {
    expect(validateOption('SMTPPort', '465').implied).toEqual([['SMTPSSLEnabled', 'true']]);
    expect(validateOption('SMTPPort', '587').implied).toEqual([]);
  });
  it('when a switch is not a boolean, or the key is unknown, then it is refused', () => {
    expect(() => validateOption('RegisterEnabled', 'yes')).toThrow();
    expect(() => validateOption('NoSuchKey', '1')).toThrow('未知的设置项');
  });
});
