import express from 'express';
import { describe, expect, it } from 'vitest';
import type { RouteDeps } from './deps.ts';
import { requireRole } from './middleware/auth.ts';
import { openApiDocument } from './openapi.ts';
import { routeTable } from './route-table.ts';
import { mountRoutes } from './routes/index.ts';

/** The routes as mounted, with deps that are never called while mounting. */
function table() {
  const api = express.Router();
  const never = new Proxy({}, { get: () => () => Promise.reject(new Error('not in this test')) });
  const deps = {
    config: { COOKIE_SECURE: 'false', LOGIN_FREE_FAILURES: 5 },
    logger: never,
    redis: never,
    options: never,
    clients: new Proxy({}, { get: () => never }),
    sessions: never,
    guard: {
      user: requireRole(1, async () => undefined),
      admin: requireRole(10, async () => undefined),
      root: requireRole(100, async () => undefined),
    },
    critical: (_req: unknown, _res: unknown, next: () => void) => next(),
    startTime: 0,
  } as unknown as RouteDeps;
  mountRoutes(api, deps);
  return routeTable(api);
}

describe('the /api route table and its OpenAPI document', () => {
  it('when the routes are read, then each carries its guard and every route with input has a validator', () => {
    const routes = table();
    const find = (m: string, p: string) => routes.find((r) => r.method === m && r.path === p);
    expect(find('GET', '/status')?.minRole).toBe(0);
    expect(find('GET', '/user/self')?.minRole).toBe(1);
    expect(find('DELETE', '/redemption/:id')?.minRole).toBe(10);
    expect(find('PUT', '/option/')?.minRole).toBe(100);
    expect(find('DELETE', '/log/')?.minRole).toBe(100);
    expect(find('POST', '/user/login')?.shapes?.body).toBeDefined();
    for (const r of routes.filter((x) => x.path.includes(':'))) expect(r.shapes?.params, r.path).toBeDefined();
    for (const r of routes.filter((x) => ['POST', 'PUT'].includes(x.method))) {
      // Epay's notifications (top-up and subscription) are form posts checked by their signature;
      // the others act on their path alone.
      const noBody = [
        '/channel/fix',
        '/option/rest_model_ratio',
        '/user/epay/notify',
        '/subscription/epay/notify',
        '/subscription/admin/user_subscriptions/:id/invalidate',
      ];
      if (!noBody.includes(r.path)) expect(r.shapes?.body, `${r.method} ${r.path}`).toBeDefined();
    }
  });

  it('when the document is built, then it is OpenAPI 3.1 with integer ids in paths', () => {
    const doc = openApiDocument(table(), 'test') as {
      openapi: string;
      paths: Record<string, Record<string, { parameters: { name: string; schema: unknown }[]; 'x-min-role': number }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const del = doc.paths['/api/redemption/{id}']?.delete;
    expect(del?.['x-min-role']).toBe(10);
    expect(JSON.stringify(del?.parameters)).toContain('"name":"id"');
    expect(Object.keys(doc.paths).length).toBeGreaterThan(50);
  });
});
