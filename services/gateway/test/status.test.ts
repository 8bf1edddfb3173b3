import { eventually } from '@aigw/common/testing';
import { type Stack, startStack } from '@aigw/local-stack/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The foundation's round trip: gateway -> users (gRPC) for options, users -> Kafka -> gateway for
 * option changes, Redis for sessions and limits, all real servers.
 */
describe('gateway /api/status and /metrics', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ services: ['users', 'gateway'] });
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
