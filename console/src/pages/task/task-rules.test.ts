import { afterEach, describe, expect, it } from 'vitest';
import { LANG_KEY } from '../../locale/translate.ts';
import { defaultTaskRange, mediaOf, taskActionLabel, taskDuration, taskStatusLabel } from './task-rules.ts';

describe('async task page rules', () => {
  afterEach(() => localStorage.removeItem(LANG_KEY));

  it("when the page opens, then its window runs from today's local start to one hour ahead, in seconds", () => {
    const now = new Date(2026, 10, 27, 15, 30, 12).getTime();
    expect(defaultTaskRange(now)).toEqual([new Date(2026, 10, 27).getTime() / 1000, Math.floor(now / 1000) + 3600]);
  });

  it('when a status is empty, then it reads as submitting', () => {
    expect(taskStatusLabel('')).toBe('正在提交');
    expect(taskStatusLabel('QUEUED')).toBe('排队中');
    expect(taskStatusLabel('X')).toBe('未知');
    expect(taskActionLabel('MUSIC')).toBe('生成音乐');
    expect(taskActionLabel('X')).toBe('未知');
  });

  it('when English is chosen, then statuses and actions read English', () => {
    localStorage.setItem(LANG_KEY, 'en-US');
    expect(taskStatusLabel('')).toBe('Submitting');
    expect(taskStatusLabel('SUBMITTED')).toBe('In queue');
    expect(taskStatusLabel('QUEUED')).toBe('Queued');
    expect(taskActionLabel('LYRICS')).toBe('Generate lyrics');
    expect(taskActionLabel('X')).toBe('Unknown');
  });

  it('when a task has clips or lyrics, then their media are found', () => {
    const clips = JSON.stringify([{ audio_url: 'a.mp3', video_url: 'v.mp4' }, { audio_url: 'b.mp3' }]);
    expect(mediaOf(clips)).toEqual({ audio: ['a.mp3', 'b.mp3'], video: ['v.mp4'], text: '' });
    expect(mediaOf(JSON.stringify({ text: 'la la' })).text).toBe('la la');
    expect(mediaOf('oops')).toEqual({ audio: [], video: [], text: '' });
  });

  it('when a task is unfinished, then its duration runs to now', () => {
    expect(taskDuration(100, 130)).toBe('30');
    expect(taskDuration(100, 0, 160_000)).toBe('60');
    expect(taskDuration(0, 5)).toBeUndefined();
  });
});
