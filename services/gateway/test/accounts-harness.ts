/**
 * Shared pieces of the accounts integration tests: a stack (users, channels, billing, gateway on
 * the real servers), an HTTP client that keeps cookies like a browser and sends New-Api-User like
 * the console, a real SMTP server that keeps what it receives, and small local servers speaking
 * the third parties' protocols (GitHub OAuth, the messaging-app server, Turnstile).
 */
import { randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ServiceName, type Stack, startStack } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
}

export interface Answer<T = unknown> {
  status: number;
  body: Envelope<T>;
  headers: Headers;
}

/** Starts the services the accounts routes need (plus `extra`); extra env goes to every service. */
export function startAccountsStack(env: Record<string, string> = {}, extra: ServiceName[] = []): Promise<Stack> {
  return startStack({
    services: ['users', 'channels', 'billing', ...extra, 'gateway'],
    env: { CREDIT_RETRY_MS: '300', ...env },
  });
}

let ipCounter = randomInt(1, 200);

/**
 * A browser-like client: its own cookie jar and its own client address (X-Forwarded-For, which
 * the gateway trusts from loopback), so that per-IP rate limits of one test do not touch another.
 */
export class Client {
  readonly ip: string;
  private cookies = new Map<string, string>();
  /** The id sent as New-Api-User (the console sends the stored user's id). */
  userId: number | undefined;

  constructor(
    readonly baseUrl: string,
    ip?: string,
  ) {
    ipCounter += 1;
    this.ip = ip ?? `10.${randomInt(0, 255)}.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 1}`;
  }

  async call<T = unknown>(
    method: string,
    path: string,
    opts: { body?: unknown; headers?: Record<string, string>; query?: Record<string, string> } = {},
  ): Promise<Answer<T>> {
    const url = new URL(`/api${path}`, this.baseUrl);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { 'X-Forwarded-For': this.ip, ...opts.headers };
    if (this.userId !== undefined && !('New-Api-User' in headers)) headers['New-Api-User'] = String(this.userId);
    if (this.cookies.size > 0) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(url, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let body: Envelope<T>;
    try {
      body = JSON.parse(text) as Envelope<T>;
    } catch {
      body = { success: false, message: `non-JSON answer: ${text.slice(0, 200)}` };
    }
    return { status: res.status, body, headers: res.headers };
  }

  get = <T = unknown>(path: string, query?: Record<string, string>, headers?: Record<string, string>) =>
    this.call<T>('GET', path, { query, headers });
  post = <T = unknown>(path: string, body?: unknown, query?: Record<string, string>) =>
    this.call<T>('POST', path, { body, query });
  put = <T = unknown>(path: string, body?: unknown) => this.call<T>('PUT', path, { body });
  del = <T = unknown>(path: string) => this.call<T>('DELETE', path);

  hasSession(): boolean {
    return this.cookies.has('session');
  }

  /** A cookie's value, as the client holds it. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** Logs in; on success the client sends the user's id from then on, like the console. */
  async login(username: string, password: string): Promise<Answer<{ id: number; role: number }>> {
    const res = await this.post<{ id: number; role: number }>('/user/login', { username, password });
    if (res.body.success && res.body.data) this.userId = res.body.data.id;
    return res;
  }
}

/** A unique, valid username (at most 12 characters). */
export function uniqueUsername(prefix = 'u'): string {
  return `${prefix}${Date.now().toString(36).slice(-5)}${randomInt(1000, 9999)}`.slice(0, 12);
}

/** Registers and logs in a new common user. */
export async function newUser(
  baseUrl: string,
  password = 'password123',
): Promise<{ client: Client; id: number; username: string }> {
  const client = new Client(baseUrl);
  const username = uniqueUsername();
  const reg = await client.post('/user/register', { username, password, password2: password });
  if (!reg.body.success) throw new Error(`register failed: ${reg.body.message}`);
  const login = await client.login(username, password);
  if (!login.body.success) throw new Error(`login failed: ${login.body.message}`);
  return { client, id: login.body.data!.id, username };
}

/** Root, logged in with the seeded default password. */
export async function rootClient(baseUrl: string): Promise<Client> {
  const root = new Client(baseUrl);
  const res = await root.login('root', '123456');
  if (!res.body.success) throw new Error(`root login failed: ${res.body.message}`);
  return root;
}

/** Saves options through the API as root and fails loudly when one is refused. */
export async function setOptions(root: Client, values: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(values)) {
    const res = await root.put('/option/', { key, value });
    if (!res.body.success) throw new Error(`option ${key} refused: ${res.body.message}`);
  }
}

/** A real SMTP server (smtp-server) that keeps every message it receives, parsed (mailparser). */
export async function startMailServer(): Promise<{
  port: number;
  mails: ParsedMail[];
  logins: { username: string; password: string }[];
  /** The newest mail to `to` whose subject contains `subject`. */
  waitFor(to: string, subject?: string, timeoutMs?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}> {
  const mails: ParsedMail[] = [];
  const logins: { username: string; password: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '' });
      cb(null, { user: auth.username });
    },
    onData(stream, _session, cb) {
      simpleParser(stream)
        .then((mail) => {
          mails.push(mail);
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const toOf = (m: ParsedMail) =>
    (Array.isArray(m.to) ? m.to : m.to ? [m.to] : []).flatMap((a) => a.value.map((v) => v.address));
  return {
    port,
    mails,
    logins,
    async waitFor(to, subject = '', timeoutMs = 10_000) {
      const found = await eventually(
        () => [...mails].reverse().find((m) => toOf(m).includes(to) && (m.subject ?? '').includes(subject)),
        (m) => m !== undefined,
        { timeoutMs, intervalMs: 50, what: `a mail to ${to}${subject ? ` about "${subject}"` : ''}` },
      );
      return found as ParsedMail;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

/** A small HTTP server for a third party's endpoints; `requests` records what it was asked. */
export async function startFakeServer(routes: Record<string, Handler>): Promise<{
  url: string;
  requests: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}> {
  const requests: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
      const route = routes[`${req.method} ${path}`];
      if (!route) {
        res.writeHead(404).end('{}');
        return;
      }
      route(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const json = (res: ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
};
