import { describe, expect, it } from 'vitest';
import { nothingChanged, planSave } from './save-plan.ts';
import type { SectionSpec } from './sections.ts';

const section: SectionSpec = {
  id: 't',
  title: 'setting.operation',
  fields: [
    { key: 'Name', label: 'setting.operation', kind: 'text' },
    { key: 'Ratio', label: 'pricing.ratio', kind: 'json' },
    { key: 'Min', label: 'setting.operation', kind: 'number', min: 1 },
    { key: 'Token', label: 'common.key', kind: 'secret' },
    { key: 'On', label: 'setting.operation', kind: 'switch' },
  ],
};
const base = { Name: 'a', Ratio: '{}', Min: '1', On: 'false' };

describe('saving a settings section', () => {
  it('when nothing changed, then it says 你似乎并没有修改什么', () => {
    expect(planSave(section, base, { ...base, Token: '' })).toEqual({ ok: false, message: nothingChanged() });
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
