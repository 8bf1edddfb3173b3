import type { Stack } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { type Api, rootApi, setOptions, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface PricingJson {
  model_name: string;
  quota_type: number;
  model_ratio: number;
  model_price: number;
  completion_ratio: number;
  audio_ratio: number;
  audio_completion_ratio: number;
  enable_groups: string[];
}
type PricingAnswer = { success: boolean; data: PricingJson[]; group_ratio: Record<string, number> };

describe('pricing through the gateway', () => {
  let stack: Stack;
  let admin: Api;
  beforeAll(async () => {
    stack = await startMoneyStack();
    admin = (await userApi(stack, { role: 10 })).api;
    for (const [name, models, group] of [
      ['a', 'gpt-4o,claude-3-5-sonnet-20241022,dall-e-3', 'default'],
      ['b', 'gpt-4o,gemini-2.5-pro', 'vip'],
    ] as const) {
      const res = await admin.post('/channel/', { name, type: 1, key: 'k', models, group });
      expect(res.body.success).toBe(true);
    }
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const pricing = async () => (await (await fetch(`${stack.gatewayUrl}/api/pricing`)).json()) as PricingAnswer;

  it('when anyone asks (no login), then offered models come with the default ratios and their groups', async () => {
    const res = await pricing();
    expect(res.success).toBe(true);
    expect(res.group_ratio).toEqual({ default: 1, vip: 1, svip: 1 });
    const by = Object.fromEntries(res.data.map((p) => [p.model_name, p]));
    expect(Object.keys(by).sort()).toEqual(['claude-3-5-sonnet-20241022', 'dall-e-3', 'gemini-2.5-pro', 'gpt-4o']);
    expect(by['gpt-4o']).toMatchObject({
      quota_type: 0,
      model_ratio: 1.25,
      completion_ratio: 4,
      enable_groups: ['default', 'vip'],
    });
    expect(by['claude-3-5-sonnet-20241022']).toMatchObject({ model_ratio: 1.5, completion_ratio: 5 });
    expect(by['gemini-2.5-pro']).toMatchObject({ model_ratio: 0.625, completion_ratio: 8, enable_groups: ['vip'] });
    expect(by['dall-e-3']).toMatchObject({ quota_type: 1, model_price: 0.04 });
  });

  it('when an admin changes ratios and root resets them, then pricing follows; only root may reset', async () => {
    await setOptions(stack, { ModelRatio: '{"gpt-4o":3}', GroupRatio: '{"default":1,"vip":2}' });
    // Each option travels on its own: wait for both.
    const changed = await eventually(
      pricing,
      (p) => p.data.find((m) => m.model_name === 'gpt-4o')?.model_ratio === 3 && p.group_ratio.vip === 2,
    );
    expect(changed.group_ratio).toEqual({ default: 1, vip: 2 });
    expect(changed.data.find((m) => m.model_name === 'claude-3-5-sonnet-20241022')?.model_ratio).toBe(0);

    expect((await admin.post('/option/rest_model_ratio')).status).toBe(403);
    const root = await rootApi(stack);
    expect((await root.post('/option/rest_model_ratio')).body.success).toBe(true);
    const reset = await eventually(pricing, (p) => p.data.find((m) => m.model_name === 'gpt-4o')?.model_ratio === 1.25);
    expect(reset.data.find((m) => m.model_name === 'claude-3-5-sonnet-20241022')?.model_ratio).toBe(1.5);
  });

  it('when an audio model is offered, then its audio input and output ratios are priced; an AudioRatio option adds one', async () => {
    const res = await admin.post('/channel/', {
      name: 'c',
      type: 1,
      key: 'k',
      models: 'gpt-4o-audio-preview',
      group: 'default',
    });
    expect(res.body.success).toBe(true);
    const p = await eventually(pricing, (r) => r.data.some((m) => m.model_name === 'gpt-4o-audio-preview'));
    const audio = p.data.find((m) => m.model_name === 'gpt-4o-audio-preview');
    expect(audio).toMatchObject({ quota_type: 0, audio_ratio: 16, audio_completion_ratio: 2 });
    expect(p.data.find((m) => m.model_name === 'gpt-4o')).toMatchObject({ audio_ratio: 0, audio_completion_ratio: 0 });
    expect(p.data.find((m) => m.model_name === 'dall-e-3')).toMatchObject({ audio_ratio: 0 });
    await setOptions(stack, { AudioRatio: '{"gpt-4o":7}' });
    const set = await eventually(pricing, (r) => r.data.find((m) => m.model_name === 'gpt-4o')?.audio_ratio === 7);
    expect(set.data.find((m) => m.model_name === 'gpt-4o')?.audio_completion_ratio).toBe(1);
  });

  it('when a model has cache ratios or long-context tiers, then the pricing rows carry them (new-api names)', async () => {
    const tiers = [{ above_prompt_tokens: 200000, model_ratio: 3, completion_ratio: 7.5 }];
    await setOptions(stack, {
      CacheRatio: '{"gpt-4o":0.5}',
      CreateCacheRatio: '{"gpt-4o":1.5}',
      ModelPriceTiers: JSON.stringify({ 'gpt-4o': tiers }),
    });
    const p = await eventually(pricing, (r) => {
      const row = r.data.find((m) => m.model_name === 'gpt-4o') as Record<string, unknown> | undefined;
      return row?.cache_ratio === 0.5 && row.create_cache_ratio === 1.5 && Array.isArray(row.price_tiers);
    });
    expect(p.data.find((m) => m.model_name === 'gpt-4o')).toMatchObject({ price_tiers: tiers });
    // Per-call models carry none.
    expect(p.data.find((m) => m.model_name === 'dall-e-3')).not.toHaveProperty('cache_ratio');
    expect(p.data.find((m) => m.model_name === 'dall-e-3')).not.toHaveProperty('price_tiers');
  });

  it('when a channel serves a model with neither a price nor a ratio, then GET /api/models/missing lists it for admins', async () => {
    const res = await admin.post('/channel/', {
      name: 'm',
      type: 1,
      key: 'k',
      models: 'mystery-model-q,gpt-4o-2024-08-06',
      group: 'default',
    });
    expect(res.body.success).toBe(true);
    // `unpriced` beside new-api's `data` (the served models without catalogue metadata).
    const missing = await eventually(
      () => admin.get<string[]>('/models/missing'),
      (r) => (r.body as { unpriced?: string[] }).unpriced?.includes('mystery-model-q') ?? false,
    );
    const unpriced = (missing.body as { unpriced?: string[] }).unpriced;
    // A dated name is priced by its undated entry, as the relay prices it.
    expect(unpriced).not.toContain('gpt-4o-2024-08-06');
    expect(unpriced).not.toContain('dall-e-3');
    const user = (await userApi(stack)).api;
    expect((await user.get('/models/missing')).status).toBe(403);
  });
});
