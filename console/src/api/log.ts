import type { Page } from './admin-user.ts';
import { download, request } from './request.ts';
import type { User } from './types.ts';

/** A log entry (spec 02 section 3). `channel` is only in admin answers. */
export interface LogEntry {
  id: number;
  created_at: number;
  type: number;
  channel?: number;
  user_id: number;
  username: string;
  token_name: string;
  model_name: string;
  use_time: number;
  is_stream: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  quota: number;
  content: string;
  other: string;
  group?: string;
}

/** The parsed `other` JSON of a log. */
export interface LogOther {
  frt?: number;
  model_ratio?: number;
  completion_ratio?: number;
  group_ratio?: number;
  model_price?: number;
  admin_info?: { use_channel?: number[] };
  upstream_model_name?: string;
  cache_tokens?: number;
  cache_ratio?: number;
  cache_creation_tokens?: number;
  cache_creation_ratio?: number;
  /** Cache writes by lifetime (new-api's names), written when some were for an hour. */
  cache_creation_tokens_5m?: number;
  cache_creation_ratio_5m?: number;
  cache_creation_tokens_1h?: number;
  cache_creation_ratio_1h?: number;
  /** The long-context tier that priced the request (option ModelPriceTiers) and its ratios. */
  matched_tier?: string;
  tier_above_prompt_tokens?: number;
  tier_model_ratio?: number;
  tier_completion_ratio?: number;
  tier_cache_ratio?: number;
  tier_create_cache_ratio?: number;
  image_tokens?: number;
  image_ratio?: number;
  audio?: boolean;
  audio_ratio?: number;
  audio_completion_ratio?: number;
  text_input?: number;
  text_output?: number;
  audio_input?: number;
  audio_output?: number;
  ws?: boolean;
  error?: string;
  status_code?: number;
  [key: string]: unknown;
}

export interface LogFilters {
  type?: number;
  username?: string;
  token_name?: string;
  model_name?: string;
  start_timestamp?: number;
  end_timestamp?: number;
  channel?: number | string;
}

export interface LogStat {
  quota: number;
  rpm: number;
  tpm: number;
}

/** One hour of one model's usage (the data dashboard). */
export interface QuotaData {
  created_at: number;
  model_name: string;
  user_id: number;
  username: string;
  token_used: number;
  count: number;
  quota: number;
}

const clean = (f: LogFilters) =>
  Object.fromEntries(Object.entries(f).filter(([, v]) => v !== '' && v !== undefined && v !== 0));

/** GET /api/log/ (admin) or /api/log/self/. */
export const listLogs = (admin: boolean, f: LogFilters, p: number, pageSize: number) =>
  request<Page<LogEntry>>('GET', admin ? '/api/log/' : '/api/log/self/', {
    params: { ...clean(admin ? f : { ...f, username: undefined, channel: undefined }), p, page_size: pageSize },
  });

/** GET /api/log/stat (admin) or /api/log/self/stat. */
export const logStat = (admin: boolean, f: LogFilters) =>
  request<LogStat>('GET', admin ? '/api/log/stat' : '/api/log/self/stat', {
    params: clean(admin ? f : { ...f, username: undefined, channel: undefined }),
  });

/** GET /api/log/export (admin) or /api/log/self/export: the logs of the filters as a CSV file. */
export const exportLogs = (admin: boolean, f: LogFilters) =>
  download(
    admin ? '/api/log/export' : '/api/log/self/export',
    clean(admin ? f : { ...f, username: undefined, channel: undefined }),
  );

/** The user summary shown on a username click (GET /api/user/{id}). */
export const userSummary = (id: number) => request<User>('GET', `/api/user/${id}`);

/** GET /api/data/ (admin, optional username) or /api/data/self. */
export const dashboardData = (admin: boolean, start: number, end: number, username = '') =>
  request<QuotaData[]>('GET', admin ? '/api/data/' : '/api/data/self', {
    params: { start_timestamp: start, end_timestamp: end, ...(admin && username ? { username } : {}) },
  });

/** Models the user may use (playground). */
export const userModels = () => request<string[]>('GET', '/api/user/models');

/** Group name -> label the user may use (playground). */
export const userGroups = () =>
  request<Record<string, string | { desc?: string; ratio?: number }>>('GET', '/api/user/self/groups');

/** Parses a log's `other` JSON (empty object when absent or malformed). */
export function parseOther(text: string | undefined): LogOther {
  if (!text) return {};
  try {
    const o = JSON.parse(text) as unknown;
    return o && typeof o === 'object' ? (o as LogOther) : {};
  } catch {
    return {};
  }
}
