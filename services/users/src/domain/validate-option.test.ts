import { describe, expect, it } from 'vitest';
import { checkPrerequisites, validateOption } from './validate-option.ts';

describe('option rules beyond the format', () => {
  it('when a JSON option has the wrong shape, then it is refused', () => {
    expect(() => validateOption('ModelPrice', '{"dall-e-3":"x"}')).toThrow('ModelPrice 不是合法的 JSON 字符串');
    expect(() => validateOption('UserUsableGroups', '["default"]')).toThrow('UserUsableGroups');
    expect(() => validateOption('Chats', '[{"a":1}]')).toThrow('Chats');
    expect(validateOption('Chats', '[{"A":"https://a"}]').value).toBe('[{"A":"https://a"}]');
  });

  it('when ModelPriceTiers is saved, then each tier needs a whole positive threshold and non-negative ratios', () => {
    const good = '{"claude-sonnet-4-5":[{"above_prompt_tokens":200000,"model_ratio":3,"completion_ratio":7.5}]}';
    expect(validateOption('ModelPriceTiers', good).value).toBe(good);
    expect(validateOption('ModelPriceTiers', '{}').value).toBe('{}');
    const refused = (v: string, why: string) => {
      expect(() => validateOption('ModelPriceTiers', v)).toThrow('ModelPriceTiers 格式错误：');
      expect(() => validateOption('ModelPriceTiers', v)).toThrow(why);
    };
    refused('[]', '应为');
    refused('{"m":[]}', '模型 m 的阶梯应为非空数组');
    refused('{"m":[{"model_ratio":2}]}', '模型 m 的 above_prompt_tokens 必须是正整数');
    refused('{"m":[{"above_prompt_tokens":1.5,"model_ratio":2}]}', 'above_prompt_tokens 必须是正整数');
    refused('{"m":[{"above_prompt_tokens":10}]}', '模型 m 的阶梯缺少 model_ratio');
    refused('{"m":[{"above_prompt_tokens":10,"model_ratio":-1}]}', '模型 m 的 model_ratio 必须是非负数');
    refused('{"m":[{"above_prompt_tokens":10,"model_ratio":1,"cache_ratio":"x"}]}', 'cache_ratio 必须是非负数');
    refused('{"m":[{"above_prompt_tokens":10,"model_ratio":1,"price":1}]}', '未知字段 price');
    refused(
      '{"m":[{"above_prompt_tokens":10,"model_ratio":1},{"above_prompt_tokens":10,"model_ratio":2}]}',
      'above_prompt_tokens 10 重复',
    );
  });

  it('when a login method is switched on before its settings, then it is refused; off is always allowed', () => {
    expect(() =>
      checkPrerequisites('GitHubOAuthEnabled', 'true', { GitHubClientId: 'id', GitHubClientSecret: '' }),
    ).toThrow('无法启用 GitHub OAuth');
    expect(() =>
      checkPrerequisites('GitHubOAuthEnabled', 'true', { GitHubClientId: 'id', GitHubClientSecret: 's' }),
    ).not.toThrow();
    expect(() => checkPrerequisites('WeChatAuthEnabled', 'false', {})).not.toThrow();
    expect(() => checkPrerequisites('SystemName', 'true', {})).not.toThrow();
  });
});

describe('group options (new-api formats)', () => {
  it('when GroupGroupRatio, special usable groups or AutoGroups have the wrong shape, then they are refused', () => {
    expect(validateOption('GroupGroupRatio', '{"vip":{"default":0.5}}').value).toBe('{"vip":{"default":0.5}}');
    expect(() => validateOption('GroupGroupRatio', '{"vip":{"default":"x"}}')).toThrow(
      'GroupGroupRatio 格式错误：分组 vip 使用 default 的倍率必须是非负数',
    );
    expect(() => validateOption('GroupGroupRatio', '{"vip":0.5}')).toThrow('分组 vip 的值应为对象');
    expect(() => validateOption('GroupGroupRatio', '{"vip":')).toThrow('GroupGroupRatio 不是合法的 JSON 字符串');
    const special = 'group_ratio_setting.group_special_usable_group';
    expect(validateOption(special, '{"vip":{"+:svip":"超级","-:default":""}}').value).toContain('svip');
    expect(() => validateOption(special, '{"vip":{"svip":1}}')).toThrow('描述必须是字符串');
    expect(validateOption('AutoGroups', '["vip","default"]').value).toBe('["vip","default"]');
    expect(() => validateOption('AutoGroups', '{"a":1}')).toThrow('AutoGroups 格式错误');
    expect(() => validateOption('AutoGroups', '["auto"]')).toThrow('不能包含 auto 本身');
  });
});
