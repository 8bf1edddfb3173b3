import { describe, expect, it } from 'vitest';
import {
  audioCompletionRatioOf,
  audioRatioOf,
  cacheCreationRatioOf,
  cacheRatioOf,
  completionRatioOf,
  imageRatioOf,
} from './pricing-defaults.ts';

describe('token-kind ratio rules', () => {
  it('when a model has no explicit cache ratio, then its provider family’s cached-input price applies', () => {
    expect(cacheRatioOf('gpt-4o-mini', {})).toBe(0.5);
    expect(cacheRatioOf('o1', {})).toBe(0.5);
    expect(cacheRatioOf('o3-mini', {})).toBe(0.5);
    expect(cacheRatioOf('gpt-4.1-nano', {})).toBe(0.25);
    expect(cacheRatioOf('o4-mini', {})).toBe(0.25);
    expect(cacheRatioOf('claude-3-5-sonnet-20241022', {})).toBe(0.1);
    expect(cacheRatioOf('gemini-2.5-pro', {})).toBe(0.25);
    expect(cacheRatioOf('deepseek-chat', {})).toBe(0.1);
    expect(cacheRatioOf('qwen-max', {})).toBeUndefined();
  });

  it('when the option names a model, then its entry wins over the family rule (0 included)', () => {
    expect(cacheRatioOf('gpt-4o', { 'gpt-4o': 0.3 })).toBe(0.3);
    expect(cacheRatioOf('claude-3-haiku-20240307', { 'claude-3-haiku-20240307': 0 })).toBe(0);
    expect(cacheCreationRatioOf('claude-x', { 'claude-x': 2 })).toBe(2);
    expect(audioRatioOf('my-audio', { 'my-audio': 10 })).toBe(10);
    expect(audioCompletionRatioOf('my-audio', { 'my-audio': 3 })).toBe(3);
  });

  it('when a model writes to a cache or speaks audio, then the family ratios apply; others pay the text price', () => {
    expect(cacheCreationRatioOf('claude-3-7-sonnet-20250219', {})).toBe(1.25);
    expect(cacheCreationRatioOf('gpt-4o', {})).toBeUndefined();
    expect(audioRatioOf('gpt-4o-audio-preview', {})).toBe(16);
    expect(audioRatioOf('gpt-4o-mini-audio-preview', {})).toBe(66.67);
    expect(audioRatioOf('gpt-4o-realtime-preview', {})).toBe(8);
    expect(audioRatioOf('gpt-4o', {})).toBeUndefined();
    expect(audioCompletionRatioOf('gpt-4o-mini-realtime-preview', {})).toBe(2);
    expect(audioCompletionRatioOf('tts-1', {})).toBeUndefined();
    expect(imageRatioOf('gpt-image-1', {})).toBe(2);
    expect(imageRatioOf('dall-e-3', {})).toBeUndefined();
    expect(completionRatioOf('gpt-image-1', {})).toBe(8);
  });
});
