import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Stack, startStack } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The foundation's round trip: gateway -> users (gRPC) for options, users -> Kafka -> gateway for
 * option changes, Redis for sessions and limits, all real servers.
 */
describe('gateway /api/status and /metrics', () => {
  let stack: Stack;
  beforeAll(async () => {
    // The fake Uptime Kuma below listens on loopback.
    stack = await startStack({ services: ['users', 'gateway'], env: { UPTIME_KUMA_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('when the status is asked, then the envelope carries the option defaults', async () => {
    const res = await fetch(`${stack.gatewayUrl}/api/status`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { success: boolean; data: Record<string, unknown> };
    expect(body.success).toBe(true);
    expect(body.data.system_name).toBe('AI Gateway');
    expect(body.data.quota_per_unit).toBe(500000);
    expect(body.data.enable_data_export).toBe(true);
    expect(body.data.enable_online_topup).toBe(false);
    expect(body.data.min_topup).toBe(1);
    expect(body.data.price).toBe(7.3);
    expect(body.data).not.toHaveProperty('smtp_token');
  });

  it('when metrics are scraped after a request, then the RED series count it by route', async () => {
    await fetch(`${stack.gatewayUrl}/api/status`);
    const text = await (await fetch(`http://127.0.0.1:${stack.ports.gateway.metrics}/metrics`)).text();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/status",status="200"\} \d+/);
    expect(text).toContain('http_request_duration_seconds_bucket');
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('when root saves the dashboard panels, then bad lists are refused with the reason, and every logged-in user reads the panels and the Uptime Kuma status fetched by the gateway', async () => {
    // A fake Uptime Kuma speaking its public status-page API.
    let pageCalls = 0;
    const kuma = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/status-page/main') {
        pageCalls++;
        res.end(
          JSON.stringify({
            config: { slug: 'main', title: 'Main', published: true, showTags: false },
            incident: null,
            publicGroupList: [
              { id: 1, name: 'Models', weight: 1, monitorList: [{ id: 7, name: 'OpenAI', type: 'http' }] },
              { id: 2, name: 'Site', weight: 2, monitorList: [{ id: 8, name: 'Console', type: 'http' }] },
            ],
            maintenanceList: [],
          }),
        );
      } else if (req.url === '/api/status-page/heartbeat/main') {
        res.end(
          JSON.stringify({
            heartbeatList: {
              '7': [
                { status: 0, time: '2025-01-01 00:00:00', msg: 'timeout', ping: null },
                { status: 1, time: '2025-01-01 00:01:00', msg: '', ping: 120 },
              ],
              '8': [{ status: 0, time: '2025-01-01 00:01:00', msg: 'down', ping: null }],
            },
            uptimeList: { '7_24': 0.9975, '8_24': 0.5 },
          }),
        );
      } else {
        res.statusCode = 404;
        res.end('{"ok":false,"msg":"Not Found"}');
      }
    });
    await new Promise<void>((r) => kuma.listen(0, '127.0.0.1', () => r()));
    try {
      const login = await fetch(`${stack.gatewayUrl}/api/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password: '123456' }),
      });
      const cookie = login.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const headers = { cookie, 'new-api-user': '1', 'content-type': 'application/json' };
      const put = async (key: string, value: string) => {
        const res = await fetch(`${stack.gatewayUrl}/api/option/`, {
          method: 'PUT',
          headers,
          body: JSON.stringify({ key, value }),
        });
        return { status: res.status, ...((await res.json()) as { success: boolean; message: string }) };
      };
      const get = async (path: string, h: Record<string, string> = headers) => {
        const res = await fetch(`${stack.gatewayUrl}${path}`, { headers: h });
        return { status: res.status, ...((await res.json()) as { success: boolean; data: never }) };
      };
      const bad = await put('console_setting.faq', '[{"question": "q"');
      expect(bad).toMatchObject({ success: false, message: '常见问答不是合法的 JSON' });
      expect(bad.status).toBeLessThan(500);
      const tooMany = JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ question: `q${i}`, answer: 'a' })));
      expect(await put('console_setting.faq', tooMany)).toMatchObject({
        success: false,
        message: '常见问答最多 100 条，当前 101 条',
      });
      const announcements = [
        { content: '旧公告', publishDate: '2025-01-01T00:00:00Z', type: 'default' },
        { content: '新公告', publishDate: '2025-06-01T00:00:00Z', type: 'success', extra: '说明' },
      ];
      expect(await put('console_setting.announcements', JSON.stringify(announcements))).toMatchObject({
        success: true,
      });
      expect(
        await put('console_setting.faq', '[{"question": "如何充值？", "answer": "在钱包页兑换。"}]'),
      ).toMatchObject({
        success: true,
      });
      expect(await put('console_setting.faq_enabled', 'false')).toMatchObject({ success: true });
      const base = `http://127.0.0.1:${(kuma.address() as AddressInfo).port}`;
      expect(
        await put(
          'console_setting.uptime_kuma_groups',
          JSON.stringify([{ categoryName: '服务', url: base, slug: 'main' }]),
        ),
      ).toMatchObject({ success: true });

      expect((await get('/api/console/panels', {})).status).toBe(401);
      const panels = (await get('/api/console/panels')).data as Record<string, unknown>;
      expect(panels).toMatchObject({
        announcements_enabled: true,
        faq_enabled: false,
        faq: [],
        uptime_kuma_enabled: true,
      });
      expect((panels.announcements as { content: string }[]).map((a) => a.content)).toEqual(['新公告', '旧公告']);

      expect((await get('/api/uptime/status', {})).status).toBe(401);
      const status = await get('/api/uptime/status');
      expect(status.data).toEqual([
        {
          categoryName: '服务',
          monitors: [
            { name: 'OpenAI', uptime: 0.9975, status: 1, group: 'Models' },
            { name: 'Console', uptime: 0.5, status: 0, group: 'Site' },
          ],
        },
      ]);
      // Cached briefly: a second look does not fetch the page again.
      await get('/api/uptime/status');
      expect(pageCalls).toBe(1);
    } finally {
      await new Promise<void>((r) => kuma.close(() => r()));
    }
  });

  it('when an unknown /api path is asked, then a 404 envelope answers', async () => {
    const res = await fetch(`${stack.gatewayUrl}/api/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ success: false, message: '接口不存在' });
  });

  it('when health is probed, then liveness answers on the public port, readiness on the ops port only', async () => {
    expect((await fetch(`${stack.gatewayUrl}/healthz`)).status).toBe(200);
    for (const path of ['/readyz', '/metrics']) {
      const pub = await fetch(`${stack.gatewayUrl}${path}`);
      expect(pub.status, path).toBe(404);
      expect(await pub.text()).not.toMatch(/redis|http_requests_total/);
    }
    const ready = await fetch(`http://127.0.0.1:${stack.ports.gateway.metrics}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.redis).toBe('ok');
  });
});

describe('option changes reach the gateway', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ services: ['users', 'gateway'] });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('when an option is saved in the users service, then /api/status shows it soon after (Kafka event)', async () => {
    const { createClient } = await import('@aigw/common');
    const { OptionsService } = await import('@aigw/proto/users/v1/users');
    const options = createClient(OptionsService, stack.env.USERS_ADDR!);
    try {
      await options.updateOption({ key: 'SystemName', value: '测试网关' });
      const name = await eventually(
        async () => {
          const body = (await (await fetch(`${stack.gatewayUrl}/api/status`)).json()) as {
            data: { system_name: string };
          };
          return body.data.system_name;
        },
        (n) => n === '测试网关',
        { timeoutMs: 10_000, intervalMs: 50, what: 'SystemName in /api/status' },
      );
      expect(name).toBe('测试网关');
    } finally {
      options.close();
    }
  });

  it('when an unknown option is asked over gRPC, then NOT_FOUND arrives as an AppError', async () => {
    const { AppError, createClient } = await import('@aigw/common');
    const { OptionsService } = await import('@aigw/proto/users/v1/users');
    const options = createClient(OptionsService, stack.env.USERS_ADDR!);
    try {
      const err = await options.getOption({ key: 'NoSuchOption' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as InstanceType<typeof AppError>).code).toBe('NOT_FOUND');
      const invalid = await options.updateOption({ key: 'TopupGroupRatio', value: '{' }).catch((e: unknown) => e);
      expect((invalid as InstanceType<typeof AppError>).code).toBe('INVALID_ARGUMENT');
      expect((invalid as Error).message).toBe('充值分组倍率不是合法的 JSON 字符串');
    } finally {
      options.close();
    }
  });
});
