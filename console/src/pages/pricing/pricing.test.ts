import { describe, expect, it } from 'vitest';
import { cacheRatioLines, priceOf } from './index.tsx';

describe('pricing display', () => {
  it('when a model is priced by ratio, then prices per 1M are 2 x ratio x group (x completion)', () => {
    const p = {
      model_name: 'gpt-4o',
      quota_type: 0,
      model_ratio: 1.25,
      model_price: 0,
      completion_ratio: 4,
      enable_groups: [],
    };
    expect(priceOf(p, 1)).toEqual({ prompt: '$2.5000', completion: '$10.0000' });
    expect(priceOf(p, 2).prompt).toBe('$5.0000');
  });

  it('when a model is priced per call, then it is the price x group ratio', () => {
    const p = {
      model_name: 'dall-e-3',
      quota_type: 1,
      model_ratio: 0,
      model_price: 0.04,
      completion_ratio: 0,
      enable_groups: [],
    };
    expect(priceOf(p, 1.5)).toEqual({ perCall: '$0.0600' });
  });

  it('when a model has audio ratios, then audio input and output prices follow the text input price', () => {
    const p = {
      model_name: 'gpt-4o-audio-preview',
      quota_type: 0,
      model_ratio: 1.25,
      model_price: 0,
      completion_ratio: 4,
      enable_groups: [],
      audio_ratio: 16,
      audio_completion_ratio: 2,
    };
    expect(priceOf(p, 1)).toEqual({
      prompt: '$2.5000',
      completion: '$10.0000',
      audioPrompt: '$40.0000',
      audioCompletion: '$80.0000',
    });
  });

  it('when a model has cache ratios and long-context tiers, then cache read, 5 min and 1 h write prices and each tier are shown', () => {
    const p = {
      model_name: 'claude-sonnet-4-5',
      quota_type: 0,
      model_ratio: 1.5,
      model_price: 0,
      completion_ratio: 5,
      enable_groups: [],
      cache_ratio: 0.1,
      create_cache_ratio: 1.25,
      price_tiers: [{ above_prompt_tokens: 200000, model_ratio: 3, completion_ratio: 5 }],
    };
    // $3 input: reads $0.30, 5-minute writes $3.75, one-hour writes $6; above 200k $6 / $30.
    expect(priceOf(p, 1)).toEqual({
      prompt: '$3.0000',
      completion: '$15.0000',
      cacheRead: '$0.3000',
      cacheWrite: '$3.7500',
      cacheWrite1h: '$6.0000',
      tiers: [{ above: 200000, prompt: '$6.0000', completion: '$30.0000' }],
    });
    expect(cacheRatioLines(p)).toEqual(['缓存读取：0.1', '缓存写入：1.25', '1 小时缓存写入：2']);
    // A tier without a completion ratio keeps the model's.
    expect(priceOf({ ...p, price_tiers: [{ above_prompt_tokens: 1000, model_ratio: 2 }] }, 1).tiers).toEqual([
      { above: 1000, prompt: '$4.0000', completion: '$20.0000' },
    ]);
    expect(cacheRatioLines({ ...p, cache_ratio: undefined, create_cache_ratio: undefined })).toEqual([]);
  });
});
