import { Tag } from '@arco-design/web-react';
import { createElement } from 'react';
import { tr } from '../../locale/translate.ts';
import type { LocaleKey } from '../../locale/zh-CN.ts';

/** Async task statuses of spec 02 section 4; empty means "submitting". */
const STATUSES: Record<string, [LocaleKey, string]> = {
  SUCCESS: ['task.success', 'green'],
  NOT_START: ['task.notStarted', 'gray'],
  SUBMITTED: ['task.inQueue', 'gold'],
  IN_PROGRESS: ['task.running', 'blue'],
  FAILURE: ['task.failed', 'red'],
  QUEUED: ['task.queued', 'orange'],
  UNKNOWN: ['common.unknown', 'gray'],
  '': ['task.submitting', 'gray'],
};

const ACTIONS: Record<string, [LocaleKey, string]> = {
  MUSIC: ['task.music', 'blue'],
  LYRICS: ['task.lyrics', 'pink'],
  VIDEO: ['task.video', 'purple'],
};

const tag = (pair: [LocaleKey, string] | undefined) => {
  const [label, color] = pair ?? ['common.unknown', 'gray'];
  return createElement(Tag, { color }, tr(label));
};

export const taskStatusTag = (s: string) => tag(STATUSES[s]);
export const taskActionTag = (a: string) => tag(ACTIONS[a]);
/** The platform's name as written (a brand, the same in every language). */
export const platformTag = (p: string) =>
  createElement(Tag, { color: 'arcoblue' }, p === 'suno' ? 'Suno' : p || tr('common.unknown'));
export const taskStatusLabel = (s: string) => tr(STATUSES[s]?.[0] ?? 'common.unknown');
export const taskActionLabel = (a: string) => tr(ACTIONS[a]?.[0] ?? 'common.unknown');

/** Seconds from submit to finish (or to now), as the spec's times are seconds here. */
export function taskDuration(submitSec: number, finishSec: number, nowMs = Date.now()): string | undefined {
  if (!submitSec) return undefined;
  const end = finishSec > 0 ? finishSec : Math.floor(nowMs / 1000);
  return `${Math.max(0, end - submitSec)}`;
}

/** The media URLs of a task result (Suno clips: audio_url, video_url, image_url). */
export function mediaOf(data: string | undefined): { audio: string[]; video: string[]; text: string } {
  const out = { audio: [] as string[], video: [] as string[], text: '' };
  if (!data) return out;
  try {
    const v = JSON.parse(data) as unknown;
    const items = Array.isArray(v) ? v : [v];
    for (const it of items) {
      if (!it || typeof it !== 'object') continue;
      const o = it as Record<string, unknown>;
      if (typeof o.audio_url === 'string' && o.audio_url) out.audio.push(o.audio_url);
      if (typeof o.video_url === 'string' && o.video_url) out.video.push(o.video_url);
      if (typeof o.text === 'string') out.text = o.text;
    }
  } catch {
    // not JSON: nothing to play
  }
  return out;
}

/** The task page's default window (spec 02 section 9): from today's start (local) to one hour ahead, in s. */
export function defaultTaskRange(nowMs = Date.now()): [number, number] {
  const start = new Date(nowMs);
  start.setHours(0, 0, 0, 0);
  return [Math.floor(start.getTime() / 1000), Math.floor(nowMs / 1000) + 3600];
}
