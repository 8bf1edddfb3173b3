import { request } from './request.ts';
import type { ApiResponse, User } from './types.ts';

/** A user as /api answers it (spec 01 section 3). */
export interface UserRecord extends User {
  display_name: string;
  group: string;
  status: number;
  email: string;
  github_id: string;
  wechat_id: string;
  telegram_id: string;
  quota: number;
  used_quota: number;
  request_count: number;
  aff_code: string;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  inviter_id: number;
  /** Soft delete time; null while the account is live. */
  DeletedAt: string | null;
  /** The admin's note (new-api's remark); in admin answers only. */
  remark?: string;
}

export interface RegisterBody {
  username: string;
  password: string;
  password2: string;
  email?: string;
  verification_code?: string;
  aff_code?: string;
}

/** POST /api/user/register (the turnstile token goes in the query). */
export const register = (body: RegisterBody, turnstile = '') =>
  request<{ id: number; username: string }>('POST', '/api/user/register', { params: { turnstile }, body });

/** GET /api/verification: mails a 6-digit code. */
export const sendVerificationCode = (email: string, turnstile = '') =>
  request<null>('GET', '/api/verification', { params: { email, turnstile } });

/** GET /api/reset_password: mails a reset link. */
export const sendResetMail = (email: string, turnstile = '') =>
  request<null>('GET', '/api/reset_password', { params: { email, turnstile } });

/** POST /api/user/reset: data is the new password. */
export const confirmReset = (email: string, token: string) =>
  request<string>('POST', '/api/user/reset', { body: { email, token } });

export const getSelf = (): Promise<ApiResponse<UserRecord>> => request<UserRecord>('GET', '/api/user/self');

export const updateSelf = (body: {
  display_name?: string;
  username?: string;
  password?: string;
  original_password?: string;
}) => request<null>('PUT', '/api/user/self', { body });

export const deleteSelf = () => request<null>('DELETE', '/api/user/self');

/** GET /api/user/token: a new system access token. */
export const generateAccessToken = () => request<string>('GET', '/api/user/token');

export const getAffCode = () => request<string>('GET', '/api/user/aff');

export const transferAffQuota = (quota: number) =>
  request<{ aff_quota: number; quota: number }>('POST', '/api/user/aff_transfer', { body: { quota } });

export const getUserModels = () => request<string[]>('GET', '/api/user/models');

/** A group the user may pick: its description and the ratio they pay there ('自动' for auto). */
export interface UserGroup {
  ratio: number | string;
  desc: string;
}

/** GET /api/user/self/groups: group name -> what the user may pick (new-api's shape). */
export const getUserGroups = () => request<Record<string, UserGroup>>('GET', '/api/user/self/groups');

/** GET /api/oauth/state: a one-time state for the GitHub redirect. */
export const getOAuthState = () => request<string>('GET', '/api/oauth/state');

/** GET /api/oauth/github: message 'bind' for a binding, else data is the user. */
export const githubCallback = (code: string, state: string) =>
  request<UserRecord>('GET', '/api/oauth/github', { params: { code, state }, toast: false });

export const wechatLogin = (code: string) => request<UserRecord>('GET', '/api/oauth/wechat', { params: { code } });

export const wechatBind = (code: string) => request<null>('GET', '/api/oauth/wechat/bind', { params: { code } });

export const bindEmail = (email: string, code: string) =>
  request<null>('GET', '/api/oauth/email/bind', { params: { email, code } });

/** The chat-app widget's answer fields (id, first_name, ..., hash). */
export type TelegramAuth = Record<string, string | number>;

export const telegramLogin = (fields: TelegramAuth) =>
  request<UserRecord>('GET', '/api/oauth/telegram/login', { params: fields });

export const telegramBind = (fields: TelegramAuth) =>
  request<null>('GET', '/api/oauth/telegram/bind', { params: fields });
