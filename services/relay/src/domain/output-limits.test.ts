import { describe, expect, it } from 'vitest';
import { outputLimits } from './output-limits.ts';
import { preConsumeAmount, priceOf, type Ratios } from './pricing.ts';

describe('what a request reserves', () => {
  const limit = outputLimits({ 'my-model': 1_000 }, 32_768);

  it('when a model name extends a known prefix, then the longest prefix gives its output limit', () => {
    expect(limit('gpt-4o-2024-08-06')).toBe(16_384);
    expect(limit('gpt-4.1-mini')).toBe(32_768);
    expect(limit('claude-3-5-sonnet-20241022')).toBe(8_192);
    expect(limit('gemini-2.5-pro')).toBe(65_536);
    expect(limit('my-model-x')).toBe(1_000);
    expect(limit('unheard-of')).toBe(32_768);
  });

  it('when a request has no max_tokens, then the reservation covers an answer as long as the model allows, at the completion price', () => {
    const r: Ratios = {
      modelRatio: { 'gpt-4o': 1.25 },
      completionRatio: { 'gpt-4o': 4 },
      modelPrice: {},
      groupRatio: {},
    };
    const p = priceOf(r, 'gpt-4o');
    expect(preConsumeAmount(p, 1, 500_000, 20, 500, limit('gpt-4o'))).toBe(Math.ceil((500 + 16_384 * 4) * 1.25));
    // Any answer the upstream can give costs no more than that.
    const worst = (20 + 16_384 * 4) * 1.25;
    expect(preConsumeAmount(p, 1, 500_000, 20, 500, limit('gpt-4o'))).toBeGreaterThanOrEqual(worst);
  });

  it('when prompt tokens may be counted at a dearer kind (cache writes), then the prompt is reserved at that price', () => {
    const r: Ratios = {
      modelRatio: { c: 1 },
      completionRatio: { c: 5 },
      modelPrice: {},
      groupRatio: {},
      cacheCreationRatio: { c: 1.25 },
    };
    expect(preConsumeAmount(priceOf(r, 'c'), 2, 500_000, 1_000, 500, 10)).toBe(Math.ceil((1_000 * 1.25 + 50) * 2));
  });
});
