import { Tag } from '@arco-design/web-react';
import { createElement } from 'react';

/** Async task statuses of spec 02 section 4; empty means "submitting". */
const STATUSES: Record<string, [string, string]> = {
  SUCCESS: ['成功', 'green'],
  NOT_START: ['未启动', 'gray'],
  SUBMITTED: ['队列中', 'gold'],
  IN_PROGRESS: ['执行中', 'blue'],
  FAILURE: ['失败', 'red'],
  QUEUED: ['排队中', 'orange'],
  UNKNOWN: ['未知', 'gray'],
  '': ['正在提交', 'gray'],
};

const ACTIONS: Record<string, [string, string]> = {
  MUSIC: ['生成音乐', 'blue'],
  LYRICS: ['生成歌词', 'pink'],
  VIDEO: ['生成视频', 'purple'],
};

const tag = (pair: [string, string] | undefined) => {
  const [label, color] = pair ?? ['未知', 'gray'];
  return createElement(Tag, { color }, label);
};

export const taskStatusTag = (s: string) => tag(STATUSES[s]);
export const taskActionTag = (a: string) => tag(ACTIONS[a]);
export const platformTag = (p: string) =>
  createElement(Tag, { color: 'arcoblue' }, p === 'suno' ? 'Suno' : p || '未知');
export const taskStatusLabel = (s: string) => STATUSES[s]?.[0] ?? '未知';

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
