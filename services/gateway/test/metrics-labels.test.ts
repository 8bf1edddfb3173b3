/**
 * The gateway's HTTP metrics name each route once: a request answered by the route and one
 * refused by its guard (answered by the app-level error handler) both count under
 * `/api/user/topup`, never under a bare `/user/topup`. And every service reports build_info.
 */
import type { Stack } from '@aigw/local-stack/stack';
import { Api, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('gateway route labels', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startMoneyStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const scrape = () => fetch(`http://127.0.0.1:${stack.ports.gateway.metrics}/metrics`).then((r) => r.text());
  const count = (text: string, route: string, status: string) =>
    text
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('http_requests_total{') &&
          l.includes(`route="${route}"`) &&
          l.includes(`status="${status}"`) &&
          l.includes('method="POST"'),
      )
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

  it('when /api/user/topup is refused by its guard and answered by its handler, then both count under one route label', async () => {
    const before = await scrape();
    const anonymous = new Api(stack.gatewayUrl);
    const refused = await anonymous.post('/user/topup', { key: 'nope' });
    expect(refused.status).toBe(401);
    const { api } = await userApi(stack);
    const answered = await api.post('/user/topup', { key: 'not-a-code' });
    expect(answered.status).toBe(200);
    expect(answered.body.success).toBe(false);
    const after = await scrape();
    expect(count(after, '/api/user/topup', '401') - count(before, '/api/user/topup', '401')).toBe(1);
    expect(count(after, '/api/user/topup', '200') - count(before, '/api/user/topup', '200')).toBe(1);
    expect(after).not.toContain('route="/user/topup"');
  });

  it('when scraped, then build_info has a series for each service of the process', async () => {
    const text = await scrape();
    for (const svc of ['users', 'channels', 'billing', 'gateway'])
      expect(text).toMatch(
        new RegExp(`^build_info\\{service="${svc}",version="[^"]+",node_version="v[0-9.]+"\\} 1$`, 'm'),
      );
  });
});
