import { describe, expect, it } from 'vitest';
import { failoverRules, parseStatusCodeRanges } from './failover-rules.ts';
import { OPTION_CATALOGUE } from './option-catalogue.ts';

const defaults = {
  AutomaticDisableKeywords: OPTION_CATALOGUE.AutomaticDisableKeywords.default,
  AutomaticDisableStatusCodes: OPTION_CATALOGUE.AutomaticDisableStatusCodes.default,
  AutomaticRetryStatusCodes: OPTION_CATALOGUE.AutomaticRetryStatusCodes.default,
};

describe('failover rules', () => {
  it("when ranges are written in new-api's format, then they are parsed, sorted and merged", () => {
    expect(parseStatusCodeRanges('500-599, 401，429,402-403')).toEqual([
      { start: 401, end: 403 },
      { start: 429, end: 429 },
      { start: 500, end: 599 },
    ]);
    expect(() => parseStatusCodeRanges('401,abc,700,503-500')).toThrow('abc, 700, 503-500');
  });

  it('when the defaults apply, then retries and disables are the old fixed rules', () => {
    const r = failoverRules(defaults);
    for (const s of [429, 500, 502, 503, 401, 403, 404]) expect(r.retries(s), String(s)).toBe(true);
    for (const s of [400, 408, 504, 524, 200]) expect(r.retries(s), String(s)).toBe(false);
    expect(r.disables(401, 'whatever')).toBe(true);
    expect(r.disables(429, 'You exceeded your current quota, please check your plan')).toBe(true);
    expect(r.disables(403, 'Your account has been deactivated')).toBe(true);
    expect(r.disables(500, 'boom')).toBe(false);
  });

  it('when the options change, then the rules follow them (504 is never retried)', () => {
    const r = failoverRules({
      AutomaticDisableKeywords: 'Model Is Retired\n\n',
      AutomaticDisableStatusCodes: '401,403',
      AutomaticRetryStatusCodes: '400,504',
    });
    expect(r.retries(500)).toBe(false);
    expect(r.retries(400)).toBe(true);
    expect(r.retries(504)).toBe(false);
    expect(r.disables(403, 'x')).toBe(true);
    expect(r.disables(404, 'the model is retired today')).toBe(true);
    expect(r.disables(429, 'You exceeded your current quota')).toBe(false);
  });
});
