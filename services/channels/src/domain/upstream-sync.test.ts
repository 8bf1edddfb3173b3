import { describe, expect, it } from 'vitest';
import { NAME_RULE, ruleMatches } from './model-meta.ts';
import { metaView, type ServedModels } from './model-meta-view.ts';
import { chooseStatus, conflictsOf, listOf, upstreamUrls } from './upstream-sync.ts';

const doc = {
  _id: 7,
  model_name: 'gpt-4o',
  description: 'local',
  icon: '',
  tags: 'chat',
  vendor_id: 3,
  endpoints: '',
  status: 1,
  sync_official: 1,
  name_rule: NAME_RULE.prefix,
  created_time: 1,
  updated_time: 2,
};

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

  it('when a synced entry differs from the upstream, then each differing field is named with both values', () => {
    const up = { model_name: 'gpt-4o', description: 'upstream', tags: ' chat ', vendor_name: 'OpenAI', status: 0 };
    // Text compares trimmed (tags ' chat ' is 'chat'); status 0 upstream keeps the local 1.
    expect(conflictsOf(doc, up, 'Other')).toEqual([
      { field: 'description', local: 'local', upstream: 'upstream' },
      { field: 'vendor', local: 'Other', upstream: 'OpenAI' },
      { field: 'name_rule', local: 1, upstream: 0 },
    ]);
    expect(conflictsOf({ ...doc, name_rule: 0, description: 'upstream' }, up, 'OpenAI')).toEqual([]);
  });

  it('when a prefix entry matches served models, then its view lists them with their channels and groups', () => {
    const served: ServedModels = new Map([
      ['gpt-4o-mini', { channels: new Map([[1, { name: 'a', type: 1 }]]), groups: new Set(['vip']) }],
      ['gpt-4o', { channels: new Map([[2, { name: 'b', type: 1 }]]), groups: new Set(['default']) }],
      ['claude', { channels: new Map([[3, { name: 'c', type: 14 }]]), groups: new Set(['x']) }],
    ]);
    const v = metaView(doc, served);
    expect(v.matchedModels).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(v.matchedCount).toBe(2);
    expect(v.enableGroups).toEqual(['default', 'vip']);
    expect(v.boundChannels).toEqual([
      { name: 'b', type: 1 },
      { name: 'a', type: 1 },
    ]);
    expect(metaView({ ...doc, name_rule: NAME_RULE.exact }, served).matchedModels).toEqual([]);
  });
});
