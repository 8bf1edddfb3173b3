import { describe, expect, it } from 'vitest';
import { OPTION_CATALOGUE, type OptionKind, optionAccessors } from './option-catalogue.ts';

/** Whether a default's text is a value of its kind, the way the users service validates a save. */
const parsesAs: Record<OptionKind, (raw: string) => boolean> = {
  bool: (raw) => raw === 'true' || raw === 'false',
  int: (raw) => /^-?\d+$/.test(raw) && Number.isSafeInteger(Number(raw)),
  float: (raw) => raw.trim() !== '' && Number.isFinite(Number(raw)),
  json: (raw) => {
    try {
      JSON.parse(raw);
      return true;
    } catch {
      return false;
    }
  },
  text: () => true,
  url: (raw) => raw === '' || URL.canParse(raw),
};

describe('option catalogue', () => {
  it.each(Object.entries(OPTION_CATALOGUE))('when %s is read, then its default parses as its kind', (_key, spec) => {
    expect(parsesAs[spec.kind](spec.default)).toBe(true);
  });

  it('when a secret option is listed, then its default is empty text (or, for a write-only document, one without secrets)', () => {
    for (const [key, spec] of Object.entries(OPTION_CATALOGUE)) {
      if (!spec.secret) continue;
      // CustomOAuthProviders: the providers with their client secrets, never shown; empty at first.
      if (key === 'CustomOAuthProviders')
        expect(spec).toMatchObject({ kind: 'json', default: '{"next_id":1,"providers":[]}' });
      else expect(spec).toMatchObject({ default: '', kind: 'text' });
    }
  });
});

describe('option accessors', () => {
  it('when no value is held, then every accessor answers the catalogue default', () => {
    const r = optionAccessors(() => undefined);
    expect(r.number('QuotaPerUnit')).toBe(500000);
    expect(r.bool('PasswordLoginEnabled')).toBe(true);
    expect(r.bool('DrawingEnabled')).toBe(false);
    expect(r.text('ServerAddress')).toBe('http://localhost:3000');
    expect(r.json('GroupRatio')).toEqual({ default: 1, vip: 1, svip: 1 });
    expect(r.get('Notice')).toBeUndefined();
  });

  it('when a value is held, then it wins over the default', () => {
    const values: Record<string, string> = {
      QuotaPerUnit: '1000',
      PasswordLoginEnabled: 'false',
      ServerAddress: '',
      GroupRatio: '{"default":2}',
    };
    const r = optionAccessors((k) => values[k]);
    expect(r.number('QuotaPerUnit')).toBe(1000);
    expect(r.bool('PasswordLoginEnabled')).toBe(false);
    expect(r.text('ServerAddress')).toBe('');
    expect(r.json('GroupRatio')).toEqual({ default: 2 });
  });

  it('when a held number or JSON does not parse, then the default (or an explicit fallback) is answered', () => {
    const r = optionAccessors((k) => ({ QuotaPerUnit: 'many', GroupRatio: '{' })[k as string]);
    expect(r.number('QuotaPerUnit')).toBe(500000);
    expect(r.number('QuotaPerUnit', 7)).toBe(7);
    expect(r.json('GroupRatio')).toEqual({ default: 1, vip: 1, svip: 1 });
  });

  it('when a key is not in the catalogue or of another kind, then the read does not compile', () => {
    // Never called: the checks are the type checker's (tsc fails when an expected error is gone).
    const misuse = (r: ReturnType<typeof optionAccessors>) => [
      // @ts-expect-error NoSuchOption is not a catalogue key.
      r.number('NoSuchOption'),
      // @ts-expect-error QuotaPerUnit is a number, not a switch.
      r.bool('QuotaPerUnit'),
    ];
    expect(typeof misuse).toBe('function');
  });
});
