import { serverText, serverTextOf } from '../locale/server-messages.ts';
import { tr } from '../locale/translate.ts';
import { clearStoredUser, getStoredUserId } from '../store/user-storage.ts';
import type { ApiResponse } from './types.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
export type NoticeLevel = 'error' | 'info' | 'success' | 'warning';
export type Notify = (level: NoticeLevel, text: string) => void;

/** Catalogue texts of spec 01 section 8. */
export const ApiMessages = {
  get tooManyRequests() {
    return tr('api.errorTooManyRequestsPlease');
  },
  get serverError() {
    return tr('api.errorInternalServerErrorPlease');
  },
  get demoOnly() {
    return tr('api.thisSiteIsADemo');
  },
  get errorPrefix() {
    return tr('api.error');
  },
} as const;

/** Where a 401 sends the browser. */
export const EXPIRED_LOGIN_PATH = '/login?expired=true';

export interface ApiHooks {
  /** Shows a toast; main.tsx installs Arco's Message. */
  notify: Notify;
  /** Called after a 401 cleared the stored user; the app navigates to EXPIRED_LOGIN_PATH. */
  onUnauthorized: (path: string) => void;
  /** Prefix for relative URLs; empty in the browser (same origin), absolute in tests. */
  baseUrl: string;
}

const hooks: ApiHooks = {
  notify: (level, text) => (level === 'error' ? console.error(text) : console.info(text)),
  onUnauthorized: (path) => {
    if (typeof window !== 'undefined') window.location.assign(path);
  },
  baseUrl: '',
};

/** Installs the toast, navigation and base-URL hooks; keeps the client free of UI and router code. */
export function configureApi(next: Partial<ApiHooks>): void {
  Object.assign(hooks, next);
}

/** The toast function currently installed, for callers that show their own messages. */
export function notify(level: NoticeLevel, text: string): void {
  hooks.notify(level, text);
}

export interface RequestOptions {
  /** Query parameters; undefined and null values are left out. */
  params?: Record<string, string | number | boolean | null | undefined>;
  /** JSON body. */
  body?: unknown;
  /** false: the caller shows its own error for HTTP failures and success:false answers (401 still redirects). */
  toast?: boolean;
  signal?: AbortSignal;
  /** Extra request headers (e.g. X-Security-Proof of a re-verification). */
  headers?: Record<string, string>;
}

function buildUrl(url: string, params: RequestOptions['params']): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value !== undefined && value !== null) query.append(key, String(value));
  }
  const text = query.toString();
  const full = `${hooks.baseUrl}${url}`;
  return text ? `${full}${full.includes('?') ? '&' : '?'}${text}` : full;
}

async function readEnvelope<T>(response: Response): Promise<ApiResponse<T> | undefined> {
  try {
    const body = (await response.json()) as unknown;
    if (body && typeof body === 'object' && 'success' in body) return body as ApiResponse<T>;
    return undefined;
  } catch {
    return undefined;
  }
}

/** Applies the error catalogue to an HTTP failure; returns the message shown (or that would be). */
function handleHttpError(status: number, serverMessage: string | undefined, toast: boolean): string {
  if (status === 401) {
    clearStoredUser(true);
    hooks.onUnauthorized(EXPIRED_LOGIN_PATH);
    return serverMessage ?? tr('common.notLoggedInOrThe');
  }
  let level: NoticeLevel = 'error';
  let text: string;
  if (status === 429) text = ApiMessages.tooManyRequests;
  else if (status === 500) text = ApiMessages.serverError;
  else if (status === 405) {
    text = ApiMessages.demoOnly;
    level = 'info';
  } else text = `${ApiMessages.errorPrefix}${serverMessage || tr('api.requestFailedStatus', { status })}`;
  if (toast) hooks.notify(level, text);
  return text;
}

/**
 * Calls the gateway and returns its {success, message, data} envelope. Never throws for HTTP or
 * network failures: those come back as success false after the catalogue was applied.
 */
export async function request<T = unknown>(
  method: HttpMethod,
  url: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const toast = options.toast !== false;
  const headers: Record<string, string> = { ...options.headers, 'New-Api-User': String(getStoredUserId()) };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(buildUrl(url, options.params), {
      method,
      headers,
      credentials: 'include',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    const text = `${ApiMessages.errorPrefix}${error instanceof Error ? error.message : String(error)}`;
    if (toast && !options.signal?.aborted) hooks.notify('error', text);
    return { success: false, message: text };
  }
  const envelope = await readEnvelope<T>(response);
  if (!response.ok) {
    return { success: false, message: handleHttpError(response.status, serverTextOf(envelope?.message), toast) };
  }
  if (!envelope) {
    const text = `${ApiMessages.errorPrefix}${tr('api.unreadableResponse')}`;
    if (toast) hooks.notify('error', text);
    return { success: false, message: text };
  }
  // The server's words in the console's language (issue 25): toasts and callers' messages alike.
  if (typeof envelope.message === 'string') envelope.message = serverText(envelope.message);
  if (!envelope.success && toast) hooks.notify('error', envelope.message);
  return envelope;
}

/**
 * GET of a file (a CSV export): its bytes and the name the server gave it, or the error message
 * after the catalogue was applied (an error comes as the JSON envelope, not as the file).
 */
export async function download(
  url: string,
  params: RequestOptions['params'],
): Promise<{ blob: Blob; name: string } | { message: string }> {
  let response: Response;
  try {
    response = await fetch(buildUrl(url, params), {
      headers: { 'New-Api-User': String(getStoredUserId()) },
      credentials: 'include',
    });
  } catch (error) {
    const text = `${ApiMessages.errorPrefix}${error instanceof Error ? error.message : String(error)}`;
    hooks.notify('error', text);
    return { message: text };
  }
  if (response.ok && !(response.headers.get('content-type') ?? '').includes('json')) {
    const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'download';
    return { blob: await response.blob(), name };
  }
  const envelope = await readEnvelope(response);
  const message = serverTextOf(envelope?.message);
  if (!response.ok) return { message: handleHttpError(response.status, message, true) };
  const text = message || `${ApiMessages.errorPrefix}${tr('api.unreadableResponse')}`;
  hooks.notify('error', text);
  return { message: text };
}

/** Shorthands for the common verbs. */
export const api = {
  get: <T>(url: string, options?: RequestOptions) => request<T>('GET', url, options),
  post: <T>(url: string, body?: unknown, options?: RequestOptions) => request<T>('POST', url, { ...options, body }),
  put: <T>(url: string, body?: unknown, options?: RequestOptions) => request<T>('PUT', url, { ...options, body }),
  delete: <T>(url: string, options?: RequestOptions) => request<T>('DELETE', url, options),
};
