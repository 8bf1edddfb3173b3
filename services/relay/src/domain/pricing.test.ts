import { describe, expect, it } from 'vitest';
import {
  type Price,
  preConsumeAmount,
  priceAt,
  priceOf,
  priceTiers,
  type Ratios,
  settleQuota,
  tierDetails,
  tierFor,
} from './pricing.ts';

// Long-context tiers (option ModelPriceTiers): a Claude-like model at $3/$15 per M tokens (ratio
// 1.5, completion 5) that costs $6/$22.5 above 200k prompt tokens (ratio 3, completion 7.5).
const r: Ratios = {
  modelRatio: { 'long-model': 1.5, plain: 1 },
  completionRatio: { 'long-model': 5 },
  modelPrice: { 'per-call': 0.1 },
  groupRatio: { default: 1 },
  cacheRatio: { 'long-model': 0.1 },
  cacheCreationRatio: { 'long-model': 1.25 },
  priceTiers: {
    'long-model': [
      { above_prompt_tokens: 500_000, model_ratio: 4 },
      { above_prompt_tokens: 200_000, model_ratio: 3, completion_ratio: 7.5 },
    ],
    'per-call': [{ above_prompt_tokens: 10, model_ratio: 9 }],
  },
};

describe('long-context price tiers', () => {
  const p = priceOf(r, 'long-model-20260101');

  it('when the prompt exceeds a threshold, then the highest tier it exceeds applies; at the threshold the base price', () => {
    const tiers = priceTiers(r.priceTiers?.['long-model']);
    expect(tiers?.map((t) => t.above_prompt_tokens)).toEqual([200_000, 500_000]);
    expect(tierFor(tiers, 200_000)).toBeUndefined();
    expect(tierFor(tiers, 200_001)?.model_ratio).toBe(3);
    expect(tierFor(tiers, 500_001)?.model_ratio).toBe(4);
    // A ratio the tier leaves out stays the model's own; writes for an hour follow the tier's.
    expect(priceAt(p, 200_001)).toMatchObject({
      modelRatio: 3,
      completionRatio: 7.5,
      cacheRatio: 0.1,
      cacheCreationRatio: 1.25,
      cacheCreation1hRatio: 2,
    });
    expect(priceAt(p, 500_001)).toMatchObject({ modelRatio: 4, completionRatio: 5 });
    expect(priceAt(p, 1000)).toBe(p);
    // Per-call prices and models without tiers are not tiered; malformed tiers are left out.
    expect(priceOf(r, 'per-call')).toEqual({ kind: 'call', price: 0.1 });
    expect(priceOf(r, 'plain')).not.toHaveProperty('tiers');
    expect(priceTiers([{ above_prompt_tokens: 'x', model_ratio: 2 }, { model_ratio: 1 }])).toBeUndefined();
  });

  it('when settled, then the tier of the upstream-reported prompt prices every token of the request', () => {
    // 250,000 prompt tokens (10,000 of them cache reads) and 1,000 completion tokens, group 1:
    // (240,000 + 10,000 x 0.1 + 1,000 x 7.5) x 3 = 745,500.
    const usage = { promptTokens: 250_000, completionTokens: 1000, cachedTokens: 10_000 };
    expect(settleQuota(p, 1, 500_000, usage)).toBe(745_500);
    // Below the threshold: (199,000 + 1,000 x 5) x 1.5 = 306,000.
    expect(settleQuota(p, 1, 500_000, { promptTokens: 199_000, completionTokens: 1000 })).toBe(306_000);
  });

  it('when a reservation is made, then it uses the tier of the estimate, or the dearest one its margin reaches', () => {
    // Estimate 150,000, 100 output tokens: base (150,000 + 100 x 5) x 1.5 = 225,750 (cache
    // writes are the dearest prompt kind: x 1.25 -> (187,500 + 500) x 1.5 = 282,000).
    expect(preConsumeAmount(p, 1, 500_000, 150_000, 0, 100)).toBe(282_000);
    // Estimate 190,000 with the margin to 237,500: the 200k tier, (237,500 + 750) x 3.
    expect(preConsumeAmount(p, 1, 500_000, 190_000, 0, 100, 1, [190_000, 237_500])).toBe(
      Math.ceil((190_000 * 1.25 + 100 * 7.5) * 3),
    );
    // A bound over every prompt up to 600,000 tokens takes the dearest tier (ratio 4 x 1.25 x 600,000
    // against 3 x (1.25 x 600,000 + 750)).
    expect(preConsumeAmount(p, 1, 500_000, 600_000, 0, 100, 1, [0, 600_000])).toBe(
      Math.max(Math.ceil((750_000 + 500) * 4), Math.ceil((750_000 + 750) * 3)),
    );
  });

  it('when a tier applied, then the log row names it and its ratios; the base price writes nothing', () => {
    const other: Record<string, unknown> = {};
    tierDetails(other, priceAt(p, 250_000) as Price);
    expect(other).toEqual({
      matched_tier: '>200000',
      tier_above_prompt_tokens: 200_000,
      tier_model_ratio: 3,
      tier_completion_ratio: 7.5,
      tier_cache_ratio: 0.1,
      tier_create_cache_ratio: 1.25,
    });
    const none: Record<string, unknown> = {};
    tierDetails(none, priceAt(p, 1000));
    expect(none).toEqual({});
  });
});
