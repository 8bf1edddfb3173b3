import { describe, expect, it } from 'vitest';
import { channelTypesWire } from '../../../../services/gateway/src/transport/http/routes/channel-types.ts';
import {
  channelBody,
  channelFormError,
  EMPTY_CHANNEL,
  keepsStoredKey,
  shownKeyParts,
  typeChange,
} from './channel-form-values.ts';
import { customModels } from './channel-models-field.tsx';
import { type ChannelTypeInfo, keyParts, typeOf } from './channel-types.ts';

const served = channelTypesWire() as ChannelTypeInfo[];
const of = (type: number) => typeOf(served, type);
const ok = { ...EMPTY_CHANNEL, name: 'c', key: 'sk', models: ['gpt-4o'] };

describe('channel form rules', () => {
  it("when a new channel is submitted, then the checks come in spec 01's order with its messages", () => {
    expect(channelFormError({ ...ok, name: ' ' }, false, undefined)).toBe('请填写渠道名称和渠道密钥！');
    expect(channelFormError({ ...ok, key: '' }, true, undefined)).toBeUndefined();
    expect(channelFormError({ ...ok, models: [], model_mapping: '[' }, false, undefined)).toBe('请至少选择一个模型！');
    expect(channelFormError({ ...ok, model_mapping: '[1]' }, false, undefined)).toBe(
      '模型映射必须是合法的 JSON 格式！',
    );
    expect(channelFormError(ok, false, undefined)).toBeUndefined();
  });

  it('when a key of parts is half typed, then the format is named; batch and multi-key modes take whole keys', () => {
    const parts = shownKeyParts(of(15), ok);
    expect(parts).toEqual(keyParts(of(15)));
    expect(channelFormError({ ...ok, key: 'a|', key_parts: ['a'] }, false, parts)).toMatch(/^密钥格式错误，应为 /);
    // Editing with every part empty keeps the stored key (the hint under the first part says so).
    const stored = { ...ok, key: 'ak-1|sk-1' };
    expect(channelFormError(stored, true, parts)).toBeUndefined();
    expect(keepsStoredKey(stored, true, parts)).toBe(true);
    expect(channelFormError({ ...stored, key: 'a|', key_parts: ['a'] }, true, parts)).toMatch(/^密钥格式错误，应为 /);
    expect(keepsStoredKey({ ...stored, key_parts: ['a'] }, true, parts)).toBe(false);
    expect(keepsStoredKey(stored, false, parts)).toBe(false);
    expect(shownKeyParts(of(15), { batch: true, multi_key_mode: '' })).toBeUndefined();
    expect(shownKeyParts(of(15), { batch: false, multi_key_mode: 'polling' })).toBeUndefined();
  });

  it('when the type changes, then other follows the new default unless typed, and a key of parts is emptied', () => {
    expect(typeChange({ other: '', key: 'sk' }, of(1), of(3))).toEqual({
      other: '2023-06-01-preview',
      key_parts: [],
      key: 'sk',
    });
    expect(typeChange({ other: '2023-06-01-preview', key: 'sk' }, of(3), of(18)).other).toBe('v2.1');
    expect(typeChange({ other: 'mine', key: 'sk' }, of(3), of(18))).toEqual({ other: 'mine', key_parts: [], key: '' });
  });

  it('when the values are sent, then the base URL loses its trailing slash, no key keeps the stored one, no group is default', () => {
    const body = channelBody({ ...ok, key: ' ', base_url: ' https://x.test/// ', groups: [] });
    expect(body).toMatchObject({ base_url: 'https://x.test', groups: ['default'], auto_ban: 1 });
    expect(body).not.toHaveProperty('key');
    expect(channelBody({ ...ok, key: ' sk \n' }).key).toBe('sk');
  });

  it('when custom model names are typed, then they are split and trimmed; one already chosen is refused', () => {
    expect(customModels(' a, b ,,', ['c'])).toEqual({ names: ['a', 'b'] });
    expect(customModels('a,c', ['c'])).toEqual({ error: '某些模型已存在！' });
  });
});
