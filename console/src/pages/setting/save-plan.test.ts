import { describe, expect, it } from 'vitest';
import { NOTHING_CHANGED, planSave } from './save-plan.ts';
import type { SectionSpec } from './sections.ts';

const section: SectionSpec = {
  id: 't',
  title: ['t', 't'],
  fields: [
    { key: 'Name', label: ['名', 'n'], kind: 'text' },
    { key: 'Ratio', label: ['倍率', 'r'], kind: 'json' },
    { key: 'Min', label: ['最小', 'm'], kind: 'number', min: 1 },
    { key: 'Token', label: ['密钥', 's'], kind: 'secret' },
    { key: 'On', label: ['开', 'o'], kind: 'switch' },
  ],
};
const base = { Name: 'a', Ratio: '{}', Min: '1', On: 'false' };

describe('saving a settings section', () => {
  it('when nothing changed, then it says 你似乎并没有修改什么', () => {
    expect(planSave(section, base, { ...base, Token: '' })).toEqual({ ok: false, message: NOTHING_CHANGED });
  });
  it('when keys changed, then one change per key is planned, a typed secret included', () => {
    expect(planSave(section, base, { ...base, Name: ' b ', On: 'true', Token: 'x' })).toEqual({
      ok: true,
      changes: [
        ['Name', 'b'],
        ['Token', 'x'],
        ['On', 'true'],
      ],
    });
  });
  it('when a JSON field does not parse or a number is below its minimum, then 请检查输入', () => {
    expect(planSave(section, base, { ...base, Ratio: '{bad' })).toEqual({
      ok: false,
      message: '请检查输入',
      invalidKeys: ['Ratio'],
    });
    expect(planSave(section, base, { ...base, Min: '0' })).toMatchObject({ ok: false, invalidKeys: ['Min'] });
  });
});
