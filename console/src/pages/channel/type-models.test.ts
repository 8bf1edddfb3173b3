// @vitest-environment happy-dom
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureApi } from '../../api/request.ts';
import { cachedTypeModels, loadTypeModels, TYPE_MODELS_KEY } from './type-models.ts';

describe('model lists per channel type', () => {
  let server: Server;
  let served = { 1: ['gpt-4o-mini', 'gpt-4o'] } as Record<string, string[]>;
  beforeAll(async () => {
    server = createServer((req, res) => {
      // happy-dom enforces CORS: the page's origin is not the server's.
      res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Allow-Headers', 'New-Api-User, Content-Type');
      if (req.method === 'OPTIONS') {
        res.end();
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ success: true, message: '', data: served }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    configureApi({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('when the lists were loaded before, then the cached ones come first and the fresh ones replace them', async () => {
    localStorage.removeItem(TYPE_MODELS_KEY);
    const first: Record<string, string[]>[] = [];
    await loadTypeModels((m) => first.push(m));
    expect(first).toEqual([served]);
    expect(cachedTypeModels()).toEqual(served);

    const old = served;
    served = { 1: ['gpt-4.1'] };
    const second: Record<string, string[]>[] = [];
    await loadTypeModels((m) => second.push(m));
    expect(second).toEqual([old, served]);
    expect(cachedTypeModels()).toEqual(served);
  });

  it('when the cache holds something unreadable, then it is ignored', () => {
    localStorage.setItem(TYPE_MODELS_KEY, '{broken');
    expect(cachedTypeModels()).toBeUndefined();
  });
});
