import { describe, expect, it } from 'vitest';
import { hasOverrides, overrideErrors, overrideFieldsOf, overridesBody } from './channel-overrides.ts';

describe('channel overrides in the form', () => {
  it('when a channel with a setting is edited and saved unchanged, then the same setting is sent back', () => {
    const stored = {
      param_override: '{"temperature":0.2}',
      header_override: '{"X-Key":"{api_key}"}',
      setting: '{"system_prompt":"Be brief","system_prompt_override":true,"proxy":"http://127.0.0.1:7890"}',
      settings: '',
    };
    const fields = overrideFieldsOf(stored);
    expect(fields.system_prompt).toBe('Be brief');
    expect(fields.system_prompt_override).toBe(true);
    expect(JSON.parse(overridesBody(fields).setting)).toEqual(JSON.parse(stored.setting));
    expect(overridesBody(overrideFieldsOf({})).setting).toBe('');
    expect(hasOverrides(stored)).toBe(true);
    expect(hasOverrides({ param_override: '', setting: '' })).toBe(false);
  });

  it('when a field is not a JSON object or the proxy is not a URL, then the form says which', () => {
    const fields = {
      ...overrideFieldsOf({}),
      param_override: '{temperature: 1}',
      header_override: '{"X-A": 1}',
      proxy: 'socks://x',
    };
    const errors = overrideErrors(fields);
    expect(errors).toHaveLength(3);
    expect(overrideErrors(overrideFieldsOf({ param_override: '{"operations":[]}' }))).toEqual([]);
  });
});
