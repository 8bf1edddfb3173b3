import { describe, expect, it } from 'vitest';
import { lookupModel, unpricedModels } from './model-lookup.ts';

describe('model lookup', () => {
  it('when a model has no entry of its own, then a pattern, its undated name or the entry it extends answers', () => {
    const map = { 'gpt-4o': 1, 'gemini-2.5-flash-thinking-*': 2, 'claude-sonnet-4-5': 3 };
    expect(lookupModel(map, 'gpt-4o-2024-08-06')).toBe(1);
    expect(lookupModel(map, 'gemini-2.5-flash-thinking-8k')).toBe(2);
    expect(lookupModel(map, 'claude-sonnet-4-5-thinking')).toBe(3);
    expect(lookupModel(map, 'mystery')).toBeUndefined();
  });

  it('when models are checked for a price, then those with neither a price nor a ratio are listed once, sorted', () => {
    const models = ['zeta', 'gpt-4o-mini', 'dall-e-3', 'alpha', 'zeta', 'paid-free'];
    expect(unpricedModels(models, { 'dall-e-3': 0.04, 'paid-free': 0 }, { 'gpt-4o-mini': 0.075 })).toEqual([
      'alpha',
      'zeta',
    ]);
  });
});
