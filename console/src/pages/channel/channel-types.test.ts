import { describe, expect, it } from 'vitest';
import {
  CHANNEL_TYPE_OPTIONS,
  defaultOther,
  joinKeyParts,
  keyHint,
  keyParts,
  multiKeyState,
  responseTimeBadge,
  statusReason,
} from './channel-types.ts';

describe('channel type helpers', () => {
  it('when the options are listed, then the 30 types of the spec are there', () => {
    const values = CHANNEL_TYPE_OPTIONS.map((o) => o.value);
    expect(values).toEqual(
      expect.arrayContaining([
        1, 2, 3, 4, 5, 8, 11, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 31, 33, 34, 35, 36, 37, 38, 39, 40, 41,
        42,
      ]),
    );
    expect(new Set(values).size).toBe(values.length);
  });

  it("when the options are listed, then new-api's OpenAI-format types have their numbers", () => {
    expect([20, 27, 43, 45, 48].map((t) => CHANNEL_TYPE_OPTIONS.find((o) => o.value === t)?.label)).toEqual([
      'OpenRouter',
      'Perplexity',
      'DeepSeek',
      '字节火山方舟、豆包',
      'xAI',
    ]);
  });

  it('when a type has a key of parts, then the form gets one input per part and joins them in the spec format', () => {
    expect(keyParts(33)?.parts.map((p) => p.label)).toEqual(['Access Key（Ak）', 'Secret Key（Sk）', '区域（Region）']);
    expect(joinKeyParts(33, ['AKIA1', ' sk ', 'us-east-1'])).toBe('AKIA1|sk|us-east-1');
    expect(joinKeyParts(22, ['fastgpt-abc', 'app1'])).toBe('fastgpt-abc-app1');
    expect(joinKeyParts(23, ['', '', ''])).toBe('');
    expect(keyParts(1)).toBeUndefined();
  });

  it('when a video type is picked, then Kling and Jimeng ask for AccessKey|SecretKey and Sora for an API key', () => {
    expect(CHANNEL_TYPE_OPTIONS.find((o) => o.value === 51)?.label).toBe('即梦');
    expect(keyHint(50)).toBe('按照如下格式输入：AccessKey|SecretKey');
    expect(keyHint(51)).toBe('按照如下格式输入：AccessKey|SecretKey');
    expect(keyHint(55)).toBe('请输入 OpenAI 视频接口（Sora）的 API Key');
    expect(keyParts(51)?.parts.map((p) => [p.label, p.placeholder, !!p.secret])).toEqual([
      ['AccessKey', '火山引擎访问控制中的 AccessKeyId', false],
      ['SecretKey', '火山引擎访问控制中的 SecretAccessKey', true],
    ]);
    expect(joinKeyParts(51, [' AKLT1 ', 'c2VjcmV0']).split('|')).toEqual(['AKLT1', 'c2VjcmV0']);
    expect(
      keyParts(50)
        ?.parts.map((p) => p.label)
        .join(keyParts(50)?.sep),
    ).toBe('AccessKey|SecretKey');
    expect(keyParts(55)).toBeUndefined();
  });

  it('when a channel holds several keys, then its row state counts the disabled ones', () => {
    expect(multiKeyState('polling', '{"size":3,"disabled":[{"index":2,"reason":"401","time":5}]}')).toEqual({
      size: 3,
      disabled: [{ index: 2, reason: '401', time: 5 }],
    });
    expect(multiKeyState('', '')).toBeUndefined();
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
