import { Tag } from '@arco-design/web-react';
import { createElement } from 'react';
import { tr } from '../../locale/translate.ts';
import type { LocaleKey } from '../../locale/zh-CN.ts';

/** Drawing action types of spec 02 section 4. */
const ACTIONS: Record<string, [LocaleKey, string]> = {
  IMAGINE: ['mj.imagine', 'blue'],
  UPSCALE: ['mj.upscale', 'orange'],
  VARIATION: ['mj.variation', 'purple'],
  HIGH_VARIATION: ['mj.strongVariation', 'purple'],
  LOW_VARIATION: ['mj.subtleVariation', 'purple'],
  PAN: ['mj.pan', 'cyan'],
  DESCRIBE: ['mj.describe', 'gold'],
  BLEND: ['mj.blend', 'lime'],
  UPLOAD: ['mj.upload', 'gray'],
  SHORTEN: ['mj.shorten', 'pinkpurple'],
  REROLL: ['mj.reroll', 'magenta'],
  INPAINT: ['mj.inpaint', 'red'],
  ZOOM: ['mj.zoom', 'arcoblue'],
  CUSTOM_ZOOM: ['mj.customZoom', 'arcoblue'],
  MODAL: ['mj.modal', 'green'],
  SWAP_FACE: ['mj.faceSwap', 'lime'],
};

const CODES: Record<number, [LocaleKey, string]> = {
  1: ['mj.submitted', 'green'],
  21: ['mj.waiting', 'lime'],
  22: ['mj.duplicate', 'orange'],
  0: ['mj.notSubmitted', 'gray'],
};

const STATUSES: Record<string, [LocaleKey, string]> = {
  SUCCESS: ['mj.success', 'green'],
  NOT_START: ['mj.notStarted', 'gray'],
  SUBMITTED: ['mj.queued', 'gold'],
  IN_PROGRESS: ['mj.running', 'blue'],
  FAILURE: ['mj.failed', 'red'],
  MODAL: ['mj.awaitingModal', 'orange'],
};

const tag = (pair: [LocaleKey, string] | undefined) => {
  const [label, color] = pair ?? ['common.unknown', 'gray'];
  return createElement(Tag, { color }, tr(label));
};

export const actionTag = (action: string) => tag(ACTIONS[action]);
export const codeTag = (code: number) => tag(CODES[code]);
export const statusTag = (status: string) => tag(STATUSES[status]);
export const actionLabel = (action: string) => tr(ACTIONS[action]?.[0] ?? 'common.unknown');
export const statusLabel = (status: string) => tr(STATUSES[status]?.[0] ?? 'common.unknown');

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

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** The drawing page's default window (spec 02 section 9): the last 30 days to one hour ahead, in ms. */
export function defaultDrawRange(nowMs = Date.now()): [number, number] {
  return [nowMs - 30 * DAY_MS, nowMs + HOUR_MS];
}
