import { describe, expect, it } from 'vitest';
import { NAME_RULE, ruleMatches } from './model-meta.ts';
import { chooseStatus, listOf, upstreamUrls } from './upstream-sync.ts';

describe('the upstream sync helpers', () => {
  it('when a locale is known, then the translated lists are read; otherwise the default ones', () => {
    expect(upstreamUrls('http://meta.test/', '')).toEqual({
      locale: '',
      modelsUrl: 'http://meta.test/api/newapi/models.json',
      vendorsUrl: 'http://meta.test/api/newapi/vendors.json',
    });
    expect(upstreamUrls('http://meta.test', 'zh-CN').modelsUrl).toBe(
      'http://meta.test/api/i18n/zh-CN/newapi/models.json',
    );
    expect(upstreamUrls('http://meta.test', '../x').modelsUrl).toBe('http://meta.test/api/newapi/models.json');
  });

  it('when the upstream answers an envelope or a bare array, then both are read; anything else is refused', () => {
    expect(listOf({ success: true, data: [{ model_name: 'a' }] })).toEqual([{ model_name: 'a' }]);
    expect(listOf([{ model_name: 'b' }])).toEqual([{ model_name: 'b' }]);
    expect(() => listOf({ success: true })).toThrow();
  });

  it("when the upstream's status is 0, then the fallback (or 1) is kept, as new-api's chooseStatus", () => {
    expect(chooseStatus(0, 0)).toBe(1);
    expect(chooseStatus(undefined, 0)).toBe(1);
    expect(chooseStatus(0, 2)).toBe(2);
    expect(chooseStatus(1, 0)).toBe(1);
  });

  it('when a meta entry has a name rule, then it matches served models by prefix, part or suffix', () => {
    expect(ruleMatches(NAME_RULE.exact, 'gpt-4o', 'gpt-4o')).toBe(true);
    expect(ruleMatches(NAME_RULE.exact, 'gpt-4o', 'gpt-4o-mini')).toBe(false);
    expect(ruleMatches(NAME_RULE.prefix, 'gpt-4o', 'gpt-4o-mini')).toBe(true);
    expect(ruleMatches(NAME_RULE.contains, '4o', 'gpt-4o-mini')).toBe(true);
    expect(ruleMatches(NAME_RULE.suffix, '-mini', 'gpt-4o-mini')).toBe(true);
    expect(ruleMatches(NAME_RULE.suffix, '-mini', 'gpt-4o')).toBe(false);
  });
});
