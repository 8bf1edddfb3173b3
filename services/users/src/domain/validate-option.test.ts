import { describe, expect, it } from 'vitest';
import { checkPrerequisites, validateOption } from './validate-option.ts';

describe('option rules beyond the format', () => {
  it('when a JSON option has the wrong shape, then it is refused', () => {
    expect(() => validateOption('ModelPrice', '{"dall-e-3":"x"}')).toThrow('ModelPrice 不是合法的 JSON 字符串');
    expect(() => validateOption('UserUsableGroups', '["default"]')).toThrow('UserUsableGroups');
    expect(() => validateOption('Chats', '[{"a":1}]')).toThrow('Chats');
    expect(validateOption('Chats', '[{"A":"https://a"}]').value).toBe('[{"A":"https://a"}]');
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
