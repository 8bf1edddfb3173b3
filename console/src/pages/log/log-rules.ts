import { Tag } from '@arco-design/web-react';
import { createElement } from 'react';

/** Log types of spec 02 section 4 (0 only as a filter), plus error (5) and refund (6). */
export const LOG_TYPES = [
  { label: '全部', value: 0 },
  { label: '充值', value: 1 },
  { label: '消费', value: 2 },
  { label: '管理', value: 3 },
  { label: '系统', value: 4 },
  { label: '错误', value: 5 },
];

const TYPE_TAGS: Record<number, [string, string]> = {
  1: ['充值', 'cyan'],
  2: ['消费', 'green'],
  3: ['管理', 'orange'],
  4: ['系统', 'purple'],
  5: ['错误', 'red'],
  6: ['退款', 'lime'],
};

export function logTypeTag(type: number) {
  const [label, color] = TYPE_TAGS[type] ?? ['未知', 'gray'];
  return createElement(Tag, { color }, label);
}

/** Use time (seconds): under 101 green, under 300 orange, else red (spec 02 section 9). */
export function timeColor(seconds: number): 'green' | 'orange' | 'red' {
  if (seconds < 101) return 'green';
  if (seconds < 300) return 'orange';
  return 'red';
}

/** First-token time (seconds): under 3 green, under 10 orange, else red. */
export function frtColor(seconds: number): 'green' | 'orange' | 'red' {
  if (seconds < 3) return 'green';
  if (seconds < 10) return 'orange';
  return 'red';
}

/** Start of today, unix seconds (the log page's default window starts there). */
export function todayStart(now = new Date()): number {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  return Math.floor(d.getTime() / 1000);
}

const PAGE_SIZE_KEY = 'page-size';
export const DEFAULT_PAGE_SIZE = 10;

/** The log page size kept locally as page-size. */
export function pageSizeOf(): number {
  const n = Number(typeof localStorage === 'undefined' ? NaN : localStorage.getItem(PAGE_SIZE_KEY));
  return [10, 20, 50, 100].includes(n) ? n : DEFAULT_PAGE_SIZE;
}

export function savePageSize(n: number): void {
  localStorage.setItem(PAGE_SIZE_KEY, String(n));
}
