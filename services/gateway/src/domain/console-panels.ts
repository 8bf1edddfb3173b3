/**
 * The dashboard's panels (new-api's console settings): announcements, API addresses, FAQ and
 * Uptime Kuma status pages. Each list is a JSON array option (`console_setting.announcements`,
 * `.api_info`, `.faq`, `.uptime_kuma_groups`) with an on/off switch (`*_enabled`); checked on save
 * (checkConsoleSetting) and read by every logged-in user (panelsOf). The status pages are fetched
 * by the gateway (fetchUptime): only public addresses unless allowed, with a timeout.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isPublicAddress, publicOnlyLookup } from '@aigw/common';

export const PANEL_LIST_KEYS = {
  'console_setting.announcements': { what: '公告', max: 100 },
  'console_setting.api_info': { what: 'API 信息', max: 50 },
  'console_setting.faq': { what: '常见问答', max: 100 },
  'console_setting.uptime_kuma_groups': { what: 'Uptime Kuma 分组', max: 20 },
} as const;

export type PanelListKey = keyof typeof PANEL_LIST_KEYS;

const COLORS = new Set([
  'blue',
  'green',
  'cyan',
  'purple',
  'pink',
  'red',
  'orange',
  'amber',
  'yellow',
  'lime',
  'light-green',
  'teal',
  'light-blue',
  'indigo',
  'violet',
  'grey',
  'slate',
]);
const ANNOUNCEMENT_TYPES = new Set(['default', 'ongoing', 'success', 'warning', 'error']);
const SLUG = /^[A-Za-z0-9_-]+$/;
const UNSAFE = /<script|<iframe|javascript:|on(load|error|click)\s*=/i;

type Item = Record<string, unknown>;

/** A required text field of entry `n` (1-based), at most `max` characters. */
function textOf(item: Item, field: string, label: string, n: number, what: string, max: number, required = true) {
  const v = item[field];
  if (v === undefined || v === null || v === '') {
    if (required) throw new Error(`第 ${n} 条${what}缺少${label}（${field}）`);
    return '';
  }
  if (typeof v !== 'string') throw new Error(`第 ${n} 条${what}的${label}（${field}）必须是文本`);
  if ([...v].length > max) throw new Error(`第 ${n} 条${what}的${label}不能超过 ${max} 个字符`);
  if (UNSAFE.test(v)) throw new Error(`第 ${n} 条${what}的${label}含有不允许的内容（脚本或事件属性）`);
  return v;
}

function httpUrl(v: string, n: number, what: string): void {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new Error(`第 ${n} 条${what}的 URL 格式不正确`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`第 ${n} 条${what}的 URL 必须以 http:// 或 https:// 开头`);
}

/**
 * Checks a panel list option before it is saved; throws an Error whose message says what is wrong
 * (bad JSON, too many entries, a missing or invalid field). An empty value clears the list.
 */
export function checkConsoleSetting(key: PanelListKey, value: string): void {
  if (value.trim() === '') return;
  const { what, max } = PANEL_LIST_KEYS[key];
  let list: unknown;
  try {
    list = JSON.parse(value);
  } catch {
    throw new Error(`${what}不是合法的 JSON`);
  }
  if (!Array.isArray(list)) throw new Error(`${what}必须是 JSON 数组`);
  if (list.length > max) throw new Error(`${what}最多 ${max} 条，当前 ${list.length} 条`);
  const names = new Set<string>();
  list.forEach((raw, i) => {
    const n = i + 1;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new Error(`第 ${n} 条${what}必须是 JSON 对象`);
    const item = raw as Item;
    if (key === 'console_setting.announcements') {
      textOf(item, 'content', '内容', n, what, 500);
      const date = textOf(item, 'publishDate', '发布日期', n, what, 64);
      if (Number.isNaN(Date.parse(date)) || !/^\d{4}-\d{2}-\d{2}T/.test(date))
        throw new Error(`第 ${n} 条${what}的发布日期必须是 RFC 3339 时间，例如 2025-01-01T08:00:00Z`);
      const type = textOf(item, 'type', '类型', n, what, 16, false);
      if (type && !ANNOUNCEMENT_TYPES.has(type))
        throw new Error(`第 ${n} 条${what}的类型只能是 ${[...ANNOUNCEMENT_TYPES].join('、')}`);
      textOf(item, 'extra', '说明', n, what, 100, false);
    } else if (key === 'console_setting.api_info') {
      httpUrl(textOf(item, 'url', 'URL', n, what, 500), n, what);
      textOf(item, 'route', '线路描述', n, what, 100);
      textOf(item, 'description', '说明', n, what, 200);
      const color = textOf(item, 'color', '颜色', n, what, 20);
      if (!COLORS.has(color)) throw new Error(`第 ${n} 条${what}的颜色不在可选范围内：${[...COLORS].join(', ')}`);
    } else if (key === 'console_setting.faq') {
      textOf(item, 'question', '问题', n, what, 200);
      textOf(item, 'answer', '答案', n, what, 1000);
    } else {
      const name = textOf(item, 'categoryName', '分类名称', n, what, 50);
      if (names.has(name)) throw new Error(`第 ${n} 条${what}的分类名称与前面的重复`);
      names.add(name);
      httpUrl(textOf(item, 'url', 'URL', n, what, 500), n, what);
      const slug = textOf(item, 'slug', 'Slug', n, what, 100);
      if (!SLUG.test(slug)) throw new Error(`第 ${n} 条${what}的 Slug 只能含字母、数字、下划线和连字符`);
      textOf(item, 'description', '描述', n, what, 200, false);
    }
  });
}

/** A list option as stored (invalid or empty: none). */
export function listOf(value: string): Item[] {
  if (!value) return [];
  try {
    const v: unknown = JSON.parse(value);
    return Array.isArray(v) ? v.filter((x): x is Item => typeof x === 'object' && x !== null && !Array.isArray(x)) : [];
  } catch {
    return [];
  }
}

/** What the dashboard shows (new-api's /api/status field names): a disabled panel has no list. */
export function panelsOf(read: { text(key: string): string; bool(key: string): boolean }) {
  const on = (k: string) => read.bool(`console_setting.${k}_enabled`);
  const announcements = listOf(read.text('console_setting.announcements'));
  // Newest first, as published.
  announcements.sort((a, b) => (Date.parse(String(b.publishDate)) || 0) - (Date.parse(String(a.publishDate)) || 0));
  return {
    announcements_enabled: on('announcements'),
    announcements: on('announcements') ? announcements : [],
    api_info_enabled: on('api_info'),
    api_info: on('api_info') ? listOf(read.text('console_setting.api_info')) : [],
    faq_enabled: on('faq'),
    faq: on('faq') ? listOf(read.text('console_setting.faq')) : [],
    uptime_kuma_enabled: on('uptime_kuma'),
  };
}

export interface UptimeMonitor {
  name: string;
  /** 24-hour uptime, 0..1. */
  uptime: number;
  /** Uptime Kuma's status of the latest heartbeat: 0 down, 1 up, 2 pending, 3 maintenance. */
  status: number;
  group: string;
}

export interface UptimeGroup {
  categoryName: string;
  monitors: UptimeMonitor[];
}

/**
 * The monitors of a status page from Uptime Kuma's two public answers: the page
 * (`/api/status-page/<slug>`: publicGroupList[].monitorList[]) and its heartbeats
 * (`/api/status-page/heartbeat/<slug>`: heartbeatList by monitor id, oldest first, and
 * uptimeList by "<id>_24").
 */
export function monitorsOf(page: unknown, beats: unknown): UptimeMonitor[] {
  const groups = (page as { publicGroupList?: unknown })?.publicGroupList;
  const hb = (beats as { heartbeatList?: Record<string, { status?: number }[]> })?.heartbeatList ?? {};
  const up = (beats as { uptimeList?: Record<string, number> })?.uptimeList ?? {};
  const out: UptimeMonitor[] = [];
  if (!Array.isArray(groups)) return out;
  for (const g of groups as { name?: string; monitorList?: { id?: number; name?: string }[] }[]) {
    for (const m of g.monitorList ?? []) {
      const list = hb[String(m.id)];
      const last = Array.isArray(list) && list.length > 0 ? list[list.length - 1] : undefined;
      out.push({
        name: String(m.name ?? ''),
        uptime: Number(up[`${m.id}_24`] ?? 0),
        status: Number(last?.status ?? 0),
        group: String(g.name ?? ''),
      });
    }
  }
  return out;
}

/** GET a JSON document (at most 1 MiB) within `timeoutMs`. */
function getJson(url: URL, timeoutMs: number, allowPrivate: boolean): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!allowPrivate && isIP(host) && !isPublicAddress(host))
      return reject(new Error(`${host} is not a public address`));
    const options: RequestOptions = {
      method: 'GET',
      headers: { accept: 'application/json' },
      timeout: timeoutMs,
      ...(allowPrivate ? {} : { lookup: publicOnlyLookup as RequestOptions['lookup'] }),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`status ${res.statusCode}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 1 << 20) req.destroy(new Error('answer too large'));
        else chunks.push(c);
      });
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (e) {
          reject(e);
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Every configured status page, fetched at once; a page that fails (refused address, timeout,
 * bad answer) shows its category with no monitors.
 */
export async function fetchUptime(
  groups: Item[],
  opts: { timeoutMs: number; allowPrivate: boolean; onError?(url: string, err: unknown): void },
): Promise<UptimeGroup[]> {
  return Promise.all(
    groups.map(async (g) => {
      const categoryName = String(g.categoryName ?? '');
      const base = String(g.url ?? '').replace(/\/+$/, '');
      const slug = String(g.slug ?? '');
      if (!base || !SLUG.test(slug)) return { categoryName, monitors: [] };
      try {
        const [page, beats] = await Promise.all([
          getJson(new URL(`${base}/api/status-page/${slug}`), opts.timeoutMs, opts.allowPrivate),
          getJson(new URL(`${base}/api/status-page/heartbeat/${slug}`), opts.timeoutMs, opts.allowPrivate),
        ]);
        return { categoryName, monitors: monitorsOf(page, beats) };
      } catch (err) {
        opts.onError?.(base, err);
        return { categoryName, monitors: [] };
      }
    }),
  );
}
