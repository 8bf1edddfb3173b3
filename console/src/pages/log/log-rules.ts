import { Tag } from '@arco-design/web-react';
import { createElement } from 'react';
import type { LogOther } from '../../api/log.ts';
import { tr } from '../../locale/translate.ts';
import type { LocaleKey } from '../../locale/zh-CN.ts';

const TYPE_TAGS: Record<number, [LocaleKey, string]> = {
  1: ['log.topUp', 'cyan'],
  2: ['log.consumption', 'green'],
  3: ['log.management', 'orange'],
  4: ['log.system', 'purple'],
  5: ['log.error', 'red'],
  6: ['log.refund', 'lime'],
};

/**
 * The type filter: all (0, only as a filter), then every type that is logged, from spec 02
 * section 4 plus error (5) and refund (6). Labels read at call time, in the chosen language.
 */
export function logTypeOptions(): { label: string; value: number }[] {
  return [
    { label: tr('log.all'), value: 0 },
    ...Object.entries(TYPE_TAGS).map(([value, [key]]) => ({ label: tr(key), value: Number(value) })),
  ];
}

export function logTypeTag(type: number) {
  const [label, color] = TYPE_TAGS[type] ?? ['common.unknown', 'gray'];
  return createElement(Tag, { color }, tr(label));
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

/** One line of a log's details. */
export interface DetailLine {
  label: string;
  value: string;
}

/**
 * The detail lines of a log's prompt cache and long-context tier: cache reads and their ratio;
 * cache writes split into 5 minutes and 1 hour with each ratio where the row has them (else the
 * total and its ratio); the tier that priced the request with its ratios.
 */
export function cacheAndTierLines(other: LogOther): DetailLine[] {
  const lines: DetailLine[] = [];
  const push = (label: Parameters<typeof tr>[0], value: unknown) => {
    if (value !== undefined && value !== null) lines.push({ label: tr(label), value: String(value) });
  };
  if (other.cache_tokens) push('log.cachedTokens', other.cache_tokens);
  if (other.cache_ratio) push('log.cacheRatio', other.cache_ratio);
  if (other.cache_creation_tokens_1h !== undefined || other.cache_creation_tokens_5m !== undefined) {
    push('log.cacheWriteTokens5m', other.cache_creation_tokens_5m ?? 0);
    push('log.cacheWriteRatio5m', other.cache_creation_ratio_5m ?? other.cache_creation_ratio);
    push('log.cacheWriteTokens1h', other.cache_creation_tokens_1h ?? 0);
    push('log.cacheWriteRatio1h', other.cache_creation_ratio_1h);
  } else {
    if (other.cache_creation_tokens) push('log.cacheWriteTokens', other.cache_creation_tokens);
    if (other.cache_creation_ratio) push('log.cacheWriteRatio', other.cache_creation_ratio);
  }
  if (other.tier_above_prompt_tokens !== undefined) {
    push(
      'log.priceTier',
      tr('log.priceTierValue', {
        above: other.tier_above_prompt_tokens,
        model: other.tier_model_ratio ?? '-',
        completion: other.tier_completion_ratio ?? '-',
        cache: other.tier_cache_ratio ?? '-',
        write: other.tier_create_cache_ratio ?? '-',
      }),
    );
  }
  return lines;
}
