import { keyCipher } from '@aigw/common';
import { describe, expect, it } from 'vitest';
import { abilitiesOf } from './abilities.ts';
import {
  checkKey,
  checkModelMapping,
  checkMultiKeyMode,
  checkOther,
  checkPriority,
  checkStatusCodeMapping,
  checkWeight,
  keysOf,
  multiKeysOf,
  normaliseBaseUrl,
  normaliseList,
} from './channel-rules.ts';
import { CHANNEL_TYPES } from './channel-types.ts';

describe('channel rules', () => {
  it('when the catalogue is read, then it has the 30 types of the spec', () => {
    expect(Object.keys(CHANNEL_TYPES).map(Number)).toEqual(
      expect.arrayContaining([
        1, 2, 3, 4, 5, 8, 11, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 31, 33, 34, 35, 36, 37, 38, 39, 40, 41,
        42,
      ]),
    );
  });

  it("when the catalogue is read, then it has new-api's OpenAI-format types under their numbers", () => {
    expect([20, 27, 43, 45, 48].map((t) => CHANNEL_TYPES[t]?.name)).toEqual([
      'OpenRouter',
      'Perplexity',
      'DeepSeek',
      '字节火山方舟、豆包',
      'xAI',
    ]);
  });

  it("when the catalogue is read, then new-api's types 6-13, 44, 46, 47, 49, 52-54, 56 and 58-60 are there with their hosts", () => {
    expect(
      [6, 7, 9, 10, 12, 13, 44, 46, 47, 49, 52, 53, 54, 56, 58, 59, 60].map((t) => [
        CHANNEL_TYPES[t]?.name,
        CHANNEL_TYPES[t]?.baseUrl,
      ]),
    ).toEqual([
      ['OpenAIMax', 'https://api.openaimax.com'],
      ['OhMyGPT', 'https://api.ohmygpt.com'],
      ['AILS', 'https://api.caipacity.com'],
      ['AIProxy', 'https://api.aiproxy.io'],
      ['API2GPT', 'https://api.api2gpt.com'],
      ['AIGC2D', 'https://api.aigc2d.com'],
      ['MokaAI', 'https://api.moka.ai'],
      ['百度千帆 V2', 'https://qianfan.baidubce.com'],
      ['Xinference', ''],
      ['Coze', 'https://api.coze.cn'],
      ['Vidu', 'https://api.vidu.cn'],
      ['Submodel', 'https://llm.submodel.ai'],
      ['豆包视频', 'https://ark.cn-beijing.volces.com'],
      ['Replicate', 'https://api.replicate.com'],
      ['高级自定义', ''],
      ['Sub2API', ''],
      ['New API', ''],
    ]);
  });

  it('when a channel holds several keys, then each line is checked and the mode is random or polling', () => {
    expect(multiKeysOf(33, 'a|b|us-east-1\n\n c|d|us-west-2 \n')).toEqual(['a|b|us-east-1', 'c|d|us-west-2']);
    expect(() => multiKeysOf(33, 'a|b|us-east-1\nbroken')).toThrow('密钥格式错误，应为 Ak|Sk|Region');
    expect(() => multiKeysOf(41, '{}')).toThrow('Vertex AI 渠道不支持多密钥');
    expect(checkMultiKeyMode(' polling ')).toBe('polling');
    expect(() => checkMultiKeyMode('round-robin')).toThrow('多密钥模式');
  });

  it('when keys have a per-type format, then it is enforced with a hint', () => {
    expect(checkKey(15, 'ak|sk')).toBe('ak|sk');
    expect(() => checkKey(15, 'only-one')).toThrow('密钥格式错误，应为 APIKey|SecretKey');
    expect(() => checkKey(18, 'a|b')).toThrow('APPID|APISecret|APIKey');
    expect(checkKey(23, 'a|b|c')).toBe('a|b|c');
    expect(() => checkKey(33, 'a|b')).toThrow('Ak|Sk|Region');
    expect(checkKey(22, 'fastgpt-key-app1')).toBe('fastgpt-key-app1');
    expect(() => checkKey(41, 'not json')).toThrow('服务账号 JSON');
    expect(() => checkKey(1, '  ')).toThrow('请填写渠道名称和渠道密钥！');
  });

  it('when other is empty, then types 3 and 18 get their defaults; type 41 needs a region', () => {
    expect(checkOther(3, '')).toBe('2023-06-01-preview');
    expect(checkOther(18, '')).toBe('v2.1');
    expect(checkOther(41, 'us-central1')).toBe('us-central1');
    expect(checkOther(41, '{"gemini-1.5-pro":"us-east1"}')).toContain('us-east1');
    expect(() => checkOther(41, '')).toThrow();
  });

  it('when mappings are not JSON objects, then they are refused with the spec message', () => {
    expect(checkModelMapping('{"gpt-3.5-turbo":"gpt-3.5-turbo-0125"}')).toContain('0125');
    expect(() => checkModelMapping('{oops')).toThrow('模型映射必须是合法的 JSON 格式！');
    expect(() => checkModelMapping('[1]')).toThrow('模型映射必须是合法的 JSON 格式！');
    expect(checkStatusCodeMapping('{"400":"500"}')).toBe('{"400":"500"}');
    expect(() => checkStatusCodeMapping('{"400":"abc"}')).toThrow('状态码复写');
  });

  it('when numbers and lists are normalised, then bounds hold', () => {
    expect(checkPriority(-999)).toBe(-999);
    expect(() => checkPriority(-1000)).toThrow('优先级不能小于 -999');
    expect(checkWeight(0)).toBe(0);
    expect(() => checkWeight(-1)).toThrow('权重');
    expect(normaliseBaseUrl('https://x.example/v1//')).toBe('https://x.example/v1');
    expect(normaliseList(' a, b,,a ')).toBe('a,b');
    expect(keysOf(1, 'k1\n\n k2 \nk3', true)).toEqual(['k1', 'k2', 'k3']);
  });

  it('when abilities are derived, then there is one row per group and model', () => {
    const rows = abilitiesOf({ id: 5, models: 'm1,m2', group: 'default,vip', priority: 3, weight: 2, status: 3 });
    expect(rows.map((r) => r._id)).toEqual(['5|default|m1', '5|default|m2', '5|vip|m1', '5|vip|m2']);
    expect(rows.every((r) => !r.enabled && r.priority === 3 && r.weight === 2)).toBe(true);
  });

  it('when a key is encrypted, then it round-trips and a tampered value fails', () => {
    const cipher = keyCipher('11'.repeat(32));
    const stored = cipher.encrypt('sk-secret');
    expect(stored).not.toContain('sk-secret');
    expect(cipher.decrypt(stored)).toBe('sk-secret');
    expect(cipher.encrypt('sk-secret')).not.toBe(stored);
    const parts = stored.split(':');
    parts[3] = Buffer.from('sk-secreT').toString('base64');
    expect(() => cipher.decrypt(parts.join(':'))).toThrow();
  });
});
