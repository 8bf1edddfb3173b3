import { describe, expect, it } from 'vitest';
import { type AffinitySettings, affinityKey, DEFAULT_AFFINITY_RULES } from './channel-affinity.ts';

const settings: AffinitySettings = {
  enabled: true,
  switchOnSuccess: true,
  keepOnChannelDisabled: false,
  defaultTtlSeconds: 3600,
  rules: DEFAULT_AFFINITY_RULES,
};
const input = (path: string, model: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => ({
  path,
  model,
  group: 'default',
  body,
  header: (n: string) => headers[n],
});

describe('channel affinity keys', () => {
  it('when Codex, Claude Code or a chat client names its session, then the default rules find it; otherwise none', () => {
    const codex = affinityKey(settings, input('/v1/responses', 'gpt-5.6-sol', { prompt_cache_key: 'k1' }));
    expect(codex).toMatchObject({ rule: 'codex cli trace', ttlSeconds: 3600 });
    expect(affinityKey(settings, input('/v1/responses', 'gpt-5.6-sol', { prompt_cache_key: 'k1' }))?.key).toBe(
      codex?.key,
    );
    expect(affinityKey(settings, input('/v1/responses', 'gpt-5.6-sol', { prompt_cache_key: 'k2' }))?.key).not.toBe(
      codex?.key,
    );
    // Codex's session header when there is no cache key.
    expect(affinityKey(settings, input('/v1/responses', 'gpt-5.6-sol', {}, { session_id: 's1' }))?.rule).toBe(
      'codex cli trace',
    );
    expect(
      affinityKey(settings, input('/v1/messages', 'claude-opus-5-5', { metadata: { user_id: 'user_abc_session_1' } }))
        ?.rule,
    ).toBe('claude cli trace');
    expect(affinityKey(settings, input('/v1/chat/completions', 'deepseek-chat', { prompt_cache_key: 'x' }))?.rule).toBe(
      'openai prompt cache key',
    );
    expect(affinityKey(settings, input('/v1/messages', 'claude-opus-5-5', {}))).toBeUndefined();
    expect(affinityKey(settings, input('/v1/responses', 'claude-opus-5-5', { prompt_cache_key: 'k' }))).toBeUndefined();
    expect(
      affinityKey({ ...settings, enabled: false }, input('/v1/responses', 'gpt-5', { prompt_cache_key: 'k' })),
    ).toBe(undefined);
  });

  it('when the group differs, then the session differs; a rule with a bad pattern, a value regex or its own TTL applies as written', () => {
    const a = affinityKey(settings, input('/v1/responses', 'gpt-5', { prompt_cache_key: 'k' }));
    const b = affinityKey(settings, { ...input('/v1/responses', 'gpt-5', { prompt_cache_key: 'k' }), group: 'vip' });
    expect(a?.key).not.toBe(b?.key);
    const custom: AffinitySettings = {
      ...settings,
      rules: [
        { name: 'broken', model_regex: ['('], key_sources: [{ type: 'gjson', path: 'user' }] },
        {
          name: 'by user',
          key_sources: [{ type: 'gjson', path: 'user' }],
          value_regex: '^u-',
          ttl_seconds: 60,
          user_agent_include: ['agent/'],
        },
      ],
    };
    const ua = { 'user-agent': 'agent/1.0' };
    expect(affinityKey(custom, input('/v1/chat/completions', 'm', { user: 'u-1' }, ua))).toMatchObject({
      rule: 'by user',
      ttlSeconds: 60,
    });
    expect(affinityKey(custom, input('/v1/chat/completions', 'm', { user: 'x-1' }, ua))).toBeUndefined();
    expect(affinityKey(custom, input('/v1/chat/completions', 'm', { user: 'u-1' }))).toBeUndefined();
  });
});
