import { request } from './request.ts';
import type { User } from './types.ts';

/** GET /api/user/2fa/status. */
export interface TwoFactorStatus {
  enabled: boolean;
  locked: boolean;
  backup_codes_remaining?: number;
}

/** POST /api/user/2fa/setup: shown once. */
export interface TwoFactorSetup {
  secret: string;
  /** otpauth://totp/... for the QR code. */
  qr_code_data: string;
  backup_codes: string[];
}

/** The answer of a password login when the user has 2FA on (new-api's shape). */
export interface PendingLogin {
  require_2fa: true;
  flow_token: string;
  expires_at: number;
}

export const isPendingLogin = (data: unknown): data is PendingLogin =>
  typeof data === 'object' && data !== null && (data as { require_2fa?: unknown }).require_2fa === true;

export const getTwoFactorStatus = () => request<TwoFactorStatus>('GET', '/api/user/2fa/status');
export const setupTwoFactor = () => request<TwoFactorSetup>('POST', '/api/user/2fa/setup');
export const enableTwoFactor = (code: string) => request<null>('POST', '/api/user/2fa/enable', { body: { code } });
export const disableTwoFactor = (code: string) => request<null>('POST', '/api/user/2fa/disable', { body: { code } });
export const regenerateBackupCodes = (code: string) =>
  request<{ backup_codes: string[] }>('POST', '/api/user/2fa/backup_codes', { body: { code } });

/** POST /api/user/login/2fa: the second step of a password login; data is the user. */
export const loginTwoFactor = (code: string, flowToken: string) =>
  request<User>('POST', '/api/user/login/2fa', { body: { code, flow_token: flowToken } });

/** DELETE /api/user/:id/2fa (admin). */
export const adminDisableTwoFactor = (id: number) => request<null>('DELETE', `/api/user/${id}/2fa`);

/** One login session (GET /api/user/self/sessions). */
export interface LoginSession {
  sid: string;
  current: boolean;
  login_method: string;
  ip: string;
  user_agent: string;
  created_at: number;
  last_active_at: number;
  expires_at: number;
}

export const listSessions = () => request<LoginSession[]>('GET', '/api/user/self/sessions');
export const revokeSession = (sid: string) =>
  request<{ revoked_sid: string; current: boolean }>('DELETE', `/api/user/self/sessions/${encodeURIComponent(sid)}`);
export const revokeOtherSessions = () =>
  request<{ revoked_count: number }>('POST', '/api/user/self/sessions/revoke-others');

/** GET /api/user/checkin (new-api's shape). */
export interface CheckinStatus {
  enabled: boolean;
  min_quota: number;
  max_quota: number;
  stats: {
    total_quota: number;
    total_checkins: number;
    checkin_count: number;
    checked_in_today: boolean;
    records: { checkin_date: string; quota_awarded: number }[];
  };
}

export const getCheckin = (month = '') =>
  request<CheckinStatus>('GET', '/api/user/checkin', { params: { month: month || undefined }, toast: false });

/** POST /api/user/checkin (the turnstile token goes in the query). */
export const doCheckin = (turnstile = '') =>
  request<{ quota_awarded: number; checkin_date: string }>('POST', '/api/user/checkin', { params: { turnstile } });
