import type { Page } from './admin-user.ts';
import { request } from './request.ts';

/** An API token (spec 02 section 3); the key comes without the sk- prefix. */
export interface Token {
  id: number;
  user_id: number;
  name: string;
  key: string;
  status: number;
  remain_quota: number;
  used_quota: number;
  unlimited_quota: boolean;
  created_time: number;
  accessed_time: number;
  expired_time: number;
  allow_ips: string;
  model_limits_enabled: boolean;
  model_limits: string;
  group: string;
  /** new-api's cross_group_retry (group auto): on to the next auto group when its channels fail. */
  cross_group_retry?: boolean;
  /** Requests per minute, tokens per minute and requests at once (0 no limit). */
  rpm_limit?: number;
  tpm_limit?: number;
  concurrency_limit?: number;
  /** Quota per day, week (from Monday) and month in the operator's time zone (0 none), and what was spent. */
  budget_daily?: number;
  budget_weekly?: number;
  budget_monthly?: number;
  budget_daily_used?: number;
  budget_weekly_used?: number;
  budget_monthly_used?: number;
}

export interface TokenInput {
  name?: string;
  remain_quota?: number;
  expired_time?: number;
  unlimited_quota?: boolean;
  model_limits_enabled?: boolean;
  model_limits?: string[] | string;
  allow_ips?: string;
  group?: string;
  cross_group_retry?: boolean;
  rpm_limit?: number;
  tpm_limit?: number;
  concurrency_limit?: number;
  budget_daily?: number;
  budget_weekly?: number;
  budget_monthly?: number;
  count?: number;
}

export const listTokens = (p: number, size: number) =>
  request<Page<Token>>('GET', '/api/token/', { params: { p, size } });

export const searchTokens = (keyword: string, token: string, p: number, size: number) =>
  request<Page<Token>>('GET', '/api/token/search', { params: { keyword, token, p, size } });

export const getToken = (id: number) => request<Token>('GET', `/api/token/${id}`);

/** POST /api/token/: `count` tokens at once; data lists them. */
export const createTokens = (body: TokenInput) => request<Token[]>('POST', '/api/token/', { body });

export const updateToken = (body: TokenInput & { id: number }) => request<Token>('PUT', '/api/token/', { body });

export const setTokenStatus = (id: number, status: number) =>
  request<Token>('PUT', '/api/token/', { params: { status_only: true }, body: { id, status } });

export const deleteToken = (id: number) => request<null>('DELETE', `/api/token/${id}/`);
