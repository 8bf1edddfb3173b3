import { afterEach, describe, expect, it } from 'vitest';
// The served catalogue exactly as GET /api/channel/types builds it (no copy of it in the console).
import { channelTypesWire } from '../../../../services/gateway/src/transport/http/routes/channel-types.ts';
import { LANG_KEY } from '../../locale/translate.ts';
import {
  type ChannelTypeInfo,
  defaultOther,
  joinKeyParts,
  keyHint,
  keyParts,
  multiKeyState,
  otherField,
  responseTimeBadge,
  statusReason,
  typeLabel,
  typeOf,
} from './channel-types.ts';

const served = channelTypesWire() as ChannelTypeInfo[];
const of = (type: number) => typeOf(served, type);

describe('channel type helpers', () => {
  afterEach(() => localStorage.removeItem(LANG_KEY));

  it('when the catalogue is served, then the 30 types of the spec are there once each', () => {
    const values = served.map((o) => o.type);
    expect(values).toEqual(
      expect.arrayContaining([
        1, 2, 3, 4, 5, 8, 11, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 31, 33, 34, 35, 36, 37, 38, 39, 40, 41,
        42,
      ]),
    );
    expect(new Set(values).size).toBe(values.length);
  });

  it("when the catalogue is served, then new-api's OpenAI-format types have their numbers, named in the reader's language", () => {
    const names = () => [20, 27, 43, 45, 48].map((t) => typeLabel(of(t) as ChannelTypeInfo));
    expect(names()).toEqual(['OpenRouter', 'Perplexity', 'DeepSeek', '字节火山方舟、豆包', 'xAI']);
    localStorage.setItem(LANG_KEY, 'en-US');
    expect(names()).toEqual(['OpenRouter', 'Perplexity', 'DeepSeek', 'VolcEngine Ark (Doubao)', 'xAI']);
  });

  it('when a type has a key of parts, then the form gets one input per part and joins them in the spec format', () => {
    expect(keyParts(of(33))?.parts.map((p) => p.label)).toEqual([
      'Access Key（Ak）',
      'Secret Key（Sk）',
      '区域（Region）',
    ]);
    expect(joinKeyParts(of(33), ['AKIA1', ' sk ', 'us-east-1'])).toBe('AKIA1|sk|us-east-1');
    expect(joinKeyParts(of(22), ['fastgpt-abc', 'app1'])).toBe('fastgpt-abc-app1');
    expect(joinKeyParts(of(23), ['', '', ''])).toBe('');
    expect(keyParts(of(1))).toBeUndefined();
  });

  it('when a video type is picked, then Kling and Jimeng ask for AccessKey|SecretKey and Sora for an API key', () => {
    expect(typeLabel(of(51) as ChannelTypeInfo)).toBe('即梦');
    expect(keyHint(of(50))).toBe('按照如下格式输入：AccessKey|SecretKey');
    expect(keyHint(of(51))).toBe('按照如下格式输入：AccessKey|SecretKey');
    expect(keyHint(of(55))).toBe('请输入 OpenAI 视频接口（Sora）的 API Key');
    expect(keyParts(of(51))?.parts.map((p) => [p.label, p.placeholder, !!p.secret])).toEqual([
      ['AccessKey', '火山引擎访问控制中的 AccessKeyId', false],
      ['SecretKey', '火山引擎访问控制中的 SecretAccessKey', true],
    ]);
    expect(joinKeyParts(of(51), [' AKLT1 ', 'c2VjcmV0']).split('|')).toEqual(['AKLT1', 'c2VjcmV0']);
    expect(
      keyParts(of(50))
        ?.parts.map((p) => p.label)
        .join(keyParts(of(50))?.sep),
    ).toBe('AccessKey|SecretKey');
    expect(keyParts(of(55))).toBeUndefined();
    localStorage.setItem(LANG_KEY, 'en-US');
    expect(keyParts(of(50))?.parts.map((p) => p.placeholder)).toEqual([
      'AccessKey of the Kling open platform',
      'SecretKey of the Kling open platform',
    ]);
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

  it('when a type has a key format or default version, then hints say so and other types show no other field', () => {
    expect(keyHint(of(15))).toContain('APIKey|SecretKey');
    expect(keyHint(of(33))).toContain('Ak|Sk|Region');
    expect(keyHint(of(1))).toBe('请输入渠道对应的鉴权密钥');
    expect(defaultOther(of(3))).toBe('2023-06-01-preview');
    expect(defaultOther(of(18))).toBe('v2.1');
    expect(otherField(of(18))).toEqual({ label: '模型版本', hint: '接口版本，例如 v3.5', placeholder: 'v2.1' });
    expect(otherField(of(49))?.label).toBe('智能体 ID（Coze 的 bot_id）');
    expect(otherField(of(1))).toBeUndefined();
    expect(statusReason('{"status_reason":"bad key","status_time":5}')).toEqual({ reason: 'bad key', time: 5 });
    expect(statusReason('')).toBeUndefined();
  });
});
