import { describe, expect, it } from 'vitest';
import { priceOf } from './index.tsx';

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
});
