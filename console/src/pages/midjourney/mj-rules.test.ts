import { describe, expect, it } from 'vitest';
import { actionLabel, defaultDrawRange, duration, progressPercent, statusLabel } from './mj-rules.ts';

describe('drawing page rules', () => {
  it('when the page opens, then its window is the last 30 days to one hour ahead, in milliseconds', () => {
    const now = Date.UTC(2026, 10, 27, 8, 0, 0);
    expect(defaultDrawRange(now)).toEqual([Date.UTC(2026, 9, 28, 8, 0, 0), Date.UTC(2026, 10, 27, 9, 0, 0)]);
  });

  it('when a task took over 60 s, then its duration is red', () => {
    expect(duration(1_000, 62_000)).toEqual({ seconds: '61.0', red: true });
    expect(duration(1_000, 61_000)).toEqual({ seconds: '60.0', red: false });
    expect(duration(1_000, 0, 31_000)).toEqual({ seconds: '30.0', red: false });
    expect(duration(0, 5)).toBeUndefined();
  });

  it('when labels are asked for, then actions and statuses read in Chinese and unknown ones as 未知', () => {
    expect(actionLabel('IMAGINE')).toBe('绘图');
    expect(actionLabel('SWAP_FACE')).toBe('换脸');
    expect(actionLabel('X')).toBe('未知');
    expect(statusLabel('SUBMITTED')).toBe('队列中');
    expect(statusLabel('MODAL')).toBe('窗口等待');
  });

  it('when progress text is parsed, then it is a clamped percentage', () => {
    expect(progressPercent('45%')).toBe(45);
    expect(progressPercent('')).toBe(0);
    expect(progressPercent('120%')).toBe(100);
  });
});
