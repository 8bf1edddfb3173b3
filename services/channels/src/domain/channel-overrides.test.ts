import { describe, expect, it } from 'vitest';
import { checkHeaderOverride, checkOtherSettings, checkParamOverride, checkSetting } from './channel-overrides.ts';

describe('channel overrides checked on save', () => {
  it('when the overrides are valid JSON of the right shape, then they are kept as given', () => {
    expect(checkParamOverride(' {"temperature":0.1} ')).toBe('{"temperature":0.1}');
    expect(checkParamOverride('{"operations":[{"path":"a.b","mode":"delete"}]}')).toContain('delete');
    expect(checkHeaderOverride('{"Authorization":"Bearer {api_key}"}')).toContain('{api_key}');
    expect(checkSetting('{"system_prompt":"hi","force_format":true,"proxy":"http://127.0.0.1:7890"}')).toContain('hi');
    expect(checkOtherSettings('{"azure_responses_version":"preview","disable_store":true}')).toContain('preview');
    for (const empty of ['', '  ']) expect(checkParamOverride(empty)).toBe('');
  });

  it('when an override is not JSON, not an object or has a wrong type, then the save is refused with the reason', () => {
    expect(() => checkParamOverride('{temperature:1}')).toThrow('参数覆盖必须是合法的 JSON 格式！');
    expect(() => checkParamOverride('[1]')).toThrow('参数覆盖必须是合法的 JSON 格式！');
    expect(() => checkParamOverride('{"operations":[{"path":"a","mode":"explode"}]}')).toThrow('mode 无效');
    expect(() => checkParamOverride('{"operations":[{"mode":"set"}]}')).toThrow('缺少 path');
    expect(() => checkParamOverride('{"operations":[{"mode":"regex_replace","path":"a","from":"("}]}')).toThrow(
      '正则表达式无效',
    );
    expect(() => checkHeaderOverride('{"X-A":1}')).toThrow('X-A 的值必须是字符串');
    expect(() => checkHeaderOverride('{"bad header":"x"}')).toThrow('请求头名称无效');
    expect(() => checkSetting('{"force_format":"yes"}')).toThrow('force_format 必须是布尔值');
    expect(() => checkSetting('{"system_promt":"x"}')).toThrow('未知字段：system_promt');
    expect(() => checkSetting('{"proxy":"ftp://x"}')).toThrow('代理地址只支持 http 或 https');
    expect(() => checkOtherSettings('{"disable_store":"1"}')).toThrow('disable_store 必须是布尔值');
  });
});
