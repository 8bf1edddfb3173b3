// @vitest-environment happy-dom
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getStoredUser, setStoredUser } from '../store/user-storage.ts';
import { ApiMessages, configureApi, download, EXPIRED_LOGIN_PATH, type NoticeLevel, request } from './request.ts';

interface Seen {
  method: string;
  url: string;
  userHeader: string | undefined;
  body: string;
}

/** A real HTTP server answering each catalogue case; CORS-enabled because the DOM's origin differs. */
function startServer(seen: Seen[]): Promise<Server> {
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Access-Control-Allow-Headers', 'New-Api-User, Content-Type');
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE');
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        userHeader: req.headers['new-api-user'] as string,
        body,
      });
      const path = (req.url ?? '').split('?')[0];
      switch (path) {
        case '/api/unauthorized':
          return json(res, 401, { success: false, message: '无权进行此操作，未登录且未提供 access token' });
        case '/api/limited':
          return json(res, 429, { success: false, message: 'too many' });
        case '/api/broken':
          return json(res, 500, { success: false, message: 'boom' });
        case '/api/demo':
          res.writeHead(405);
          return res.end();
        case '/api/missing':
          return json(res, 404, { success: false, message: '接口不存在' });
        case '/api/refused':
          return json(res, 200, { success: false, message: '令牌名称过长' });
        case '/api/file':
          res.writeHead(200, {
            'Content-Type': 'text/csv; charset=utf-8',
            'Content-Disposition': 'attachment; filename="logs-20261127-114400.csv"',
            'Access-Control-Expose-Headers': 'Content-Disposition',
          });
          return res.end('\uFEFFid,content\r\n1,你好\r\n');
        case '/api/ok':
          return json(res, 200, { success: true, message: '', data: { answer: 42 } });
        default:
          return json(res, 404, {});
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('request applies the error catalogue of spec 01 section 8', () => {
  const seen: Seen[] = [];
  const notices: { level: NoticeLevel; text: string }[] = [];
  const redirects: string[] = [];
  let server: Server;

  beforeAll(async () => {
    server = await startServer(seen);
    const { port } = server.address() as AddressInfo;
    configureApi({
      baseUrl: `http://127.0.0.1:${port}`,
      notify: (level, text) => notices.push({ level, text }),
      onUnauthorized: (path) => redirects.push(path),
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
    notices.length = 0;
    redirects.length = 0;
    localStorage.clear();
    setStoredUser({ id: 7, username: 'alice', role: 1 });
  });

  it('when the server answers 401, then the stored user is cleared and the app is sent to /login?expired=true', async () => {
    const res = await request('GET', '/api/unauthorized');
    expect(res.success).toBe(false);
    expect(getStoredUser()).toBeNull();
    expect(localStorage.getItem('user')).toBeNull();
    expect(redirects).toEqual([EXPIRED_LOGIN_PATH]);
    expect(EXPIRED_LOGIN_PATH).toBe('/login?expired=true');
  });

  it('when the server answers 429, then 错误：请求次数过多，请稍后再试！ is shown', async () => {
    const res = await request('GET', '/api/limited');
    expect(res).toMatchObject({ success: false, message: ApiMessages.tooManyRequests });
    expect(notices).toEqual([{ level: 'error', text: '错误：请求次数过多，请稍后再试！' }]);
  });

  it('when the server answers 500, then 错误：服务器内部错误，请联系管理员！ is shown', async () => {
    await request('POST', '/api/broken', { body: { a: 1 } });
    expect(notices).toEqual([{ level: 'error', text: '错误：服务器内部错误，请联系管理员！' }]);
  });

  it('when the server answers 405, then 本站仅作演示之用，无服务端！ is shown', async () => {
    await request('PUT', '/api/demo');
    expect(notices).toEqual([{ level: 'info', text: '本站仅作演示之用，无服务端！' }]);
  });

  it('when another HTTP error carries a message, then 错误：<message> is shown', async () => {
    await request('GET', '/api/missing');
    expect(notices).toEqual([{ level: 'error', text: '错误：接口不存在' }]);
    expect(redirects).toEqual([]);
    expect(getStoredUser()?.id).toBe(7);
  });

  it('when the envelope says success false, then the server message is toasted', async () => {
    const res = await request('GET', '/api/refused');
    expect(res).toEqual({ success: false, message: '令牌名称过长' });
    expect(notices).toEqual([{ level: 'error', text: '令牌名称过长' }]);
  });

  it('when a file is downloaded, then its bytes and the server name come back; an error envelope is toasted', async () => {
    const file = await download('/api/file', { type: 3 });
    expect(seen[0]).toMatchObject({ url: '/api/file?type=3', userHeader: '7' });
    if (!('blob' in file)) throw new Error(file.message);
    expect(file.name).toBe('logs-20261127-114400.csv');
    expect(new Uint8Array(await file.blob.arrayBuffer())).toEqual(
      new TextEncoder().encode('\uFEFFid,content\r\n1,你好\r\n'),
    );
    expect(await download('/api/refused', {})).toEqual({ message: '令牌名称过长' });
    expect(notices).toEqual([{ level: 'error', text: '令牌名称过长' }]);
  });

  it('when the console is in English, then the server message is toasted and returned in English', async () => {
    localStorage.setItem('lang', 'en-US');
    expect(await request('GET', '/api/refused')).toEqual({ success: false, message: 'The token name is too long' });
    await request('GET', '/api/missing');
    expect(await download('/api/refused', {})).toEqual({ message: 'The token name is too long' });
    expect(notices).toEqual([
      { level: 'error', text: 'The token name is too long' },
      { level: 'error', text: `${ApiMessages.errorPrefix}No such endpoint` },
      { level: 'error', text: 'The token name is too long' },
    ]);
    expect(ApiMessages.errorPrefix).not.toBe('错误：');
  });

  it('when the caller opts out, then success false and HTTP errors are not toasted', async () => {
    await request('GET', '/api/refused', { toast: false });
    await request('GET', '/api/broken', { toast: false });
    expect(notices).toEqual([]);
  });

  it('when the call succeeds, then the envelope comes back and the user id header and query were sent', async () => {
    const res = await request<{ answer: number }>('GET', '/api/ok', {
      params: { p: 2, keyword: 'a b', none: undefined },
    });
    expect(res).toEqual({ success: true, message: '', data: { answer: 42 } });
    expect(notices).toEqual([]);
    const call = seen.find((s) => s.url.startsWith('/api/ok'));
    expect(call?.userHeader).toBe('7');
    expect(call?.url).toBe('/api/ok?p=2&keyword=a+b');
  });

  it('when nobody is logged in, then the header carries -1', async () => {
    localStorage.clear();
    await request('POST', '/api/ok', { body: { x: 1 } });
    const call = seen.find((s) => s.url === '/api/ok');
    expect(call?.userHeader).toBe('-1');
    expect(call?.body).toBe('{"x":1}');
  });

  it('when the server cannot be reached, then 错误：<reason> is shown', async () => {
    configureApi({ baseUrl: 'http://127.0.0.1:1' });
    try {
      const res = await request('GET', '/api/ok');
      expect(res.success).toBe(false);
      expect(notices).toHaveLength(1);
      expect(notices[0]?.text.startsWith('错误：')).toBe(true);
    } finally {
      const { port } = server.address() as AddressInfo;
      configureApi({ baseUrl: `http://127.0.0.1:${port}` });
    }
  });
});
