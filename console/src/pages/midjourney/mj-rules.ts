import { Tag } from '@arco-design/web-react';
import { createElement } from 'react';

/** Drawing action types of spec 02 section 4. */
const ACTIONS: Record<string, [string, string]> = {
  IMAGINE: ['绘图', 'blue'],
  UPSCALE: ['放大', 'orange'],
  VARIATION: ['变换', 'purple'],
  HIGH_VARIATION: ['强变换', 'purple'],
  LOW_VARIATION: ['弱变换', 'purple'],
  PAN: ['平移', 'cyan'],
  DESCRIBE: ['图生文', 'gold'],
  BLEND: ['图混合', 'lime'],
  UPLOAD: ['上传文件', 'gray'],
  SHORTEN: ['缩词', 'pinkpurple'],
  REROLL: ['重绘', 'magenta'],
  INPAINT: ['局部重绘', 'red'],
  ZOOM: ['变焦', 'arcoblue'],
  CUSTOM_ZOOM: ['自定义变焦', 'arcoblue'],
  MODAL: ['窗口处理', 'green'],
  SWAP_FACE: ['换脸', 'lime'],
};

const CODES: Record<number, [string, string]> = {
  1: ['已提交', 'green'],
  21: ['等待中', 'lime'],
  22: ['重复提交', 'orange'],
  0: ['未提交', 'gray'],
};

const STATUSES: Record<string, [string, string]> = {
  SUCCESS: ['成功', 'green'],
  NOT_START: ['未启动', 'gray'],
  SUBMITTED: ['队列中', 'gold'],
  IN_PROGRESS: ['执行中', 'blue'],
  FAILURE: ['失败', 'red'],
  MODAL: ['窗口等待', 'orange'],
};

const tag = (pair: [string, string] | undefined) => {
  const [label, color] = pair ?? ['未知', 'gray'];
  return createElement(Tag, { color }, label);
};

export const actionTag = (action: string) => tag(ACTIONS[action]);
export const codeTag = (code: number) => tag(CODES[code]);
export const statusTag = (status: string) => tag(STATUSES[status]);
export const actionLabel = (action: string) => ACTIONS[action]?.[0] ?? '未知';
export const statusLabel = (status: string) => STATUSES[status]?.[0] ?? '未知';

/**
 * Seconds from submit to finish (or to now while unfinished), one decimal; red over 60 s
 * (spec 02 section 9). Undefined when the task has no submit time.
 */
export function duration(
  submitMs: number,
  finishMs: number,
  nowMs = Date.now(),
): { seconds: string; red: boolean } | undefined {
  if (!submitMs) return undefined;
  const end = finishMs > 0 ? finishMs : nowMs;
  const s = Math.max(0, (end - submitMs) / 1000);
  return { seconds: s.toFixed(1), red: s > 60 };
}

/** "45%" -> 45 (0 for anything else). */
export function progressPercent(p: string): number {
  const n = Number.parseFloat(String(p).replace('%', ''));
  return Number.isFinite(n) ? Math.max(0, Math.min(100, n)) : 0;
}
