/**
 * The money harness (the gateway's channel, token, redemption, wallet and pricing tests, the
 * relay's and tasks' tests that need the console API, bench/faults-webhook.ts): a stack on the
 * real servers, a browser-like API client (cookies, New-Api-User), users made through the users
 * service and logged in through the gateway, and gRPC clients for the relay-facing calls.
 */
import { randomInt } from 'node:crypto';
import { createClient } from '@aigw/common';
import { type ServiceName, type Stack, startStack } from '@aigw/local-stack/stack';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';

export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
  [extra: string]: unknown;
}

/** Starts users, channels, billing and the gateway (plus `extra`), with limits out of the way. */
export function startMoneyStack(extra: ServiceName[] = [], env: Record<string, string> = {}): Promise<Stack> {
  return startStack({
    services: ['users', 'channels', 'billing', ...extra, 'gateway'],
    env: { RATE_LIMIT_API: '1000000', RATE_LIMIT_CRITICAL: '100000', RATE_LIMIT_WEB: '100000', ...env },
  });
}

/** An API client with its own cookie jar that sends New-Api-User like the console. */
export class Api {
  private cookies = new Map<string, string>();
  userId: number | undefined;

  constructor(readonly baseUrl: string) {}

  async call<T = unknown>(method: string, path: string, body?: unknown, query?: Record<string, string>) {
    const url = new URL(`/api${path}`, this.baseUrl);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = {};
    if (this.userId !== undefined) headers['New-Api-User'] = String(this.userId);
    if (this.cookies.size > 0) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? '';
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const text = await res.text();
    let parsed: Envelope<T>;
    try {
      parsed = JSON.parse(text) as Envelope<T>;
    } catch {
      parsed = { success: false, message: `non-JSON answer: ${text.slice(0, 200)}` };
    }
    return { status: res.status, body: parsed };
  }

  get = <T = unknown>(path: string, query?: Record<string, string>) => this.call<T>('GET', path, undefined, query);
  post = <T = unknown>(path: string, body?: unknown, query?: Record<string, string>) =>
    this.call<T>('POST', path, body, query);
  put = <T = unknown>(path: string, body?: unknown, query?: Record<string, string>) =>
    this.call<T>('PUT', path, body, query);
  del = <T = unknown>(path: string) => this.call<T>('DELETE', path);

  async login(username: string, password: string): Promise<void> {
    const res = await this.post<{ id: number }>('/user/login', { username, password });
    if (!res.body.success || !res.body.data) throw new Error(`login ${username} failed: ${res.body.message}`);
    this.userId = res.body.data.id;
  }
}

/** Root logged in with the seeded default password. */
export async function rootApi(stack: Stack): Promise<Api> {
  const api = new Api(stack.gatewayUrl);
  await api.login('root', '123456');
  return api;
}

/** A new user (role 1 common, 10 admin) in `group`, logged in. */
export async function userApi(
  stack: Stack,
  opts: { role?: number; group?: string } = {},
): Promise<{ api: Api; id: number; username: string }> {
  const users = createClient(UsersService, stack.env.USERS_ADDR as string);
  const username = `u${Date.now().toString(36).slice(-5)}${randomInt(1000, 9999)}`.slice(0, 12);
  try {
    const { user } = await users.createUser({
      actor: { userId: 1, role: 100, username: 'root' },
      username,
      displayName: username,
      password: 'password123',
      role: opts.role ?? 1,
      group: opts.group ?? 'default',
    });
    const api = new Api(stack.gatewayUrl);
    await api.login(username, 'password123');
    return { api, id: user?.id ?? 0, username };
  } finally {
    users.close();
  }
}

/** Saves options through the users service (the owner), as root. */
export async function setOptions(stack: Stack, values: Record<string, string>): Promise<void> {
  const options = createClient(OptionsService, stack.env.USERS_ADDR as string);
  try {
    for (const [key, value] of Object.entries(values)) {
      await options.updateOption({ actor: { userId: 1, role: 100, username: 'root' }, key, value });
    }
  } finally {
    options.close();
  }
}
